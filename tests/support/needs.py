"""What the dev install declares (pyproject's `dev` extra: ncu_report, torch, pandas, dask;
the `tuiperf` console script; tmux, which `make test` installs): a test that needs one
skips where it is missing on a developer's machine, but fails in CI (`CI` set, as .ci/run
runs) or with TUIPERF_STRICT_DEPS=1, so a broken install never goes green.

Use these instead of `pytest.importorskip` / `skipif(... is None)`; at module level too."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

_FALSE = ("", "0", "false", "no", "off")


def strict() -> bool:
    """Whether a missing declared dependency fails the run instead of skipping."""
    return any(os.environ.get(v, "").strip().lower() not in _FALSE
               for v in ("CI", "TUIPERF_STRICT_DEPS"))  # fmt: skip


def missing(what: str, why: str) -> NoReturn:
    msg = f"{what} is missing ({why}); the dev install declares it (make test installs it)"
    if strict():
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg, allow_module_level=True)


def module(name: str) -> ModuleType:
    """`import name`, or skip (fail in CI) when it cannot be imported."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing(f"Python module {name!r}", str(e))


def program(name: str) -> str:
    """The path of program `name` on PATH, or skip (fail in CI)."""
    path = shutil.which(name)
    if path is None:
        missing(f"program {name!r}", "not on PATH")
    return path


def file(path: Path, what: str) -> Path:
    """`path` (a file the install puts there, such as a console script), or skip/fail."""
    if not path.exists():
        missing(what, f"no {path}")
    return path
