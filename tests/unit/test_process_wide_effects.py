"""What tuiperf changes for the whole process it runs in, it changes only for as long as it
needs to and puts back (issue 32, item 6): the SIGTERM handler of a headless command, an
Nsight Compute folder on sys.path while its `ncu_report` imports, fd 2 while `ncu_report`
parses a report on the main thread (never from a viewer's worker thread), and libstdc++
made global once, and only before a reader known to crash without it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import needs
from tuiperf import cli
from tuiperf.errors import BadReportError, MissingToolError
from tuiperf.load.ncu import rep as ncu_rep

#: the IAction methods every reader in use has (tests/data/ncu_api/ncu_versions.md)
METHODS = ("name", "metric_names", "metric_by_name", "rule_results", "rule_results_as_dicts")
FAKE_READER = (
    "import sys\n"
    "SEEN = list(sys.path)\n"
    f"IAction = type('IAction', (), {{m: (lambda self: ()) for m in {METHODS!r}}})\n"
)


def _no_reader_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a process that has not imported `ncu_report`, and finds none in the venv
    (sys.modules as it was comes back after the test)."""
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # type: ignore[arg-type]
    del sys.modules["ncu_report"]
    hidden = [p for p in sys.path if not any(Path(p or ".").glob("ncu_report*"))]
    monkeypatch.setattr(sys, "path", hidden)


def _install(tmp_path: Path, version: str, text: str = FAKE_READER) -> str:
    """An Nsight Compute install's `extras/python` folder holding a stand-in reader."""
    folder = tmp_path / "nsight-compute" / version / "extras" / "python"
    folder.mkdir(parents=True)
    (folder / "ncu_report.py").write_text(text)
    return str(folder)


def _count_shares(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(ncu_rep, "share_libstdcxx", lambda: bool(calls.append(1)))
    return calls


# --- sys.path ------------------------------------------------------------------------------


def test_an_install_folder_is_on_sys_path_for_the_import_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_reader_yet(monkeypatch)
    folder = _install(tmp_path, "2026.3.1")
    monkeypatch.setattr(ncu_rep, "_install_dirs", lambda: [folder])
    before = list(sys.path)
    mod = ncu_rep.import_ncu_report()
    assert mod.__file__ == os.path.join(folder, "ncu_report.py")
    assert folder in mod.SEEN  # it was there while the module ran
    assert sys.path == before


def test_sys_path_is_unchanged_when_no_install_imports(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_reader_yet(monkeypatch)
    broken = _install(tmp_path, "2026.3.1", "raise ImportError('no _ncu_report here')\n")
    monkeypatch.setattr(ncu_rep, "_install_dirs", lambda: [broken])
    before = list(sys.path)
    with pytest.raises(MissingToolError, match="needs NVIDIA's ncu_report module"):
        ncu_rep.import_ncu_report()
    assert sys.path == before


def test_a_folder_already_on_sys_path_stays_there(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """NCU_PYTHON_PATH's folder put on PYTHONPATH by the user is the user's to keep."""
    _no_reader_yet(monkeypatch)
    folder = _install(tmp_path, "2026.3.1")
    monkeypatch.setattr(ncu_rep, "_install_dirs", lambda: [folder])
    monkeypatch.setattr(sys, "path", [*sys.path, folder])
    ncu_rep.import_ncu_report()
    assert sys.path.count(folder) == 1


# --- libstdc++ --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "share"),
    [
        ("2025.3.1", True),  # the reader that crashes after pyarrow (ncu_versions.md)
        ("2024.1.0", True),  # older: never checked, so shared
        ("2026.1.9", True),
        ("2026.2.0", False),  # the first reader seen reading every metric either way
        ("2026.3.1", False),
        ("of unknown version", True),
    ],
)
def test_which_readers_get_libstdcxx_shared(version: str, share: bool) -> None:
    assert ncu_rep.needs_shared_libstdcxx(version) is share


@pytest.mark.parametrize(("version", "calls"), [("2025.3.1", 1), ("2026.3.1", 0)])
def test_libstdcxx_is_shared_only_before_a_reader_that_needs_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: str, calls: int
) -> None:
    _no_reader_yet(monkeypatch)
    folder = _install(tmp_path, version)
    monkeypatch.setattr(ncu_rep, "_install_dirs", lambda: [folder])
    shares = _count_shares(monkeypatch)
    ncu_rep.import_ncu_report()
    assert len(shares) == calls


def test_nothing_is_shared_once_the_reader_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    """The load order decides the crash: sharing after the import would change nothing."""
    mod = types.ModuleType("ncu_report")
    mod.__file__ = "nvidia/nsight-compute/2025.3.1/extras/python/ncu_report.py"
    mod.IAction = type("IAction", (), {m: lambda self: () for m in METHODS})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ncu_report", mod)
    shares = _count_shares(monkeypatch)
    assert ncu_rep.import_ncu_report() is mod
    assert ncu_rep.import_ncu_report() is mod
    assert shares == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the dynamic linker's scopes")
def test_share_libstdcxx_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    opened: list[str] = []
    monkeypatch.setattr(ctypes, "CDLL", lambda name, mode=0: opened.append(name))
    ncu_rep.share_libstdcxx.cache_clear()
    try:
        assert [ncu_rep.share_libstdcxx() for _ in range(3)] == [True] * 3
    finally:
        ncu_rep.share_libstdcxx.cache_clear()  # the real one again for later tests
    assert opened == ["libstdc++.so.6"]


# --- SIGTERM --------------------------------------------------------------------------------


def _sentinel(signum: int, frame: object) -> None:
    raise AssertionError("the caller's own SIGTERM handler ran")


@pytest.fixture
def own_handler() -> Any:
    previous = signal.signal(signal.SIGTERM, _sentinel)
    yield _sentinel
    signal.signal(signal.SIGTERM, previous)


def _headless(monkeypatch: pytest.MonkeyPatch, body: Callable[[list[str]], int]) -> None:
    monkeypatch.setattr(cli, "_headless", body)


def test_the_sigterm_handler_is_the_commands_while_it_runs_then_the_callers_again(
    monkeypatch: pytest.MonkeyPatch, own_handler: Any
) -> None:
    seen: list[object] = []
    _headless(monkeypatch, lambda argv: seen.append(signal.getsignal(signal.SIGTERM)) or 0)
    assert cli.main(["info", "x.sqlite"]) == 0
    assert seen and seen[0] is not own_handler and callable(seen[0])
    assert signal.getsignal(signal.SIGTERM) is own_handler


def test_sigterm_ends_the_command_and_the_handler_is_restored(
    monkeypatch: pytest.MonkeyPatch, own_handler: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    def terminated(argv: list[str]) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
        return 0

    _headless(monkeypatch, terminated)
    assert cli.main(["info", "x.sqlite"]) == 128 + 15
    assert "tuiperf: terminated" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is own_handler


@pytest.mark.parametrize(
    "argv",
    [["info", "/nonexistent/r.sqlite"], ["summary", "--help"], ["no-such-command", "x"]],
)
def test_the_handler_is_restored_on_errors_and_exits(
    own_handler: Any, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.suppress(SystemExit):  # argparse's --help and usage errors
        cli.main(argv)
    assert signal.getsignal(signal.SIGTERM) is own_handler


# --- fd 2 ---------------------------------------------------------------------------------------


def _reader(load_report: Callable[[str], object], monkeypatch: pytest.MonkeyPatch) -> None:
    mod = types.ModuleType("ncu_report")
    mod.__file__ = "/site-packages/ncu_report/__init__.py"
    mod.IAction = type("IAction", (), {m: lambda self: () for m in METHODS})  # type: ignore[attr-defined]
    mod.load_report = load_report  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ncu_report", mod)


class _Ctx:
    def num_ranges(self) -> int:
        return 1


def _report(tmp_path: Path) -> Path:
    path = tmp_path / "r.ncu-rep"
    path.write_bytes(ncu_rep.MAGIC + b"\0" * 64)
    return path


def test_a_loader_thread_leaves_fd2_to_the_main_thread(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The viewer reads a report in a worker while its main thread draws on fd 2."""
    inside, written = threading.Event(), threading.Event()

    def load_report(path: str) -> _Ctx:
        inside.set()
        assert written.wait(10)
        return _Ctx()

    _reader(load_report, monkeypatch)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(ncu_rep.open_context(_report(tmp_path))))
    worker.start()
    assert inside.wait(10)
    os.write(2, b"drawn while the worker reads\n")
    written.set()
    worker.join(10)
    os.write(2, b"drawn after\n")
    assert len(done) == 1
    err = capfd.readouterr().err
    assert "drawn while the worker reads" in err and "drawn after" in err


def test_the_main_thread_silences_the_reader_for_the_call_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    def load_report(path: str) -> _Ctx:
        os.write(2, b"E0000 message_lite.cc:195] Can't parse message\n")
        raise RuntimeError("bad file")

    _reader(load_report, monkeypatch)
    os.write(2, b"before\n")
    with pytest.raises(BadReportError, match="cannot read the Nsight Compute report"):
        ncu_rep.open_context(_report(tmp_path))
    os.write(2, b"after\n")
    err = capfd.readouterr().err
    assert "message_lite" not in err and "before" in err and "after" in err


def test_a_damaged_report_is_one_line_with_the_real_reader(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Random bytes after the header: the reader's protobuf logs `Can't parse message of
    type ...` on fd 2 (ncu-report 2026.3.1); the user sees tuiperf's one line only."""
    needs.module("ncu_report")
    path = tmp_path / "r.ncu-rep"
    path.write_bytes(ncu_rep.MAGIC + os.urandom(1000))
    assert cli.main(["ncu", str(path), "--no-cache"]) == 1
    out, err = capfd.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("tuiperf: error: ") and "parse" not in err
