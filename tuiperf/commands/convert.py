"""`tuiperf convert REPORT [-o DIR]`: write the canonical Arrow tables and say where."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tuiperf.commands.base import Command, add_cache_args, end_progress, open_options
from tuiperf.errors import TuiperfError

if TYPE_CHECKING:
    from tuiperf.model.trace import Trace


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument("report_path", metavar="REPORT", type=Path)
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="DIR",
        help="write a folder of Arrow IPC files here (default: only the cache)",
    )
    p.add_argument(
        "--compression",
        choices=("none", "zstd", "lz4"),
        default="none",
        help="compress the folder's files (smaller; opens slower)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing DIR")
    add_cache_args(p)


def write_folder(trace: Trace, out: Path, compression: str | None, force: bool) -> None:
    """Write every table and a manifest into `out`, atomically (temp folder + rename)."""
    from tuiperf.load.cache.key import SCHEMA_VERSION
    from tuiperf.load.cache.store import write_ipc

    if out.exists() and not force:
        raise TuiperfError(f"{out}: already exists; pass --force to replace it")
    parent = out.resolve().parent
    try:
        tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.tmp-"))
    except OSError as e:
        raise TuiperfError(f"{out}: cannot write ({e.strerror or e})") from e
    try:
        for name in trace.tables:  # canonical: the cache's narrow columns widened back
            write_ipc(tmp / f"{name}.arrow", trace.table(name), compression)
        meta = trace.meta.to_json() | {"cache_path": None, "from_cache": False}
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "tables": {n: t.num_rows for n, t in trace.tables.items()},
            "meta": meta,
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        if out.exists():
            shutil.rmtree(out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def run(args: argparse.Namespace) -> int:
    from tuiperf.load.open import open_trace

    opts = open_options(args)
    opts.defer_details = False  # one pass over the source, every column
    trace = open_trace(args.report_path, opts)
    trace.complete_all()  # a conversion converts everything, detail columns included
    end_progress(args)
    if args.output is not None:
        comp = None if args.compression == "none" else args.compression
        write_folder(trace, args.output, comp, args.force)
        where = args.output
    else:
        where = trace.meta.cache_path
        if where is None:
            print("tuiperf: nothing written (--no-cache and no -o)", file=sys.stderr)
            return 0
    rows = sum(trace.counts().values())
    print(f"{where}", file=sys.stdout)
    print(f"converted {rows:,} rows in {len(trace.tables)} tables", file=sys.stderr)
    return 0


COMMAND = Command(
    name="convert",
    help="convert a report to Arrow (into the cache, or a folder with -o)",
    description="Convert once; later opens memory-map the result.\n\n"
    "example:\n  tuiperf convert run.nsys-rep -o run_arrow/",
    prepare=prepare,
    run=run,
)
