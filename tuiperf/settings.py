"""Every environment variable tuiperf reads, read here and nowhere else.

Each accessor reads `os.environ` when it is called, never at import, so a test that sets a
variable (pytest's monkeypatch) sees it take effect. The rest of the package calls these
functions; `tests/unit/test_settings.py` fails on any other module that touches `os.environ`
or `os.getenv`.

Variable (accessor): effect.

- TUIPERF_CACHE_DIR (`cache_dir`): where the conversion cache lives; else
  `$XDG_CACHE_HOME/tuiperf` (XDG_CACHE_HOME: `xdg_cache_home`), else `~/.cache/tuiperf`.
- TUIPERF_CONFIG_DIR (`config_dir`): where the viewer keeps each report's lane layout;
  else `$XDG_CONFIG_HOME/tuiperf` (XDG_CONFIG_HOME), else `~/.config/tuiperf`.
- TUIPERF_CACHE_MAX (`cache_max`): the cache's size cap (500M, 20G); past it, after a
  conversion, the least recently used entries are removed (`tuiperf.load.cache.entries`).
- TUIPERF_NO_CACHE (`no_cache`): set, non-empty: convert every time, write no cache.
- TUIPERF_DIRECT_IO (`direct_io`): set and not 0: cache files written with O_DIRECT where the
  file system allows it.
- TUIPERF_NO_PAGE_READER (`no_page_reader`): set: SQLite exports are read through sqlite3
  only, not from their B-tree pages.
- TUIPERF_NSYS (`nsys_path`), then NSYS (`nsys_variables` gives both): the nsys to run;
  TUIPERF_NSYS set but not runnable means none, on purpose.
- NCU_PYTHON_PATH (`ncu_python_path`): a folder holding NVIDIA's `ncu_report` module.
- TUIPERF_ASCII, TERM, LC_ALL, LC_CTYPE, LANG (`terminal`): ASCII glyphs or Unicode in the
  viewer (`tuiperf.tui.glyphs.wants_ascii`).
- DASK_SCHEDULER_ADDRESS (`dask_scheduler`): the Dask scheduler `tuiperf ranks` uses.
- COLUMNS (`columns`): the width of text output that is not a terminal (a pipe, a file);
  unset, such output neither wraps nor cuts (`tuiperf.report.plain`).
- TUIPERF_PROFILE, TUIPERF_PROFILE_STEPS, TUIPERF_PROFILE_OUT (`profile_mode`,
  `profile_steps`, `profile_out`): set by `tuiperf profile` for `tuiperf.torch` in the
  profiled program.

Two functions touch the environment as a whole: `child_environment` (the profiled program's
environment, a copy) and `limit_blas_threads` (the entry point's one process-wide default).
This module imports nothing from tuiperf: every floor may use it, `tuiperf.torch` included.
"""

from __future__ import annotations

import os
from pathlib import Path

#: `tuiperf profile` -> `tuiperf.torch` in the profiled program: "torch" or "nsys"
PROFILE_MODE = "TUIPERF_PROFILE"
#: ... how many steps `profile_steps` records
PROFILE_STEPS = "TUIPERF_PROFILE_STEPS"
#: ... where the torch.profiler trace goes
PROFILE_OUT = "TUIPERF_PROFILE_OUT"

#: the variables `terminal` returns (`tuiperf.tui.glyphs.wants_ascii` reads them)
TERMINAL_VARIABLES = ("TUIPERF_ASCII", "TERM", "LC_ALL", "LC_CTYPE", "LANG")


def _get(name: str) -> str:
    return os.environ.get(name, "")


def cache_dir() -> Path | None:
    """$TUIPERF_CACHE_DIR (user-expanded), None when unset or empty."""
    value = _get("TUIPERF_CACHE_DIR")
    return Path(value).expanduser() if value else None


def xdg_cache_home() -> Path | None:
    """$XDG_CACHE_HOME (user-expanded), None when unset or empty."""
    value = _get("XDG_CACHE_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path | None:
    """The folder for the viewer's remembered lane layouts: $TUIPERF_CONFIG_DIR, else
    $XDG_CONFIG_HOME/tuiperf, else ~/.config/tuiperf (None without a home folder)."""
    value = _get("TUIPERF_CONFIG_DIR")
    if value:
        return Path(value).expanduser()
    xdg = _get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg).expanduser() / "tuiperf"
    home = Path("~").expanduser()
    return None if str(home) == "~" else home / ".config" / "tuiperf"


def cache_max() -> str | None:
    """$TUIPERF_CACHE_MAX as written (parsed by `tuiperf.load.cache.usage.parse_size`), None
    when unset or empty."""
    return _get("TUIPERF_CACHE_MAX").strip() or None


def no_cache() -> bool:
    """$TUIPERF_NO_CACHE is set to anything non-empty."""
    return bool(_get("TUIPERF_NO_CACHE"))


def direct_io() -> bool:
    """$TUIPERF_DIRECT_IO is set and not "0"."""
    return _get("TUIPERF_DIRECT_IO") not in ("", "0")


def no_page_reader() -> bool:
    """$TUIPERF_NO_PAGE_READER is set to anything non-empty."""
    return bool(_get("TUIPERF_NO_PAGE_READER"))


def nsys_variables() -> list[tuple[str, str]]:
    """($TUIPERF_NSYS, value), then ($NSYS, value): those set and non-empty, in that order."""
    return [(var, value) for var in ("TUIPERF_NSYS", "NSYS") if (value := _get(var))]


def nsys_path() -> str | None:
    """$TUIPERF_NSYS, None when unset or empty."""
    return _get("TUIPERF_NSYS") or None


def ncu_python_path() -> str | None:
    """$NCU_PYTHON_PATH, None when unset or empty."""
    return _get("NCU_PYTHON_PATH") or None


def terminal() -> dict[str, str]:
    """The variables that decide the viewer's glyphs (TERMINAL_VARIABLES), those set."""
    return {var: os.environ[var] for var in TERMINAL_VARIABLES if var in os.environ}


def columns() -> int | None:
    """$COLUMNS as a positive number of columns, None when unset or not one."""
    value = _get("COLUMNS").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def dask_scheduler() -> str | None:
    """$DASK_SCHEDULER_ADDRESS, None when unset or empty."""
    return _get("DASK_SCHEDULER_ADDRESS") or None


def profile_mode() -> str:
    """$TUIPERF_PROFILE: "torch", "nsys", or "" outside `tuiperf profile`."""
    return _get(PROFILE_MODE)


def profile_steps() -> int | None:
    """$TUIPERF_PROFILE_STEPS as a number, None when unset or not all digits."""
    value = _get(PROFILE_STEPS)
    return int(value) if value.isdigit() else None


def profile_out() -> str | None:
    """$TUIPERF_PROFILE_OUT, None when unset or empty."""
    return _get(PROFILE_OUT) or None


def child_environment() -> dict[str, str]:
    """A copy of this process's environment, for a program tuiperf starts."""
    return dict(os.environ)


def limit_blas_threads() -> None:
    """No OpenBLAS worker threads spinning idle (tuiperf does no linear algebra): sets
    OPENBLAS_NUM_THREADS=1 unless the user set it. Only the entry point calls this, before
    numpy is first imported (OpenBLAS reads it then)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def physical_memory() -> int:
    """The machine's memory in bytes (0 where the system does not say): what the cache's
    size limits for big tables are fractions of (load/cache/store.py, lane_cache.py)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0
