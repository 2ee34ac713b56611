"""Kineto loading: time and peak RSS against file size, on traces tiled from a real one.

    python bench/bench_kineto.py [--tiles 1 10 50] [--source TRACE] [--gzip] [--baseline]

A tiled trace repeats every event of the source N times, each copy shifted in time
by the source's span and with its correlation / External ids shifted, so links stay
unique. Files go to bench/data/ (git-ignored) and are reused. Each load runs in a
fresh process so that its peak RSS (ru_maxrss) is its own. `--baseline` also times
`json.load` of the whole file, what a non-streaming reader costs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "data"
DEFAULT_SOURCE = ROOT / "tests" / "data" / "kineto" / "kineto_vit.json.gz"
ID_KEYS = ("correlation", "External id")


def read(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as f:  # type: ignore[operator]
        return json.load(f)


def tile(source: Path, n: int, dest: Path) -> None:
    doc = read(source)
    events = doc.pop("traceEvents")
    times = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(times) - min(times) + 1.0
    ids = [e.get("args", {}).get(k, 0) for e in events for k in ID_KEYS]
    id_step = max([i for i in ids if isinstance(i, int)] + [e.get("id", 0) for e in events]) + 1
    tmp = dest.with_suffix(dest.suffix + ".tmp")
    opener = gzip.open if dest.name.endswith(".gz") else open
    with opener(tmp, "wt") as f:  # type: ignore[operator]
        header = json.dumps(doc)[:-1]
        f.write(header + (", " if doc else "") + '"traceEvents": [\n')
        first = True
        for k in range(n):
            first = _write_copy(f, events, k, span, id_step, first)
        f.write("\n]}\n")
    tmp.replace(dest)


def _write_copy(f: IO[str], events: list[dict[str, Any]], k: int, span: float, id_step: int,
                first: bool) -> bool:  # fmt: skip
    for e in events:
        if k and e.get("ph") == "M":
            continue
        e = dict(e)
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] = round(e["ts"] + k * span, 3)
        if isinstance(e.get("id"), int):
            e["id"] += k * id_step
        if isinstance(e.get("args"), dict):
            e["args"] = {a: (v + k * id_step if a in ID_KEYS and isinstance(v, int) else v)
                         for a, v in e["args"].items()}  # fmt: skip
        f.write(("" if first else ",\n") + json.dumps(e))
        first = False
    return first


_CHILD = """
import json, resource, sys, time
from pathlib import Path
t = time.perf_counter()
if sys.argv[1] == "tuiperf":
    from tuiperf.load.kineto.tables import load_kineto
    tables, meta = load_kineto(Path(sys.argv[2]), None)
    rows = sum(t.num_rows for t in tables.values())
else:
    import gzip
    p = sys.argv[2]
    with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
        rows = len(json.load(f)["traceEvents"])
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "rows": rows}))
"""


def measure(mode: str, path: Path) -> dict[str, Any]:
    r = subprocess.run([sys.executable, "-c", _CHILD, mode, str(path)], capture_output=True,
                       text=True, check=True, cwd=ROOT)  # fmt: skip
    return json.loads(r.stdout.strip().splitlines()[-1])


def raw_size(path: Path) -> int:
    if not path.name.endswith(".gz"):
        return path.stat().st_size
    with gzip.open(path, "rb") as f:
        return sum(len(b) for b in iter(lambda: f.read(1 << 24), b""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiles", type=int, nargs="+", default=[1, 10, 50])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    ap.add_argument("--gzip", action="store_true", help="write the tiled traces gzipped")
    ap.add_argument("--baseline", action="store_true", help="also time json.load of the file")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    ext = ".json.gz" if args.gzip else ".json"
    print(f"source {args.source.name}; times are wall seconds, RSS is the loading process's peak")
    print(f"{'tiles':>5} {'file MiB':>9} {'JSON MiB':>9} {'rows':>10} {'load s':>7} "
          f"{'MiB/s':>6} {'peak RSS MiB':>12} {'RSS/JSON':>8}  json.load s / RSS MiB")  # fmt: skip
    for n in args.tiles:
        path = OUT / f"{args.source.name.split('.')[0]}_x{n}{ext}"
        if not path.exists():
            t = time.perf_counter()
            tile(args.source, n, path)
            print(f"  (wrote {path.name} in {time.perf_counter() - t:.1f} s)", file=sys.stderr)
        size, text = path.stat().st_size, raw_size(path)
        m = measure("tuiperf", path)
        base = ""
        if args.baseline:
            b = measure("json", path)
            base = f"  {b['s']:.2f} / {b['rss'] / 2**20:.0f}"
        print(f"{n:>5} {size / 2**20:>9.1f} {text / 2**20:>9.1f} {m['rows']:>10,} {m['s']:>7.2f} "
              f"{text / 2**20 / m['s']:>6.1f} {m['rss'] / 2**20:>12.0f} "
              f"{m['rss'] / text:>8.2f}{base}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
