"""`tuiperf sql` against sqlite3 on the export: a per-name kernel aggregate on a tiled report.

usage: .venv/bin/python bench/bench_sql.py [--times 400] [--repeats 3] [--cache-dir DIR]

The report is vit_range tiled `--times` times in time (scripts/scale_nsys.py; x400 = 1.02M
kernels, x2000 = 5.12M, the issue's size), made once in bench/data/. The first open converts
it into the cache (timed apart). Then, `--repeats` times each, medians printed:

  duckdb query   the aggregate on an open Session (the views over the cached Arrow tables)
  tuiperf sql    the command end to end in a fresh process (reads the cache, runs the query)
  sqlite3        the same question on the export, in its fastest form (group by the string
                 id, then join StringIds), the file in the page cache after the first run

Both answers are compared row for row before any time is printed (issue 36: target >= 10x).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.run import tile  # noqa: E402
from tuiperf.load.open import OpenOptions, open_trace  # noqa: E402
from tuiperf.sql.session import Session, Source  # noqa: E402

DUCK = (
    "SELECT name, count(*) AS n, sum(duration_ns) AS total_ns FROM kernels "
    "GROUP BY name ORDER BY name"
)
SQLITE = """
SELECT s.value, g.n, g.total FROM (
  SELECT demangledName AS id, count(*) AS n, sum("end" - start) AS total
  FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName
) g JOIN StringIds s ON s.id = g.id ORDER BY s.value
"""


def seconds(fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def sqlite_answer(path: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(SQLITE).fetchall()


def cli(path: Path, cache: str) -> None:
    cmd = [sys.executable, "-m", "tuiperf", "sql", str(path), DUCK, "-q", "-f", "csv",
           "--limit", "0", "--cache-dir", cache, "-o", "/dev/null"]  # fmt: skip
    subprocess.run(cmd, check=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--times", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cache-dir")
    a = ap.parse_args()
    path = tile(a.times)
    with tempfile.TemporaryDirectory(prefix="tuiperf-bench-sql-") as tmp:
        cache = a.cache_dir or tmp
        opts = OpenOptions(cache_dir=Path(cache))
        t_open, trace = seconds(lambda: open_trace(path, opts))
        n = trace.table("kernels").num_rows  # type: ignore[attr-defined]
        session = Session({"main": Source(trace)})  # type: ignore[arg-type]
        got = session.query(DUCK).table.to_pylist()
        want = sqlite_answer(path)
        assert [(r["name"], r["n"], r["total_ns"]) for r in got] == want, "answers differ"
        duck = [seconds(lambda: session.query(DUCK))[0] for _ in range(a.repeats)]
        ends = [seconds(lambda: cli(path, cache))[0] for _ in range(a.repeats)]
        lite = [seconds(lambda: sqlite_answer(path))[0] for _ in range(a.repeats)]
    med = {k: statistics.median(v) for k, v in (("duck", duck), ("cli", ends), ("lite", lite))}
    print(f"report {path.name}: {n:,} kernels, {len(want)} names; first open (convert) "
          f"{t_open:.2f} s")  # fmt: skip
    print(f"duckdb query (open session)  {med['duck'] * 1000:8.1f} ms  {duck}")
    print(f"tuiperf sql (fresh process)  {med['cli'] * 1000:8.1f} ms  {ends}")
    print(f"sqlite3 on the export        {med['lite'] * 1000:8.1f} ms  {lite}")
    print(f"speed-up: query {med['lite'] / med['duck']:.1f}x, "
          f"end to end {med['lite'] / med['cli']:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
