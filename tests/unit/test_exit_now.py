"""`tuiperf` ends without the interpreter's teardown once a command is done (cli.exit_now):
its exit handlers still run, what it printed still arrives whole, its status is the
command's, a closed pipe is no error, and with a thread the interpreter would wait for it
exits as usual (that thread finishes first)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tuiperf.cli import exit_now

REPO = Path(__file__).resolve().parents[2]


def _script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=REPO
    )


def test_handlers_run_output_flushed_status_kept(tmp_path: Path) -> None:
    got = _script(
        tmp_path,
        """
        import atexit, sys
        from pathlib import Path
        from tuiperf.cli import exit_now
        atexit.register(lambda: Path(sys.argv[1], "handler").write_text("ran"))
        sys.stdout.write("x" * 100_000)  # buffered: a pipe is not a terminal
        sys.stderr.write("to stderr")
        exit_now(3)
        """,
    )
    assert got.returncode == 3
    assert got.stdout == "x" * 100_000
    assert got.stderr == "to stderr"
    assert (tmp_path / "handler").read_text() == "ran"


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    got = _script(
        tmp_path,
        """
        import sys, threading, time
        from pathlib import Path
        from tuiperf.cli import exit_now
        def late():
            time.sleep(0.3)
            Path(sys.argv[1], "late").write_text("done")
        threading.Thread(target=late).start()
        exit_now(5)
        """,
    )
    assert got.returncode == 5
    assert (tmp_path / "late").read_text() == "done"  # os._exit would have cut it


def test_in_process_with_a_live_thread_it_is_sys_exit() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        with pytest.raises(SystemExit) as e:
            exit_now(7)
        assert e.value.code == 7
    finally:
        stop.set()
        t.join()


def test_the_command_through_a_closed_pipe(tmp_path: Path) -> None:
    data = REPO / "tuiperf" / "sample" / "vit_range"
    # every API call as CSV: far more than a pipe holds, so the writer meets the closed end
    cmd = f"{sys.executable} -m tuiperf export {data} -t api -f csv | head -c 10"
    got = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, cwd=REPO
    )
    assert got.returncode == 0, got.stderr
    assert len(got.stdout) == 10
    assert "Exception" not in got.stderr and "Broken" not in got.stderr


def test_python_m_and_the_script_use_it() -> None:
    main_py = (REPO / "tuiperf" / "__main__.py").read_text()
    assert "run()" in main_py
    toml = (REPO / "pyproject.toml").read_text()
    assert 'tuiperf = "tuiperf.cli:run"' in toml
