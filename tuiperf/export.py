"""The writers every output goes through: to a file atomically (temp + rename) or to stdout.

- `open_output`: the text stream, a file appearing only once all was written;
- `write_csv`: rows as `nsys stats --format csv` writes them (the summaries);
- `write_json`: every `--format json` output (`summary`, `info`, `ncu`, `analyze`), and
  `write_json_rows` for a table's rows (`export --format json`, the viewer's `e` key),
  both through one encoder;
- `write_table` / `write_file`: an Arrow table as CSV, TSV, JSON or Parquet (`export` and
  the viewer's `e` key write the same bytes).

No pyarrow at import: `summary` prints a stored report without it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from tuiperf.errors import TuiperfError, UsageError

if TYPE_CHECKING:
    import pyarrow as pa


@contextlib.contextmanager
def open_output(path: Path | None, overwrite: bool = True) -> Iterator[TextIO]:
    """Yield a text stream; for a path, the file appears only if everything was written."""
    if path is None or str(path) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(path)
    # a wrong output argument is a usage error (exit 2): 1 is kept for reports we cannot read
    if path.exists() and not (path.is_file() or path.is_dir()):
        # a device or a pipe (/dev/null, a FIFO): a stream to write into, never a file to
        # replace (renaming a temporary over /dev/null as root replaces the device)
        with open(path, "w", encoding="utf-8", newline="") as f:
            yield f
        return
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


#: characters of encoded JSON gathered before one write: the encoder yields a few
#: characters a chunk, and a text stream's write per chunk cost 5x the encoding itself
JSON_WRITE_CHARS = 1 << 16


def write_json(out: TextIO, obj: Any) -> None:
    """`obj` as JSON indented by one space, non-ASCII text as is, then a newline."""
    buf: list[str] = []
    size = 0
    for chunk in _encoder(indent=1).iterencode(obj):
        buf.append(chunk)
        size += len(chunk)
        if size >= JSON_WRITE_CHARS:
            out.write("".join(buf))
            buf, size = [], 0
    buf.append("\n")
    out.write("".join(buf))


def write_json_rows(out: TextIO, batches: Iterable[list[dict[str, Any]]]) -> None:
    """A JSON array of row objects, one row a line, written batch by batch. Strict JSON:
    a non-finite float (1/0, NaN) is null, never `Infinity` or `NaN`."""
    enc = _encoder(indent=None, allow_nan=False)
    out.write("[")
    first = True
    for rows in batches:
        lines = [_encode_row(enc, r) for r in rows]
        if lines:
            out.write(("\n" if first else ",\n") + ",\n".join(lines))
            first = False
    out.write("\n]\n")


def _encode_row(enc: json.JSONEncoder, row: dict[str, Any]) -> str:
    try:
        return enc.encode(row)
    except ValueError:  # an out-of-range float somewhere in the row: null it
        return enc.encode(_finite(row))


def _finite(v: Any) -> Any:
    """`v` with every non-finite float (at any depth) replaced by None."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return _finite(v.item())
    return v


def _encoder(indent: int | None, allow_nan: bool = True) -> json.JSONEncoder:
    """The one JSON encoding: UTF-8 text as is, numpy scalars as numbers, the rest as str."""
    return json.JSONEncoder(
        ensure_ascii=False, indent=indent, default=_jsonable, allow_nan=allow_nan
    )


def _jsonable(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return str(v)


def write_table(out: TextIO, table: pa.Table, fmt: str = "csv") -> int:
    """Write `table` to the text stream `out` (its bytes underneath); returns the row count."""
    if fmt == "json":
        write_json_rows(out, (b.to_pylist() for b in table.to_batches(max_chunksize=20000)))
        return table.num_rows
    out.flush()
    sink = getattr(out, "buffer", None)
    if sink is None:  # a stream without bytes underneath (tests, StringIO)
        buf = io.BytesIO()
        _write_bytes(buf, table, fmt)
        out.write(buf.getvalue().decode("utf-8"))
    else:
        _write_bytes(sink, table, fmt)
        sink.flush()
    return table.num_rows


def write_file(
    path: Path | None, table: pa.Table, fmt: str = "csv", overwrite: bool = False
) -> int:
    """`table` to `path` (None or `-`: stdout), atomically; an existing file needs overwrite."""
    try:
        with open_output(path, overwrite=overwrite) as out:
            return write_table(out, table, fmt)
    except BrokenPipeError:
        raise  # `| head`: the CLI ends quietly
    except OSError as e:
        raise TuiperfError(f"{path or 'stdout'}: cannot write ({e.strerror or e})") from e


def _write_bytes(sink: BinaryIO, table: pa.Table, fmt: str) -> None:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, sink)
        return
    import pyarrow.csv as pacsv

    delim = "\t" if fmt == "tsv" else ","
    sink.write((delim.join(table.column_names) + "\n").encode("utf-8"))
    if table.num_rows:
        opts = pacsv.WriteOptions(include_header=False, delimiter=delim, quoting_style="needed")
        pacsv.write_csv(table, sink, opts)
