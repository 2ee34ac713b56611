"""The repository's xz-compressed reports, decompressed once per test process."""

from __future__ import annotations

import atexit
import functools
import lzma
import shutil
import tempfile
from pathlib import Path


@functools.cache
def _workdir() -> Path:
    out = Path(tempfile.mkdtemp(prefix="tuiperf-tests-data-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    return out


@functools.cache
def unxz(packed: Path) -> Path:
    """`packed` (a `….xz` file of tests/data) decompressed, read-only; the .xz stays."""
    name = packed.name.removesuffix(".xz")
    out = _workdir() / packed.parent.name / name
    out.parent.mkdir(exist_ok=True)
    with lzma.open(packed) as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    out.chmod(0o444)
    return out
