"""`tuiperf ranks DIR_OR_GLOB ...`: one report per rank of a distributed run, side by side.

Every report is converted and reduced on its own (a local process pool, or a Dask cluster
with --scheduler); then the ranks are numbered, their clocks aligned, and the straggler named.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tuiperf import settings
from tuiperf.commands.base import (
    Command,
    add_cache_args,
    end_progress,
    has_terminal,
    open_options,
    progress_printer,
)
from tuiperf.errors import BadReportError, TuiperfError, UsageError

if TYPE_CHECKING:
    from tuiperf.analysis.ranks.assemble import RankSet

#: file names taken from a folder: the timeline report kinds
REPORT_SUFFIXES = (".sqlite", ".nsys-rep", ".json", ".json.gz")
FORMATS = ("table", "csv", "json")
#: the table's duration columns: key -> header; step = compute + exposed + copies + idle
_TIMES = {
    "step_ns": "step",
    "compute_ns": "= compute",
    "exposed_comm_ns": "+ exposed comm",
    "copy_ns": "+ copies",
    "idle_ns": "+ GPU idle",
    "comm_ns": "all comm",
    "work_before_collective_ns": "work/coll",
    "inside_collective_ns": "in coll",
}
#: where the communication of a rank came from (RankSet.rows' comm_source) -> what it is
COMM_SOURCES = {
    "kernels": "NCCL-type kernels; exposed: the part with no compute or copy beside it",
    "ranges": "the collectives' CPU ranges (gloo runs them on the CPU); exposed: the GPU "
    "idle time inside them",
    "none": "none found (no NCCL-type kernel, no collective range): the comm columns are 0",
}


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "inputs",
        metavar="DIR_OR_GLOB",
        nargs="+",
        help="a folder of per-rank reports, a glob ('run/rank*.sqlite'), or the reports",
    )
    p.add_argument("-f", "--format", choices=FORMATS, default="table")
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="also write ranks.parquet (the table) and rank<N>_steps.parquet (each rank's "
        "steady steps) here, readable by DuckDB, Dask or pandas without tuiperf",
    )
    p.add_argument(
        "--merge",
        type=Path,
        metavar="DIR",
        help="also write every rank on one timeline (the aligned clock, a process group per "
        "rank) as a tuiperf folder; open it with `tuiperf DIR`",
    )
    p.add_argument(
        "--tui",
        action="store_true",
        help="open every rank on one timeline in the viewer (the merge of --merge, in a "
        "temporary folder removed afterwards) instead of printing the table",
    )
    p.add_argument(
        "-j", "--jobs", type=int, metavar="N", help="worker processes (default: one per report)"
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the per-rank step on this Dask scheduler (tcp://host:8786; needs "
        "tuiperf[dask]); default: DASK_SCHEDULER_ADDRESS or Dask's config, else a local pool",
    )
    add_cache_args(p)


def expand(inputs: list[str]) -> list[Path]:
    """The reports named by folders, globs and paths, sorted, each once."""
    found: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir() and not _is_export_dir(p):
            found += sorted(f for f in p.iterdir() if f.name.endswith(REPORT_SUFFIXES))
        elif glob.has_magic(item):
            found += [Path(m) for m in sorted(glob.glob(item))]
        elif os.path.lexists(p):
            found.append(p)
        else:
            raise UsageError(f"{item}: no such file or directory")
    uniq = list(dict.fromkeys(found))
    if not uniq:
        raise UsageError(f"{' '.join(inputs)}: no reports found ({', '.join(REPORT_SUFFIXES)})")
    return uniq


def _is_export_dir(p: Path) -> bool:
    from tuiperf.load import detect as det

    try:
        det.detect(p)
    except TuiperfError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    from tuiperf.analysis.ranks.assemble import assemble
    from tuiperf.analysis.ranks.pool import run_dask, run_local, scheduler_from_env, split
    from tuiperf.analysis.ranks.summary import Job
    from tuiperf.export import open_output
    from tuiperf.load.cache.usage import cap_bytes

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give 1 or more")
    if args.merge is not None and args.merge.exists():
        raise UsageError(f"--merge {args.merge}: already exists; give a new folder")
    if args.tui and not has_terminal():
        raise UsageError("--tui: the viewer needs a terminal; without one, use --merge DIR")
    paths = expand(args.inputs)
    use_cache = not args.no_cache and not settings.no_cache()
    cache = str(args.cache_dir) if args.cache_dir else None
    cap = cap_bytes(args.cache_max)  # a bad $TUIPERF_CACHE_MAX: one line here, not per worker
    jobs = [Job(str(p), cache, use_cache, cache_max=cap) for p in paths]
    address = args.scheduler or scheduler_from_env()
    _say(args, f"reading {len(jobs)} report(s) " + (f"on {address}" if address else "locally"))
    results = run_dask(jobs, address) if address else run_local(jobs, args.jobs)
    end_progress(args)
    ranks, failed = split(results)
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise BadReportError(failed[0].reason + more)
    rs = assemble(ranks, [str(p) for p in paths])
    if args.out is not None:
        write_parquet(rs, args.out)
    if args.merge is not None:
        write_merged(rs, args, args.merge)
    if args.tui:  # the entry point opens it in the viewer, then removes it (cli.then_view)
        args.then_view = Path(tempfile.mkdtemp(prefix="tuiperf-ranks-")) / "ranks"
        write_merged(rs, args, args.then_view)
        return 0
    with open_output(None) as out:
        _write(out, rs, args.format)
    return 0


def _say(args: argparse.Namespace, what: str) -> None:
    """A progress line on stderr (a terminal, not --quiet); end_progress clears it."""
    if progress_printer(args) is not None:
        sys.stderr.write(f"\r\x1b[2K{what}…")
        sys.stderr.flush()


def _write(out: TextIO, rs: RankSet, form: str) -> None:
    from tuiperf.export import write_csv, write_json

    rows = rs.rows()
    if form == "json":
        write_json(out, rs.to_json())
    elif form == "csv":
        header = list(rows[0])
        write_csv(out, header, ([r[h] for h in header] for r in rows))
    else:
        _table(out, rs, rows)


def _table(out: TextIO, rs: RankSet, rows: list[dict[str, Any]]) -> None:
    from tuiperf.model import fmt
    from tuiperf.report.plain import is_terminal

    head = ["rank", *_TIMES.values(), "steps", "report"]
    body = []
    for r in rows:
        cells = [str(r["rank"]) + (" *" if r["straggler"] else "")]
        cells += [fmt.duration(r[k]) if r[k] is not None else "-" for k in _TIMES]
        pid = f" (pid {r['pid']})" if r["pid"] is not None else ""
        cells += [str(r["steps"]), Path(r["report"]).name + pid]
        body.append(cells)
    widths = [max(len(c[i]) for c in [head, *body]) for i in range(len(head))]
    for cells in [head, *body]:
        line = "  ".join(
            c.ljust(w) if i in (0, len(head) - 1) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        out.write(line.rstrip() + "\n")
    notes = [
        "Each rank's median steady-state step (the mean of the two middle ones for an even "
        "count): step = compute + exposed comm + copies + GPU idle; all comm: its "
        "communication time, hidden behind other work or not. work/coll, in coll: medians "
        "over the collectives.",
        *_comm_notes(rows),
        f"Ranks from: {rs.rank_from}. Clocks aligned on: {rs.clock}.",
        ("Straggler (*): " if rs.straggler is not None else "") + rs.verdict + ".",
    ]
    if is_terminal(out):  # a pipe or a file: one line per note (report.plain)
        width = min(shutil.get_terminal_size((100, 24)).columns, 100)
        notes = [textwrap.fill(n, width) for n in notes]
    out.write("\n" + "\n".join(notes) + "\n")


def _comm_notes(rows: list[dict[str, Any]]) -> list[str]:
    """What the communication columns hold: one line, or one per source when ranks differ."""
    by: dict[str, list[str]] = {}
    for r in rows:
        by.setdefault(r["comm_source"], []).append(str(r["rank"]))
    if len(by) == 1:
        return [f"Communication: {COMM_SOURCES.get(next(iter(by)), next(iter(by)))}."]
    return [
        f"Communication of rank{'s' if len(ranks) > 1 else ''} {', '.join(ranks)}: "
        f"{COMM_SOURCES.get(src, src)}."
        for src, ranks in by.items()
    ]


def write_parquet(rs: RankSet, out: Path) -> None:
    """ranks.parquet and rank<N>_steps.parquet into `out`, all or nothing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out, prefix=".ranks.tmp-"))
    try:
        files = {"ranks.parquet": pa.Table.from_pylist(rs.rows())}
        for r in rs.ranks:
            files[f"rank{r.rank}_steps.parquet"] = pa.table(rs.step_rows(r))
        for name, table in files.items():
            pq.write_table(table, tmp / name)
        for name in files:
            os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_merged(rs: RankSet, args: argparse.Namespace, folder: Path) -> None:
    """Every rank's trace on the aligned clock, as one tuiperf folder (all or nothing)."""
    from tuiperf.analysis.ranks.merge import Report, merge
    from tuiperf.commands.convert import write_folder
    from tuiperf.load.open import open_trace

    opts = open_options(args)
    by_path: dict[str, list[int]] = {}
    for r in rs.ranks:  # a report holding several ranks is merged once, each process named
        by_path.setdefault(r.path, []).append(r.rank)
    reports = []
    for path, ranks in by_path.items():
        pids = {r.pid: r.rank for r in rs.ranks if r.path == path and r.pid is not None}
        trace = open_trace(Path(path), opts)
        reports.append(Report(trace, ranks[0], rs.offsets.get(ranks[0], 0), pids))
    source = f"{len(rs.ranks)} ranks: " + ", ".join(Path(p).name for p in by_path)
    write_folder(merge(reports, source), folder, None, force=False)


COMMAND = Command(
    name="ranks",
    help="per-rank reports of a distributed run: step time per rank, exposed "
    "communication, the straggler",
    description="""\
One report per rank (nsys or torch.profiler), side by side: each rank's median steady-state
step, its compute, communication (NCCL-type kernels, or the collective's CPU range for gloo),
the exposed part of it (no compute beside it), GPU idle time, the work between two
collectives and the time inside one; and the straggler: the rank the others wait for.

examples:
  tuiperf ranks run/                         every report in the folder
  tuiperf ranks 'run/rank*.nsys-rep' --format csv
  tuiperf ranks run/ --out ranks_parquet/    also Parquet, for DuckDB/Dask/pandas
  tuiperf ranks run/ --scheduler tcp://head:8786   the per-rank step on a Dask cluster
""",
    prepare=prepare,
    run=run,
)
