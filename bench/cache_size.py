"""What a cache entry stores, per table and column, and a conversion's peak RSS; writes
bench/cache_size.md (`python bench/cache_size.py [--times N]`).

Bytes are deterministic (the same report gives the same files), so one run says it all.
For each report (the four nsys fixtures and vit_range tiled N times, default 400: 1.0M
kernels, 2.5M CUDA API rows) it converts into an empty cache the two ways tuiperf does:

- first open: `summary` (the core columns; the viewer converts the same), then `convert`
  (the detail columns, into `<table>.details.arrow`): the entry a user of the viewer has;
- `convert` into an empty cache: every column in one pass;
- then the lane index the viewer keeps after its first frame (`derived/lane-index-*`), in
  the first-open entry: the entry a user of the viewer ends up with.

and measures each process's peak RSS (wait4). For the tiled report it also lists every
stored column (Arrow bytes; all-null columns are holes and take no disk) and what other
encodings would store: each integer column in the narrowest type its values fit,
dictionary indices likewise, and Arrow IPC's LZ4 and ZSTD buffer compression, with the
bytes a compressed file makes the reader allocate on open (compressed buffers are
decompressed into memory when a table is read; uncompressed ones are memory-mapped).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import DATA, REPO, TUIPERF, fixture, tile

FIXTURES = ("vit_range", "cnn_osrt", "lstm", "vit_amp")
NOTES = [
    "## Reading it",
    "",
    "- 'Before and after': before = 1dd3c39 (every core column as converted: int64 ids and "
    "times, `duration` stored, int32 dictionary indices; the lane index as four int64 "
    "arrays a row, rows, starts, ends and running maxima or busy sums, plus each "
    "overlapping lane's union: 32-40 bytes a row), after = this tree: a timeline table "
    "keeps `start` and `end` as int64 (memory-mapped, read in place by the time range and "
    "the lanes), every other column in the narrowest type its values fit (widened back when "
    "a command first uses it, model/stored_columns.py), `duration` left out where it is "
    "end - start in every row (computed back the same way), and the lane index stores "
    "only each lane's rows as int32, none for a lane that is one run of rows "
    "(model/timeline/lane_cache.py; the rest is computed from the times on reopen).",
    "- The detail columns stay narrow and ZSTD-compressed in `<table>.details.arrow` (read "
    "whole and widened on first use).",
    "- Compressed IPC (LZ4, ZSTD) makes files 3-15× smaller but is not memory-mapped: "
    "reading a table allocates every column decompressed ('allocated on open'), all-null "
    "columns included, where the uncompressed file allocates nothing and maps only the "
    "pages a view touches: the core stays uncompressed.",
    "- Conversion peak RSS: about 105-125 MiB of interpreter and libraries, then the CUDA "
    "API table whole in memory (one contiguous record batch per table), the launch index "
    "built from it (correlation id to thread) and the kernel table assembled while that index "
    "is alive; a table is narrowed a column at a time, each original column let go once "
    "replaced (the reader hands the table over), so narrowing adds about one column. A "
    "table that would take more than a quarter of the memory available is assembled in "
    "memory-mapped files instead, whose pages leave the process once written "
    "(tuiperf/load/spill.py); none of these reports is that big here.",
]
MIB = 1 << 20


def disk(folder: Path) -> tuple[int, int]:
    """(bytes on disk, apparent bytes) of the files under `folder`."""
    used = apparent = 0
    for dp, _, files in os.walk(folder):
        for f in files:
            st = os.stat(os.path.join(dp, f))
            used += st.st_blocks * 512
            apparent += st.st_size
    return used, apparent


def peak_rss_mib(cmd: list[str]) -> float:
    """Peak RSS of `cmd`, from GNU time's %M. Not wait4 on our own child: Linux carries the
    peak of the image a child was spawned from (this process, grown by the column analysis)
    into the child's ru_maxrss at exec, so later children would report ours."""
    res = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    if res.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{res.stderr}")
    return int(res.stderr.strip().splitlines()[-1]) / 1024


def entry_of(cache: Path) -> Path:
    (entry,) = [d for d in cache.iterdir() if d.is_dir() and not d.name.startswith(".")]
    return entry


def convert_both_ways(report: Path) -> dict[str, object]:
    """Sizes and peak RSS of the first-open entry (core, then details) and of `convert`."""
    out: dict[str, object] = {"report": report.stat().st_size}
    summary = [*TUIPERF, "summary", str(report), "-r", "cuda_gpu_kern_sum", "-q"]
    with tempfile.TemporaryDirectory(prefix="cache-size-", dir=DATA) as c:
        out["rss_first_open"] = peak_rss_mib([*summary, "--cache-dir", c])
        out["core"] = disk(entry_of(Path(c)))
        out["rss_details"] = peak_rss_mib([*TUIPERF, "convert", str(report), "--cache-dir", c])
        out["opened"] = disk(entry_of(Path(c)))
        out["files_opened"] = files(entry_of(Path(c)))
        out["rss_index"] = peak_rss_mib([sys.executable, "-c", _KEEP_INDEX, str(report), c])
        out["indexed"] = disk(entry_of(Path(c)))
        out["files_indexed"] = files(entry_of(Path(c)))
    with tempfile.TemporaryDirectory(prefix="cache-size-", dir=DATA) as c:
        out["rss_convert"] = peak_rss_mib([*TUIPERF, "convert", str(report), "--cache-dir", c])
        out["converted"] = disk(entry_of(Path(c)))
        out["files_converted"] = files(entry_of(Path(c)))
        out["columns"] = columns(entry_of(Path(c)))
    return out


#: the lane index into a cache entry, as the viewer keeps it after its first frame
_KEEP_INDEX = (
    "import sys; from pathlib import Path; "
    "from tuiperf.load.open import OpenOptions, open_trace; "
    "from tuiperf.model.timeline.lanes import build_lanes; "
    "build_lanes(open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2]))))"
)


def files(entry: Path) -> dict[str, int]:
    return {
        str(p.relative_to(entry)): p.stat().st_blocks * 512 for p in sorted(entry.rglob("*.arrow"))
    }


def read(path: Path) -> pa.Table:
    return ipc.open_file(pa.memory_map(str(path))).read_all()


def narrowest(a: pa.Array) -> pa.DataType:
    """The narrowest signed integer type holding every value of integer array `a`."""
    mm = pc.min_max(a).as_py()
    lo, hi = mm["min"] or 0, mm["max"] or 0
    for t, bits in ((pa.int8(), 8), (pa.int16(), 16), (pa.int32(), 32)):
        if -(1 << (bits - 1)) <= lo and hi < (1 << (bits - 1)):
            return t
    return pa.int64()


def narrowed(t: pa.Table) -> pa.Table:
    cols = []
    for c in t.columns:
        a = c.combine_chunks()
        if a.null_count == len(a):
            cols.append(a)
        elif pa.types.is_integer(a.type):
            cols.append(a.cast(narrowest(a)))
        elif pa.types.is_dictionary(a.type):
            idx = a.indices.cast(narrowest(a.indices))
            cols.append(pa.DictionaryArray.from_arrays(idx, a.dictionary))
        else:
            cols.append(a)
    return pa.table(cols, names=t.column_names)


def stored(t: pa.Table) -> int:
    """Bytes the columns take on disk: all-null columns are holes."""
    return sum(c.nbytes for c in t.columns if c.null_count < len(c))


def ipc_bytes(t: pa.Table, compression: str | None) -> tuple[int, int]:
    """(file bytes, bytes the reader allocates to open it) of `t` as one IPC record batch."""
    with tempfile.NamedTemporaryFile(dir=DATA, suffix=".arrow") as f:
        opts = ipc.IpcWriteOptions(compression=compression)
        with ipc.new_file(f.name, t.schema, options=opts) as w:
            w.write_table(t, max_chunksize=max(t.num_rows, 1))
        size = os.path.getsize(f.name)
        before = pa.total_allocated_bytes()
        back = read(Path(f.name))
        allocated = pa.total_allocated_bytes() - before
        del back
    return size, allocated


def columns(entry: Path) -> dict[str, object]:
    """Per table: rows, each column's type and bytes, and the encodings compared."""
    out: dict[str, object] = {}
    manifest = json.loads((entry / "manifest.json").read_text())
    parts = [(name, f"{name}.arrow", rows) for name, rows in manifest["tables"].items()]
    parts += [  # detail columns kept apart (stored narrow already)
        (f"{name} (details)", f"{name}.details.arrow", rows)
        for name, rows in manifest["tables"].items()
        if (entry / f"{name}.details.arrow").exists()
    ]
    for name, file, rows in parts:
        if rows < 10_000:
            continue
        t = read(entry / file)
        n = narrowed(t)
        lz4 = ipc_bytes(t, "lz4")
        zstd = ipc_bytes(t, "zstd")
        out[name] = {
            "rows": rows,
            "columns": [
                (f.name, str(f.type), stored(t.select([f.name])), str(n.schema.field(f.name).type))
                for f in t.schema
            ],
            "stored": stored(t),
            "narrowed": stored(n),
            "lz4": lz4,
            "zstd": zstd,
            "narrowed_zstd": ipc_bytes(n, "zstd"),
        }
    return out


def _m(b: float) -> str:
    return f"{b / MIB:,.1f}"


def _x(b: float, report: float) -> str:
    return f"{b / report:.2f}×"


def render(results: dict[str, dict], tiled: str, before: dict[str, dict] | None) -> str:
    lines = [
        "# Cache entry size and conversion peak RSS",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} by `python bench/cache_size.py` on "
        f"{os.cpu_count()} cores. Bytes are deterministic; MiB = 2^20 bytes; disk = "
        "allocated blocks (all-null columns are holes); × = of the report's size. RSS = peak "
        "RSS of the process (wait4), one run each.",
        "",
        "| report | report MiB | first open: entry MiB (core → +details) | × | + the lane "
        "index: MiB | × | `convert`: entry MiB | × | peak RSS first open / details / convert, "
        "MiB | × (convert) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        rep = r["report"]
        lines.append(
            f"| {name} | {_m(rep)} | {_m(r['core'][0])} → {_m(r['opened'][0])} | "
            f"{_x(r['opened'][0], rep)} | **{_m(r['indexed'][0])}** | "
            f"**{_x(r['indexed'][0], rep)}** | {_m(r['converted'][0])} | "
            f"{_x(r['converted'][0], rep)} | {r['rss_first_open']:,.0f} / "
            f"{r['rss_details']:,.0f} / {r['rss_convert']:,.0f} | "
            f"{_x(r['rss_convert'] * MIB, rep)} |"
        )
    if before:
        lines += _before(results, before)
    lines += ["", *NOTES, _beyond_fixed(results)]
    big = results[tiled]
    lines += ["", f"## Files of the {tiled} entry (disk MiB)", ""]
    lines += ["| file | first open + lane index | `convert` |", "|---|---|---|"]
    names = sorted(set(big["files_indexed"]) | set(big["files_converted"]))
    for f in names:
        a, b = big["files_indexed"].get(f), big["files_converted"].get(f)
        lines.append(f"| {f} | {_m(a) if a is not None else '—'} | {_m(b) if b else '—'} |")
    lines += ["", f"## Per table and column ({tiled}, `convert`)", ""]
    lines += [
        "| table | rows | stored now | narrowest ints | LZ4 file / allocated on open | ZSTD "
        "file / allocated on open | narrowest + ZSTD |",
        "|---|---|---|---|---|---|---|",
    ]
    for tname, t in big["columns"].items():
        lines.append(
            f"| {tname} | {t['rows']:,} | {_m(t['stored'])} | {_m(t['narrowed'])} | "
            f"{_m(t['lz4'][0])} / {_m(t['lz4'][1])} | {_m(t['zstd'][0])} / "
            f"{_m(t['zstd'][1])} | {_m(t['narrowed_zstd'][0])} |"
        )
    tables = big["columns"].values()
    rep = big["report"]
    now, narrow = sum(t["stored"] for t in tables), sum(t["narrowed"] for t in tables)
    lines.append(
        f"| these tables, × the report | | {_m(now)} ({_x(now, rep)}) | {_m(narrow)} "
        f"({_x(narrow, rep)}) | | | |"
    )
    for tname, t in big["columns"].items():
        lines += ["", f"### {tname} ({t['rows']:,} rows)", ""]
        lines += ["| column | type | stored MiB | B/row | narrowest type |"]
        lines += ["|---|---|---|---|---|"]
        for col, typ, size, narrow in t["columns"]:
            per = size / t["rows"]
            hole = " (hole)" if size == 0 else ""
            lines.append(f"| {col} | {typ} | {_m(size)}{hole} | {per:.1f} | {narrow} |")
    return "\n".join(lines) + "\n"


def _beyond_fixed(results: dict[str, dict]) -> str:
    """The conversion's peak RSS past the fixed part (the smallest fixture's peak)."""
    fixed = min(r["rss_convert"] for r in results.values())
    parts = [
        f"{n}: {(r['rss_convert'] - fixed) * MIB / r['report']:.2f}×"
        for n, r in results.items()
        if r["report"] > 50 * MIB
    ]
    return (
        f"- `convert`'s peak RSS less the smallest fixture's ({fixed:,.0f} MiB, the fixed "
        f"part), of the report's size: {', '.join(parts)}."
    )


def _before(results: dict[str, dict], before: dict[str, dict]) -> list[str]:
    lines = [
        "",
        "## Before and after (disk MiB; peak RSS MiB, one run each)",
        "",
        "| report | first-open entry (+details) | × | + the lane index | × | `convert` entry | "
        "× | peak RSS first open / details / convert | × (convert) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        b = before.get(name)
        if b is None:
            continue
        rep = r["report"]
        rss = " / ".join(
            f"{b[k]:,.0f} → {r[k]:,.0f}" for k in ("rss_first_open", "rss_details", "rss_convert")
        )
        lines.append(
            f"| {name} | {_m(b['opened'][0])} → {_m(r['opened'][0])} | "
            f"{_x(b['opened'][0], rep)} → {_x(r['opened'][0], rep)} | "
            f"{_m(b['indexed'][0])} → {_m(r['indexed'][0])} | "
            f"{_x(b['indexed'][0], rep)} → {_x(r['indexed'][0], rep)} | "
            f"{_m(b['converted'][0])} → {_m(r['converted'][0])} | "
            f"{_x(b['converted'][0], rep)} → {_x(r['converted'][0], rep)} | {rss} | "
            f"{_x(b['rss_convert'] * MIB, rep)} → {_x(r['rss_convert'] * MIB, rep)} |"
        )
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--times", type=int, nargs="+", default=[400], help="tile vit_range this many times"
    )
    ap.add_argument("--report", type=Path, nargs="*", default=[], help="more reports to measure")
    ap.add_argument("--json", type=Path, help="also keep the raw numbers here")
    ap.add_argument("--before", type=Path, help="--json of an earlier run, to compare with")
    args = ap.parse_args()
    results = {f"{n}.sqlite": convert_both_ways(fixture(n)) for n in FIXTURES}
    for times in args.times:
        tiled = tile(times)
        results[tiled.name] = convert_both_ways(tiled)
    for report in args.report:
        results[report.name] = convert_both_ways(report)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    before = json.loads(args.before.read_text()) if args.before else None
    text = render(results, tile(args.times[0]).name, before)
    (REPO / "bench" / "cache_size.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
