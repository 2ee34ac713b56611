"""`make bench`: measure conversion and reopen costs against SQLite's own floor.

Writes bench/results.md. Each figure is the median of several runs of the real
command line (a fresh process each time), beside the floor measured in the same
run: `sqlite3 FILE 'select count(*), sum(end-start) from T'` over the tables tuiperf
loads. Other bench/bench_*.py scripts (timeline, queries, kineto, analysis) run after
and their output is appended.
"""

from __future__ import annotations

import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data"
#: the repository's own tiler (a copy of the shared tools' scale_nsys.py)
SCALE_TOOL = REPO / "scripts" / "scale_nsys.py"
TUIPERF = [sys.executable, "-m", "tuiperf"]
TABLES = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
    "OSRT_API",
]


@dataclass
class Run:
    wall: float
    rss_mib: float


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path = REPO) -> Run:
    """Wall time and peak RSS of one child process (os.wait4 gives that child's rusage)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err}")
    return Run(wall, usage.ru_maxrss / 1024)


def median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.wall for r in runs), max(r.rss_mib for r in runs))


def floor(path: Path) -> Run:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    present = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    db.close()
    sql = "; ".join(f'select count(*), sum("end"-start) from {t}' for t in TABLES if t in present)
    cli = shutil.which("sqlite3")
    if cli:
        return median([timed([cli, str(path), sql]) for _ in range(3)])
    code = (
        f"import sqlite3; db = sqlite3.connect({str(path)!r}); [db.execute(q).fetchall() "
        f"for q in {sql.split('; ')!r}]"
    )
    return median([timed([sys.executable, "-c", code]) for _ in range(3)])


def dir_mib(p: Path) -> float:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 2**20


def fixture(name: str) -> Path:
    """tests/data/nsys/<name>.sqlite.xz, decompressed once into bench/data/."""
    out = DATA / f"{name}.sqlite"
    if not out.exists():
        import lzma

        DATA.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        packed = REPO / "tests" / "data" / "nsys" / f"{name}.sqlite.xz"
        tmp.write_bytes(lzma.decompress(packed.read_bytes()))
        tmp.replace(out)
    return out


def tile(times: int) -> Path:
    """vit_range tiled `times` times in time (scripts/scale_nsys.py), made once in bench/data/."""
    p = DATA / f"vit_range_x{times}.sqlite"
    if not p.exists():
        print(f"tiling vit_range.sqlite x{times} …", file=sys.stderr)
        src = fixture("vit_range")
        cmd = [sys.executable, str(SCALE_TOOL), str(src), str(p), "--times", str(times)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return p


def ensure_tiles() -> list[Path]:
    return [tile(400), tile(2000)]


def kernels_in(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    db.close()
    return int(n)


def measure(path: Path, repeats: int) -> dict[str, object]:
    floors, colds, opens, reopen_first, reopen = [], [], [], [], []
    open_ratio, cold_ratio = [], []  # each run over the floor measured just before it
    arrow_mib = 0.0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="tuiperf-bench-") as cache:
            floors.append(floor(path))
            first_open = [*TUIPERF, "summary", str(path), "-r", "cuda_gpu_kern_sum", "-q"]
            opens.append(timed([*first_open, "--cache-dir", cache, "--top", "5"]))
            open_ratio.append(opens[-1].wall / floors[-1].wall)
        with tempfile.TemporaryDirectory(prefix="tuiperf-bench-") as cache:
            floors.append(floor(path))
            colds.append(timed([*TUIPERF, "convert", str(path), "--cache-dir", cache, "-q"]))
            cold_ratio.append(colds[-1].wall / floors[-1].wall)
            arrow_mib = dir_mib(Path(cache))
            summ = [
                *TUIPERF,
                "summary",
                str(path),
                "-r",
                "cuda_gpu_kern_sum",
                "--cache-dir",
                cache,
                "-q",
                "--top",
                "20",
                "--width",
                "120",
            ]
            reopen_first.append(timed(summ))
            reopen.extend(timed(summ) for _ in range(3))
    cold, first, warm = median(colds), median(reopen_first), median(reopen)
    return {
        "open": median(opens),
        "open_ratio": statistics.median(open_ratio),
        "cold_ratio": statistics.median(cold_ratio),
        "file": path.name,
        "kernels": kernels_in(path),
        "size_mib": path.stat().st_size / 2**20,
        "floor": median(floors).wall,
        "cold": cold,
        "first": first,
        "warm": warm,
        "arrow_mib": arrow_mib,
    }


def table(rows: list[dict[str, object]]) -> list[str]:
    out = [
        "| report | kernels | SQLite | floor | first open | ×floor | peak RSS "
        "| cold convert | ×floor | peak RSS | Arrow "
        "| RSS/Arrow | reopen+kern_sum (1st) | reopen+kern_sum | peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cold, first, warm, op = r["cold"], r["first"], r["warm"], r["open"]
        assert isinstance(cold, Run) and isinstance(first, Run) and isinstance(warm, Run)
        assert isinstance(op, Run)
        fl, arrow = float(r["floor"]), float(r["arrow_mib"])  # type: ignore[arg-type]
        out.append(
            f"| {r['file']} | {r['kernels']:,} | {r['size_mib']:.0f} MiB | {fl:.2f} s | "
            f"{op.wall:.2f} s | {r['open_ratio']:.1f}× | {op.rss_mib:.0f} MiB | "
            f"{cold.wall:.2f} s | {r['cold_ratio']:.1f}× | {cold.rss_mib:.0f} MiB | "
            f"{arrow:.0f} MiB | "
            f"{cold.rss_mib / arrow:.2f} | {first.wall:.2f} s | {warm.wall:.2f} s | "
            f"{warm.rss_mib:.0f} MiB |"
        )
    return out


def other_benches() -> list[str]:
    out = []
    for script in sorted((REPO / "bench").glob("bench_*.py")):
        print(f"running {script.name} …", file=sys.stderr)
        t0 = time.perf_counter()
        res = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, cwd=REPO, timeout=3600
        )
        took = time.perf_counter() - t0
        out += [
            "",
            f"## {script.stem} ({took:.0f} s, exit {res.returncode})",
            "",
            "```",
            res.stdout.strip() or res.stderr.strip()[-2000:],
            "```",
        ]
    return out


def main() -> int:
    quick = "--quick" in sys.argv
    fixtures = [fixture(n) for n in ("vit_range", "cnn_osrt", "vit_amp", "lstm")]
    tiles = ensure_tiles()
    rows = []
    for p in fixtures:
        print(f"measuring {p.name} …", file=sys.stderr)
        rows.append(measure(p, 3))
    for p in tiles[: 1 if quick else 2]:
        print(f"measuring {p.name} …", file=sys.stderr)
        rows.append(measure(p, 5 if p is tiles[0] else 1))
    lines = [
        "# tuiperf benchmarks",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.node()} ({os.cpu_count()} cores, "
        f"Python {platform.python_version()}), load average {os.getloadavg()[0]:.2f} at the end.",
        "Each figure is a whole `tuiperf` process (interpreter start, imports, work); medians.",
        "first open = `tuiperf summary FILE -r cuda_gpu_kern_sum` into an empty cache: converts "
        "the columns a first screen needs (what a user waits for); the detail columns (grid, "
        "block, registers, mangled names) convert on first use or in the viewer's background.",
        "floor = `sqlite3 FILE 'select count(*), sum(end-start) from T'` over the tables loaded, "
        "measured (median of 3) right before each first open and each cold convert; ×floor = "
        "median over the runs of each run's time over its own floor (this VM's speed drifts "
        "by ±30% within minutes).",
        "cold convert = `tuiperf convert FILE` into an empty cache. reopen+kern_sum = "
        "`tuiperf summary FILE -r cuda_gpu_kern_sum` from the cache (1st: memory-maps the tables, "
        "computes the summary and keeps it in the entry; then: prints the kept copy, a JSON "
        "file, without loading a table or importing pyarrow). Arrow = size of the cache entry.",
        "Targets: cold ≤ 5× floor; reopen+kern_sum ≤ 0.3 s at 1M kernels; peak RSS ≤ 1.5× Arrow.",
        "",
        *table(rows),
    ]
    if not quick:
        lines += other_benches()
    (REPO / "bench" / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
