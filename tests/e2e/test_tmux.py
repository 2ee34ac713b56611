"""End to end: the real `tuiperf` console script in a real terminal (tmux), read back with
`capture-pane`. `make test` installs tmux (apt package `tmux`) when it is missing."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
SCRIPT = Path(sys.executable).parent / "tuiperf"

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")


def tmux(*args: str) -> str:
    out = subprocess.run([TMUX or "tmux", *args], capture_output=True, text=True, check=True)
    return out.stdout


class Terminal:
    def __init__(self, name: str) -> None:
        self.name = name

    def screen(self) -> str:
        return tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, text: str, timeout: float = 60.0, gone: bool = False) -> str:
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            if (text in screen) != gone:
                return screen
            time.sleep(0.2)
        what = "never went away" if gone else "never appeared"
        raise AssertionError(f"{text!r} {what}; the screen was:\n{screen}")

    def keys(self, *keys: str) -> None:
        tmux("send-keys", "-t", self.name, *keys)

    def dead(self) -> tuple[bool, str]:
        out = tmux("display-message", "-p", "-t", self.name, "#{pane_dead} #{pane_dead_status}")
        dead, _, status = out.strip().partition(" ")
        return dead == "1", status


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[callable]:
    names: list[str] = []

    def start(*args: str, width: int = 120, height: int = 36) -> Terminal:
        name = f"tuiperf-e2e-{uuid.uuid4().hex[:8]}"
        env = {"TUIPERF_CACHE_DIR": str(tmp_path / "cache"), "LANG": "C.UTF-8"}
        cmd = " ".join([*(f"{k}={v}" for k, v in env.items()), str(SCRIPT), *args])
        tmux("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), f"env {cmd}")
        tmux("set-option", "-t", name, "remain-on-exit", "on")
        names.append(name)
        return Terminal(name)

    yield start
    for name in names:
        subprocess.run([TMUX or "tmux", "kill-session", "-t", name], capture_output=True)


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tuiperf console script is not installed")
def test_the_bundled_sample_opens_zooms_and_quits(terminal):
    term = terminal()
    screen = term.wait_for("14–186 ms")
    assert "vit_range (bundled sample)" in screen
    assert "stream 7 kernels" in screen and "pt_autograd_0" in screen
    term.keys("+")
    zoomed = term.wait_for("14–186 ms", gone=True)
    assert "/col" in zoomed
    term.keys(".", "Enter")
    details = term.wait_for("Launched by")
    assert "KERNEL" in details
    term.keys("q")
    end = time.monotonic() + 20
    while time.monotonic() < end and not term.dead()[0]:
        time.sleep(0.2)
    assert term.dead() == (True, "0")


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tuiperf console script is not installed")
def test_ascii_mode_at_80x24(terminal):
    term = terminal("--ascii", width=80, height=24)
    screen = term.wait_for("14-186 ms")
    body = screen.splitlines()[1:-1]
    assert all(line.isascii() for line in body), screen
    term.keys("C-q")
