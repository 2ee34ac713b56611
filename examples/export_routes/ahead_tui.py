"""Issue 20.1 in the viewer: `tuiperf run.nsys-rep` into an empty cache, time to the first
timeline screen (tmux, bench/peers_tmux.py), this tree against OLD_TREE, interleaved with
`nsys export --type arrowdir` alone.

usage (repository root, GPU machine): python ahead_tui.py REPORT OLD_TREE NSYS OUT [ROUNDS]
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT / "bench"))

import peers_tmux  # noqa: E402

MARKER = re.compile(r"/col")


def export_alone(nsys: str, report: Path, work: Path) -> float:
    out = work / "alone"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(["sync"])
    t = time.monotonic()
    cmd = [nsys, "export", "--type", "arrowdir", "--include-json=true", "-f", "true"]
    subprocess.run([*cmd, "-o", str(out), str(report)], capture_output=True, check=True)
    return time.monotonic() - t


def viewer(tree: Path, report: Path, work: Path, nsys: str) -> float | None:
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    subprocess.run(["sync"])
    cmd = ["bash", "-c", f"cd {tree} && exec {sys.executable} -m tuiperf {report}"]
    env = {"TUIPERF_CACHE_DIR": str(cache), "TUIPERF_NSYS": nsys, "LANG": "C.UTF-8"}
    got = peers_tmux.first_screen(cmd, MARKER, work, env, 120.0)
    if got.seconds is None:
        print(got.screen, file=sys.stderr)
    return got.seconds


def main() -> None:
    report, old, nsys, out = (
        Path(sys.argv[1]),
        Path(sys.argv[2]).resolve(),
        sys.argv[3],
        Path(sys.argv[4]),
    )
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    rows: dict[str, list[float]] = {"export alone": [], "viewer, this tree": [], "viewer, old": []}
    lines = []
    with tempfile.TemporaryDirectory() as w:
        work = Path(w)
        for i in range(rounds):
            a = export_alone(nsys, report, work)
            b = viewer(ROOT, report, work, nsys)
            c = viewer(old, report, work, nsys)
            lines.append(f"round {i + 1}: export {a:.2f} s, viewer new {b} s, old {c} s")
            print(lines[-1], flush=True)
            for k, v in zip(rows, (a, b, c)):
                if v is not None:
                    rows[k].append(v)
    for k, v in rows.items():
        if v:
            lines.append(f"{k}: median {statistics.median(v):.2f} s, {min(v):.2f}-{max(v):.2f}")
    e = rows["export alone"]
    for k in ("viewer, this tree", "viewer, old"):
        r = [x / y for x, y in zip(rows[k], e)]
        if r:
            lines.append(
                f"{k} / export: {[round(x, 3) for x in r]}, median {statistics.median(r):.3f}"
            )
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-5:]))


if __name__ == "__main__":
    main()
