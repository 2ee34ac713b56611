"""The one writer: CSV/JSON text to a file atomically (temp + rename) or to stdout."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from tuiperf.errors import TuiperfError, UsageError


@contextlib.contextmanager
def open_output(path: Path | None, overwrite: bool = True) -> Iterator[TextIO]:
    """Yield a text stream; for a path, the file appears only if everything was written."""
    if path is None or str(path) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(path)
    # a wrong output argument is a usage error (exit 2): 1 is kept for reports we cannot read
    if path.exists() and not overwrite:
        raise UsageError(f"{path}: already exists; pass --force to overwrite")
    if path.is_dir():
        raise UsageError(f"{path}: is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise TuiperfError(f"{path}: cannot write ({e.strerror or e})") from e
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            # mkstemp made the file 0600; an export gets the mode any new file would get
            os.fchmod(f.fileno(), 0o666 & ~current_umask())
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def current_umask() -> int:
    """The process umask, read without changing it (os.umask sets it, which races with
    other threads creating files); os.umask only where /proc is not there."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_csv(out: TextIO, header: list[str], rows: Iterable[list[Any]]) -> int:
    """RFC 4180 CSV as `nsys stats` writes it: quote only where needed, `\\n` endings."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    n = 0
    buf = io.StringIO()
    bw = csv.writer(buf, lineterminator="\n")
    for row in rows:
        bw.writerow(row)
        n += 1
        if n % 20000 == 0:
            out.write(buf.getvalue())
            buf.seek(0)
            buf.truncate()
    out.write(buf.getvalue())
    return n


def write_json(out: TextIO, obj: Any) -> None:
    json.dump(obj, out, indent=1, ensure_ascii=False, default=_jsonable)
    out.write("\n")


def _jsonable(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return str(v)
