"""Running the real CLI in a subprocess and checking how it fails: one line, the exit
code, the input and the cache untouched."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

#: this Python, absolute: `sys.executable` is relative when Python was found through a
#: relative PATH entry (`PATH=.venv/bin:...`), and a subprocess with another cwd (or a test
#: that changes cwd) would not find it
PYTHON = os.path.abspath(sys.executable)


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [PYTHON, "-m", "tuiperf", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=full_env,
        timeout=120,
    )


def digest(path: Path) -> str:
    if path.is_dir():
        return "".join(digest(p) for p in sorted(path.iterdir()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_one_line_error(res: subprocess.CompletedProcess[str], code: int) -> None:
    assert res.returncode == code, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("tuiperf: error: ")
    assert "Traceback" not in res.stderr
    # the CLI's last resort for an exception nobody turned into a clear error: a bug
    assert "internal error" not in lines[0], lines[0]


def cache_is_clean(cache: Path) -> bool:
    """No entry without a manifest and no leftover temporary folder."""
    if not cache.exists():
        return True
    for d in cache.iterdir():
        if d.name.startswith(".tmp-"):
            return False
        if d.is_dir() and d.name != "exports" and not (d / "manifest.json").exists():
            return False
    return True
