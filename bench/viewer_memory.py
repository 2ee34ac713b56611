"""The viewer's memory after its first screen, while its background work runs.

usage: .venv/bin/python bench/viewer_memory.py REPORT --cache-dir DIR [--seconds N] [--tree DIR]
Starts `tuiperf REPORT --cache-dir DIR` in tmux (200×50) and samples the process's
/proc/<pid>/status every 0.5 s for N seconds (default 180): RssAnon (its own memory) and
RssFile (mapped cache pages), with what the header says it is doing. Prints the peaks and
a line every 10 s; the viewer is stopped at the end (or when it exits by itself). `--tree`:
the checkout whose tuiperf runs (PYTHONPATH; default this one), for A/B rounds.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cold_memory import status


def rss(pid: int) -> dict[str, int] | None:
    try:
        return status(str(pid))
    except OSError:
        return None


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--tree", type=Path)
    args = ap.parse_args()
    exe = Path(sys.executable).parent / "tuiperf"
    env = f"env PYTHONPATH={args.tree.resolve()} " if args.tree is not None else ""
    cmd = f"exec {env}{exe} {args.report.resolve()} --cache-dir {args.cache_dir.resolve()}"
    tmux("kill-session", "-t", "vmem")
    tmux("new-session", "-d", "-s", "vmem", "-x", "200", "-y", "50", cmd)
    time.sleep(1.0)
    pid = int(tmux("list-panes", "-t", "vmem", "-F", "#{pane_pid}").split()[0])
    t0, last, peak = time.monotonic(), -10.0, {"RssAnon": 0, "RssFile": 0, "VmHWM": 0}
    while (now := time.monotonic() - t0) < args.seconds:
        got = rss(pid)
        if got is None:
            print(f"{now:6.1f} s: the viewer has exited")
            break
        for k in peak:
            peak[k] = max(peak[k], got[k])
        if now - last >= 10:
            head = tmux("capture-pane", "-p", "-t", "vmem").splitlines()[:1]
            print(f"{now:6.1f} s: anon {got['RssAnon']:,} MiB, files {got['RssFile']:,} MiB"
                  f" | {head[0].strip() if head else ''}", flush=True)  # fmt: skip
            last = now
        time.sleep(0.5)
    tmux("kill-session", "-t", "vmem")
    print(f"peaks: anon {peak['RssAnon']:,} MiB, files {peak['RssFile']:,} MiB, "
          f"RSS {peak['VmHWM']:,} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
