"""tuiperf: GPU profiles (Nsight Systems, Nsight Compute, torch.profiler) in the terminal.

The package is built in floors, top to bottom; a module imports only from its own floor
and the floors below (`lint-imports` checks it, imports inside functions included):

    cli                    the entry point: arguments to a command
    commands/              one module per subcommand; `open` starts the viewer
    api                    the Python API: `tuiperf.open(path)` for notebooks and scripts
    tui/                   the viewer, the only code that imports Textual
    export | report        the writers (files, CSV, JSON) | Rich tables for the terminal
    analysis/              rules, findings and the step budget
    summaries/             the `nsys stats`-style reports
    load/                  readers: a report file to a Trace or KernelMetrics; the cache
    model/                 Trace, KernelMetrics and what is computed from them alone
    errors | schema | bundled

The readers sit above the model because they build its objects; the viewer sits below
the commands because `open` starts it, and it needs no command to run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tuiperf.api import Profile as Profile
    from tuiperf.api import open as open

__version__ = "0.1.0"
__all__ = ["Profile", "__version__", "open"]

#: names this package offers from tuiperf.api, imported on first use (PEP 562): a bare
#: `import tuiperf` (and so `tuiperf --help`) loads neither pyarrow nor the readers
_API = ("open", "Profile")


def __getattr__(name: str) -> Any:
    if name in _API:
        from tuiperf import api

        return getattr(api, name)
    raise AttributeError(f"module 'tuiperf' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
