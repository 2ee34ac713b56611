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

from tests.conftest import nsys_report

TMUX = shutil.which("tmux")
SCRIPT = Path(sys.executable).parent / "tuiperf"

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")


def tmux(socket: str, *args: str) -> str:
    """Run tmux on this test's own server (`-L socket`), so that no test races another
    test's server while it shuts down."""
    cmd = [TMUX or "tmux", "-L", socket, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return out.stdout


class Terminal:
    def __init__(self, name: str, rc_file: Path) -> None:
        self.name = name
        self.rc_file = rc_file

    def tmux(self, *args: str) -> str:
        return tmux(self.name, *args)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, *texts: str, timeout: float = 60.0, gone: bool = False) -> str:
        """Wait until every text is on the screen (or, with gone, none is). A frame can be
        caught half drawn, so callers name everything they are about to assert on."""
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            found = [text in screen for text in texts]
            if (not any(found)) if gone else all(found):
                return screen
            time.sleep(0.2)
        what = "never went away" if gone else "never all appeared"
        raise AssertionError(f"{texts!r} {what}; the screen was:\n{screen}")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def exit_status(self, timeout: float = 20.0) -> str | None:
        """The program's exit status, written by the shell that ran it (tmux's own
        pane_dead_status is empty on some versions), or None while it still runs."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.rc_file.exists() and self.rc_file.read_text().strip():
                return self.rc_file.read_text().strip()
            time.sleep(0.2)
        return None


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[callable]:
    names: list[str] = []

    def start(
        *args: str, width: int = 120, height: int = 36, env: dict[str, str] | None = None
    ) -> Terminal:
        name = f"tuiperf-e2e-{uuid.uuid4().hex[:8]}"
        env = {
            "TUIPERF_CACHE_DIR": str(tmp_path / "cache"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            **(env or {}),
        }
        rc_file = tmp_path / f"{name}.rc"
        program = " ".join([*(f"{k}={v}" for k, v in env.items()), str(SCRIPT), *args])
        cmd = f"sh -c 'env {program}; echo $? > {rc_file}'"
        size = ["-x", str(width), "-y", str(height)]
        # remain-on-exit is set before the command starts, so a fast exit is still seen
        tmux(name, "new-session", "-d", "-s", name, *size, "sleep 3600")
        tmux(name, "set-option", "-t", name, "remain-on-exit", "on")
        tmux(name, "respawn-pane", "-k", "-t", name, cmd)
        names.append(name)
        return Terminal(name, rc_file)

    yield start
    for name in names:
        subprocess.run([TMUX or "tmux", "-L", name, "kill-server"], capture_output=True)


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tuiperf console script is not installed")
def test_the_bundled_sample_opens_zooms_and_quits(terminal):
    term = terminal()
    screen = term.wait_for("14–186 ms", "stream 7 kernels", "python3 NVTX")
    assert "vit_range (bundled sample)" in screen
    term.keys("+")
    zoomed = term.wait_for("14–186 ms", gone=True)
    assert "/col" in zoomed
    term.keys(".", "Enter")
    details = term.wait_for("Launched by")
    assert "KERNEL" in details
    term.keys("q")
    assert term.exit_status() == "0"


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tuiperf console script is not installed")
def test_ascii_mode_at_80x24(terminal):
    term = terminal("--ascii", width=80, height=24)
    screen = term.wait_for("14-186 ms", "stream 7")
    body = screen.splitlines()[1:-1]
    assert all(line.isascii() for line in body), screen
    term.keys("C-q")
    assert term.exit_status() == "0"


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tuiperf console script is not installed")
def test_no_color_opens_and_quits_cleanly(terminal):
    # NO_COLOR's Monochrome filter crashed on a blank strip without a style, and the crash
    # still ended with status 0
    for _ in range(3):  # the crash came in most launches, not all
        term = terminal(str(nsys_report("cnn_osrt")), env={"NO_COLOR": "1"})
        term.wait_for("stream 7 kernels", "Events · Kernels (")
        term.keys("q")
        assert term.exit_status() == "0", term.screen()


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tuiperf console script is not installed")
def test_ascii_mode_scrollbars_and_maximised_timeline(terminal):
    term = terminal("--ascii", width=80, height=24)
    term.wait_for("14-186 ms", "Events | Kernels (2,560)", "0.015137")
    term.keys("2")
    term.wait_for("Show on timeline")  # the table has the focus
    term.keys(*["C-d"] * 60)  # rows 180ff: the scrollbar thumb has partial ends
    term.wait_for("0.015137", gone=True)  # the first row scrolled away
    screen = term.wait_for("Events | Kernels", "0.023")
    assert all(line.isascii() for line in screen.splitlines()), screen
    term.keys("1", "m")  # the status line is hidden: the window and scale stay on screen
    term.wait_for("Events | Kernels", "? help", gone=True)
    screen = term.wait_for("14-186 ms", "/col")
    term.keys("q")
    assert term.exit_status() == "0"
