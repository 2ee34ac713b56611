"""The cache entry's background writes (store.EntryWriter): a small table is narrowed,
compressed and written by one thread while the conversion builds the next; the entry is
the same as one written in line, an error in the background is the conversion's error,
and nothing is left behind when either side fails."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

from tuiperf.errors import BadReportError, CacheError
from tuiperf.load.cache import store
from tuiperf.load.cache.store import Cache, CacheKey
from tuiperf.load.open import OpenOptions, open_trace


@pytest.fixture
def report(tmp_path: Path, nsys_dir: Path) -> Path:
    p = tmp_path / "run.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", p)
    return p


def _entry_tables(root: Path) -> dict[str, pa.Table]:
    (entry,) = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    return {f.name: store.read_ipc(f) for f in sorted(entry.glob("*.arrow"))}


def test_entry_written_behind_equals_one_written_in_line(
    report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    behind = open_trace(report, OpenOptions(cache_dir=tmp_path / "behind"))
    monkeypatch.setattr(store, "OVERLAP_UP_TO", -1)  # every table in line
    in_line = open_trace(report, OpenOptions(cache_dir=tmp_path / "in_line"))
    a, b = _entry_tables(tmp_path / "behind"), _entry_tables(tmp_path / "in_line")
    assert list(a) == list(b) and len(a) > 5
    for name in a:
        assert a[name].equals(b[name], check_metadata=True), name
    assert behind.counts() == in_line.counts()


class _Spy:
    """Wraps store.write_ipc: which threads wrote, how many writes ran at once."""

    def __init__(self, delay: float = 0.0, fail_at: int = 0) -> None:
        self.real = store.write_ipc
        self.delay, self.fail_at = delay, fail_at
        self.calls = 0
        self.running = self.most = 0
        self.threads: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, path, table, *args, **kwargs):  # type: ignore[no-untyped-def]
        with self.lock:
            self.calls += 1
            n = self.calls
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.append(threading.current_thread().name)
        try:
            time.sleep(self.delay)
            if n == self.fail_at:
                raise OSError(28, "No space left on device")
            self.real(path, table, *args, **kwargs)
        finally:
            with self.lock:
                self.running -= 1


def test_small_tables_go_behind_one_at_a_time(
    report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy(delay=0.01)
    monkeypatch.setattr(store, "write_ipc", spy)
    open_trace(report, OpenOptions(cache_dir=tmp_path / "c"))
    assert spy.calls > 5
    assert spy.most == 1  # never two writes at once: one table in flight at most
    assert set(spy.threads) <= {t for t in spy.threads if t.startswith("tuiperf-entry")}


def test_a_table_over_the_limit_is_written_in_line(
    report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy()
    monkeypatch.setattr(store, "write_ipc", spy)
    monkeypatch.setattr(store, "OVERLAP_UP_TO", 0)  # over it: any table with a byte
    open_trace(report, OpenOptions(cache_dir=tmp_path / "c"))
    assert spy.calls > 5
    assert set(spy.threads) == {threading.current_thread().name}


@pytest.mark.parametrize("fail_at", [1, 3, "last"])
def test_a_failed_background_write_is_the_conversions_error(
    fail_at: int | str, report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failing on the first table (seen at the next add), a middle one, or the last (seen
    only when the writer finishes): the same CacheError, and no entry, no temp folder."""
    total = _Spy()
    monkeypatch.setattr(store, "write_ipc", total)
    open_trace(report, OpenOptions(cache_dir=tmp_path / "count"))
    spy = _Spy(fail_at=total.calls if fail_at == "last" else int(fail_at))
    monkeypatch.setattr(store, "write_ipc", spy)
    root = tmp_path / "c"
    with pytest.raises(CacheError, match="No space left"):
        open_trace(report, OpenOptions(cache_dir=root))
    assert list(root.iterdir()) == []
    assert Cache(root).load(CacheKey.for_source(report, "nsys-sqlite")) is None


def test_a_failed_conversion_waits_for_the_write_in_flight(
    report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conversion fails while a slow write runs: the temporary folder is removed after
    that write ends (not recreated or left half-removed by it), and the error is the
    conversion's."""
    spy = _Spy(delay=0.3)
    monkeypatch.setattr(store, "write_ipc", spy)
    real_add = store.EntryWriter.add

    def add_then_fail(self, name, table):  # type: ignore[no-untyped-def]
        real_add(self, name, table)
        if name == "kernels":
            raise BadReportError("damaged after the kernels")

    monkeypatch.setattr(store.EntryWriter, "add", add_then_fail)
    root = tmp_path / "c"
    with pytest.raises(BadReportError, match="damaged after the kernels"):
        open_trace(report, OpenOptions(cache_dir=root))
    assert spy.running == 0
    assert list(root.iterdir()) == []
