"""End to end: the real `tuiperf` console script in a real terminal (tmux), read back with
`capture-pane`. `make test` installs tmux (apt package `tmux`) when it is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import NSYS_DATA, nsys_report
from tests.support import needs
from tests.support.cli import PYTHON

SCRIPT = needs.file(Path(PYTHON).parent / "tuiperf", "the tuiperf console script")
#: the stand-in for nsys that tests/unit/test_nsys_rep.py describes
STANDIN = Path(__file__).parents[1] / "unit" / "standin" / "nsys"

TMUX = needs.program("tmux")  # make test installs it (apt package `tmux`)


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


def test_ascii_mode_at_80x24(terminal):
    term = terminal("--ascii", width=80, height=24)
    screen = term.wait_for("14-186 ms", "stream 7")
    body = screen.splitlines()[1:-1]
    assert all(line.isascii() for line in body), screen
    term.keys("C-q")
    assert term.exit_status() == "0"


def test_no_color_opens_and_quits_cleanly(terminal):
    # NO_COLOR's Monochrome filter crashed on a blank strip without a style, and the crash
    # still ended with status 0
    for _ in range(3):  # the crash came in most launches, not all
        term = terminal(str(nsys_report("cnn_osrt")), env={"NO_COLOR": "1"})
        term.wait_for("stream 7 kernels", "Events · Kernels (")
        term.keys("q")
        assert term.exit_status() == "0", term.screen()


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


@pytest.mark.parametrize("quit_early", [False, True], ids=["opens", "quit-while-exporting"])
def test_nsys_rep_exports_with_progress_once(terminal, tmp_path: Path, quit_early: bool):
    """`tuiperf run.nsys-rep`: nsys (the stand-in of tests/unit) runs once, its progress is
    on screen, the export is removed once read; a user who quits meanwhile stops it, and
    nothing is left behind."""
    reports, exports = tmp_path / "reports", tmp_path / "exports"
    reports.mkdir()
    shutil.copy(NSYS_DATA / "cnn_osrt.nsys-rep", reports)
    shutil.copytree(
        nsys_report("cnn_osrt").parent / "cnn_osrt_arrowdir", exports / "cnn_osrt_arrowdir"
    )
    log = tmp_path / "calls.jsonl"
    env = {
        "TUIPERF_NSYS": str(STANDIN),
        "STANDIN_EXPORTS": str(exports),
        "STANDIN_ARGV_LOG": str(log),
        "STANDIN_SECONDS": "30" if quit_early else "2",
    }
    term = terminal(str(reports / "cnn_osrt.nsys-rep"), env=env)
    term.wait_for("nsys export → arrowdir", "34,684 events")
    if quit_early:
        term.keys("q")
    else:
        term.wait_for("stream 7 kernels", "Events · Kernels (")
        term.keys("q")
    assert term.exit_status() == "0", term.screen()
    calls = log.read_text().splitlines()
    assert len(calls) == 1, calls
    pid = json.loads(calls[0])["pid"]
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        state = "gone"
    assert state == "gone" or "zombie" in state, state
    cache = tmp_path / "cache"
    assert not (cache / "exports").exists() or not any((cache / "exports").iterdir())
    entries = [d for d in cache.iterdir() if d.name != "exports"]
    assert len(entries) == (0 if quit_early else 1), entries


def test_memory_lanes_and_pane_of_a_torch_profiler_trace(terminal):
    """torch.profiler's memory events: the lanes (PyTorch's peaks, expect_leak_kineto.json),
    M opens the pane, g Enter goes back to the timeline at the peak (issue 33)."""
    data = Path(__file__).parents[1] / "data" / "gpumem"
    want = json.loads((data / "expect_leak_kineto.json").read_text())
    alloc = f"alloc {want['max_memory_allocated'] / 1e6:.2f} MB"
    term = terminal(str(data / "leak_kineto.json.gz"), width=80, height=24)
    term.wait_for(alloc, f"reserved {want['max_memory_reserved'] / 1e6:.2f} MB")
    term.keys("M")
    term.wait_for("peak allocated", "live at the peak by source line")
    term.keys("g", "Enter")
    term.wait_for(alloc, "stream 7 kernels")
    term.keys("q")
    assert term.exit_status() == "0"
