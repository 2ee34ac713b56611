"""Allocator snapshots: time and peak RSS of `tuiperf memory`'s reader on generated
snapshots with millions of trace entries, against stdlib `pickle.load` of the same file.

    python bench/bench_gpumem.py [--entries 200000 1000000 3000000] [--baseline]

The generator writes the pickle opcodes itself (protocol 4, as `_dump_snapshot` writes:
each entry dict memoized, the frames of one allocation a memoized list that its free
entries refer back to, the frame dicts shared through the memo), so making a file of
millions of entries holds none of them in memory. Files go to bench/data/ (git-ignored)
and are reused. Each load runs in a fresh process so that its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import random
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "data"
#: distinct user lines and stack depth of the generated program
LINES, DEPTH = 200, 24
MB = 1 << 20


class Writer:
    """Just enough of a protocol-4 pickler for a snapshot, streaming."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f, self.memo = f, 0
        self.strings: dict[str, int] = {}

    def op(self, b: bytes) -> None:
        self.f.write(b)

    def memoize(self) -> int:
        self.op(b"\x94")
        self.memo += 1
        return self.memo - 1

    def get(self, idx: int) -> None:
        self.op(b"j" + struct.pack("<I", idx))

    def text(self, s: str) -> None:
        if s in self.strings:
            return self.get(self.strings[s])
        raw = s.encode()
        self.op(b"\x8c" + bytes([len(raw)]) + raw)
        self.strings[s] = self.memoize()

    def int(self, v: int) -> None:
        if 0 <= v < 1 << 31:
            self.op(b"J" + struct.pack("<i", v))
        else:
            raw = v.to_bytes(9, "little", signed=True)
            self.op(b"\x8a\x09" + raw)

    def dict_of(self, items: list[tuple[str, object]]) -> None:
        self.op(b"}")
        self.memoize()
        self.op(b"(")
        for k, v in items:
            self.text(k)
            self.value(v)
        self.op(b"u")

    def value(self, v: object) -> None:
        if isinstance(v, str):
            self.text(v)
        elif isinstance(v, int):
            self.int(v)
        elif callable(v):
            v()
        else:
            raise TypeError(type(v))


def generate(n: int, dest: Path) -> None:
    rng = random.Random(0)
    tmp = dest.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        w = Writer(f)
        frame_memo: dict[tuple[str, int, str], int] = {}

        def frame(key: tuple[str, int, str]) -> None:
            if key in frame_memo:
                return w.get(frame_memo[key])
            w.dict_of([("filename", key[0]), ("line", key[1]), ("name", key[2])])
            frame_memo[key] = w.memo - 1

        def stack(line: int) -> int:
            w.op(b"]")
            idx = w.memoize()
            w.op(b"(")
            for d in range(DEPTH - 1):
                frame((f"/env/lib/python3.11/site-packages/torch/mod{d}.py", d + 10, f"f{d}"))
            frame(("/home/u/train.py", line, "step"))
            w.op(b"e")
            return idx

        w.op(b"\x80\x04}")
        w.memoize()
        w.op(b"(")
        w.text("segments")
        w.op(b"]")
        w.memoize()
        w.text("device_traces")
        w.op(b"]")
        w.memoize()
        w.op(b"]")
        w.memoize()
        live: list[tuple[int, int, int]] = []
        pending: tuple[int, int, int] | None = None
        t, addr, batch = 1_700_000_000_000_000, 1 << 40, 0
        for i in range(n):
            if batch == 0:
                w.op(b"(")
            t += 3
            if pending is not None:  # PyTorch completes every free it records
                a, size, sidx = pending
                pending = None
                items = [("action", "free_completed"), ("addr", a), ("size", size)]
                items += [("stream", 0), ("time_us", t), ("frames", lambda s=sidx: w.get(s))]
            elif live and (len(live) > 500 or rng.random() < 0.5):
                a, size, sidx = pending = live.pop(rng.randrange(len(live)))
                items = [("action", "free_requested"), ("addr", a), ("size", size)]
                items += [("stream", 0), ("time_us", t), ("frames", lambda s=sidx: w.get(s))]
            else:
                addr += 4096
                size = rng.choice((512, 4096, 65536, MB, 4 * MB))
                line = rng.randrange(LINES)
                holder: list[int] = []
                items = [
                    ("action", "alloc"),
                    ("addr", addr),
                    ("size", size),
                    ("stream", 0),
                    ("time_us", t),
                    ("frames", lambda h=holder, ln=line: h.append(stack(ln))),
                ]
            w.dict_of(items)
            if items[0][1] == "alloc":
                live.append((addr, size, holder[0]))
            batch += 1
            if batch == 1000 or i == n - 1:
                w.op(b"e")
                batch = 0
        w.op(b"a")  # the device's list into device_traces
        w.op(b"u.")
    tmp.rename(dest)


def measure(path: Path, baseline: bool) -> tuple[float, int]:
    code = BASELINE if baseline else LOADER
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return time.perf_counter() - t, int(out.stdout.split()[-1])


LOADER = """
import resource, sys
from pathlib import Path
from tuiperf.load.gpumem.snapshot import load_snapshot
from tuiperf.analysis.gpumem.summary import build
rep = build(load_snapshot(Path(sys.argv[1])))
print(rep.devices[0].peak_allocated, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
BASELINE = """
import pickle, resource, sys
with open(sys.argv[1], 'rb') as f:
    d = pickle.load(f)
print(len(d['device_traces'][0]), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entries", type=int, nargs="+", default=[200_000, 1_000_000])
    p.add_argument("--baseline", action="store_true", help="also stdlib pickle.load")
    args = p.parse_args()
    OUT.mkdir(exist_ok=True)
    print("| entries | file | tuiperf memory: time, peak RSS | pickle.load: time, peak RSS |")
    print("|---:|---:|---:|---:|")
    for n in args.entries:
        path = OUT / f"snapshot_v2_{n}.pickle"
        if not path.exists():
            generate(n, path)
        t, rss = measure(path, False)
        base = ""
        if args.baseline:
            bt, brss = measure(path, True)
            base = f"{bt:.1f} s, {brss / 1024:.0f} MiB"
        size = path.stat().st_size / MB
        print(f"| {n:,} | {size:.0f} MiB | {t:.1f} s, {rss / 1024:.0f} MiB | {base} |")


if __name__ == "__main__":
    main()
