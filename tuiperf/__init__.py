"""tuiperf: GPU profiles (Nsight Systems, Nsight Compute, torch.profiler) in the terminal.

The package is built in floors, top to bottom; a module imports only from its own floor
and the floors below (`lint-imports` checks it, imports inside functions included):

    cli                    the entry point: arguments to a command
    commands/              one module per subcommand; `open` starts the viewer
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

__version__ = "0.1.0"
