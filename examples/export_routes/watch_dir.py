"""Log when each file of a folder appears, grows and stops growing, while a command writes
it (issue 20.1: does `nsys export --type arrowdir` finish table files one by one?).

usage: python watch_dir.py FOLDER LOG -- command...
Prints one line per change: seconds since start, file name, size in bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def main() -> int:
    folder, log = sys.argv[1], sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1 :]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[str, int] = {}
    lines: list[str] = []
    while True:
        done = proc.poll() is not None
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        now = time.monotonic() - t0
        for n in names:
            try:
                size = os.stat(os.path.join(folder, n)).st_size
            except OSError:
                continue
            if seen.get(n) != size:
                seen[n] = size
                lines.append(f"{now:.3f} {n} {size}")
        if done:
            break
        time.sleep(0.02)
    lines.append(f"{time.monotonic() - t0:.3f} EXIT rc={proc.returncode}")
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
