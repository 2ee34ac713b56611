"""Time to the first screen of a terminal UI in a real terminal (tmux), and its peak RSS.

The tool runs inside tmux under a small wrapper (`python peers_tmux.py wrap OUT -- CMD...`)
that records its own start time (CLOCK_MONOTONIC, shared by all processes), starts the
tool on the pane's terminal, and after the tool ends writes the tool's rusage (`os.wait4`:
peak RSS of the tool and of the children it waited for) to OUT. The driver polls
`tmux capture-pane` until the tool's marker is on the screen, then ends the tool with
SIGTERM and reads OUT. tmux runs on a private socket, so no one else's session is touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

POLL_S = 0.05
WIDTH, HEIGHT = 160, 48


@dataclass
class Screen:
    seconds: float | None  # None: the marker never appeared
    rss_mib: float | None
    screen: str  # the last screen captured
    exited: bool  # the tool ended by itself before the marker


def wrap(out: Path, cmd: list[str]) -> None:
    """Inside tmux: run `cmd` on this terminal, then record its rusage and wait to be killed."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    (out.parent / (out.name + ".pid")).write_text(f"{proc.pid} {start!r}")
    _, status, usage = os.wait4(proc.pid, 0)
    result = {"rss_kib": usage.ru_maxrss, "status": status, "end": time.monotonic()}
    tmp = out.parent / (out.name + ".tmp")
    tmp.write_text(json.dumps(result))
    tmp.rename(out)
    signal.pause()  # keep the pane (and its last screen) until the driver kills tmux


class Tmux:
    def __init__(self) -> None:
        exe = shutil.which("tmux")
        if exe is None:
            raise SystemExit("tmux is not installed (apt-get install -y tmux)")
        self.exe = exe
        self.socket = f"tuiperf-peers-{os.getpid()}-{uuid.uuid4().hex[:6]}"

    def __call__(self, *args: str, check: bool = True) -> str:
        cmd = [self.exe, "-L", self.socket, "-f", "/dev/null", *args]
        done = subprocess.run(cmd, capture_output=True, text=True, check=check)
        return done.stdout

    def kill_server(self) -> None:
        self("kill-server", check=False)


def first_screen(
    cmd: list[str], marker: re.Pattern[str], workdir: Path, env: dict[str, str], timeout: float
) -> Screen:
    """Start `cmd` in a fresh tmux server; seconds from the tool's start to `marker` on screen."""
    out = workdir / f"screen-{uuid.uuid4().hex[:8]}.json"
    pidfile = out.parent / (out.name + ".pid")
    wrapped = [sys.executable, str(Path(__file__).resolve()), "wrap", str(out), "--", *cmd]
    line = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *wrapped])
    tmux = Tmux()
    tmux("new-session", "-d", "-s", "bench", "-x", str(WIDTH), "-y", str(HEIGHT), line)
    try:
        return _watch(tmux, marker, out, pidfile, timeout)
    finally:
        tmux.kill_server()
        for p in (out, pidfile):
            p.unlink(missing_ok=True)


def _watch(tmux: Tmux, marker: re.Pattern[str], out: Path, pidfile: Path, timeout: float) -> Screen:
    deadline = time.monotonic() + timeout
    while len(fields := _read_fields(pidfile)) < 2:  # the wrapper writes it after starting
        if time.monotonic() > deadline:
            return Screen(None, None, "(the wrapper never started)", False)
        time.sleep(0.01)
    pid_s, start_s = fields[:2]
    pid, start = int(pid_s), float(start_s)
    seconds, screen = None, ""
    while time.monotonic() < start + timeout:
        screen = tmux("capture-pane", "-p", "-t", "bench", check=False)
        now = time.monotonic()
        if marker.search(screen):
            seconds = now - start
            break
        if out.exists():
            return Screen(None, _rss(out), screen, True)
        time.sleep(POLL_S)
    _end(pid)
    return Screen(seconds, _rss(out, wait=10.0), screen, False)


def _read_fields(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except FileNotFoundError:
        return []


def _end(pid: int) -> None:
    """SIGTERM the tool (it was started by our wrapper), SIGKILL if it lingers."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):
        time.sleep(0.05)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _rss(out: Path, wait: float = 0.0) -> float | None:
    deadline = time.monotonic() + wait
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not out.exists():
        return None
    return json.loads(out.read_text())["rss_kib"] / 1024


if __name__ == "__main__":
    if len(sys.argv) > 4 and sys.argv[1] == "wrap" and sys.argv[3] == "--":
        wrap(Path(sys.argv[2]), sys.argv[4:])
    else:
        raise SystemExit("usage: peers_tmux.py wrap OUT -- CMD...")
