"""The conversion cache: reuse, invalidation, damage, races and atomicity."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tuiperf.errors import CacheError
from tuiperf.load.cache.store import Cache, CacheKey
from tuiperf.load.open import OpenOptions, open_trace


def entries(cache: Path) -> list[Path]:
    return sorted(d for d in cache.iterdir() if d.is_dir() and not d.name.startswith("."))


@pytest.fixture
def report(tmp_path: Path, nsys_dir: Path) -> Path:
    p = tmp_path / "run.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", p)
    return p


def test_second_open_is_from_cache_and_memory_mapped(
    report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tuiperf.load.cache import store

    # tables over store.COMPRESS_UP_TO (here: all) are mapped; smaller ones are compressed
    # and read whole (test_cache_small_compressed.py)
    monkeypatch.setattr(store, "COMPRESS_UP_TO", -1)
    opts = OpenOptions(cache_dir=tmp_path / "c")
    first = open_trace(report, opts)
    assert not first.meta.from_cache
    second = open_trace(report, opts)
    assert second.meta.from_cache
    assert second.counts() == first.counts()
    buf = second.table("kernels")["start"].chunks[0].buffers()[1]
    assert not buf.is_mutable  # a view of the mapped file, not a private copy
    assert len(entries(tmp_path / "c")) == 1


def test_changed_source_replaces_the_stale_entry(report: Path, tmp_path: Path) -> None:
    opts = OpenOptions(cache_dir=tmp_path / "c")
    open_trace(report, opts)
    old = entries(tmp_path / "c")
    later = time.time() + 10
    os.utime(report, (later, later))
    t = open_trace(report, opts)
    assert not t.meta.from_cache
    new = entries(tmp_path / "c")
    assert len(new) == 1 and new != old


@pytest.mark.parametrize(
    "damage", ["delete_manifest", "truncate_table", "garbage_manifest", "wrong_rows"]
)
def test_damaged_entry_is_rebuilt(damage: str, report: Path, tmp_path: Path) -> None:
    opts = OpenOptions(cache_dir=tmp_path / "c")
    open_trace(report, opts)
    (entry,) = entries(tmp_path / "c")
    if damage == "delete_manifest":
        (entry / "manifest.json").unlink()
    elif damage == "truncate_table":
        p = entry / "kernels.arrow"
        p.write_bytes(p.read_bytes()[:100])
    elif damage == "garbage_manifest":
        (entry / "manifest.json").write_text("{not json")
    else:
        m = json.loads((entry / "manifest.json").read_text())
        m["tables"]["kernels"] += 1
        (entry / "manifest.json").write_text(json.dumps(m))
    t = open_trace(report, opts)
    assert not t.meta.from_cache
    assert t.table("kernels").num_rows == 2560
    assert open_trace(report, opts).meta.from_cache


def test_no_cache_writes_nothing(report: Path, tmp_path: Path) -> None:
    t = open_trace(report, OpenOptions(cache_dir=tmp_path / "c", use_cache=False))
    assert t.table("kernels").num_rows == 2560
    assert not (tmp_path / "c").exists()


def test_leftover_temp_of_dead_process_is_swept(report: Path, tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    stale = root / f".tmp-{dead}-abc"
    stale.mkdir()
    (stale / "kernels.arrow").write_bytes(b"half")
    open_trace(report, OpenOptions(cache_dir=root))
    assert not stale.exists()


def test_two_processes_open_at_once(report: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c"
    cmd = [
        sys.executable,
        "-m",
        "tuiperf",
        "summary",
        str(report),
        "--csv",
        "--cache-dir",
        str(cache),
    ]
    procs = [
        subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert len({o[0] for o in outs}) == 1
    assert len(entries(cache)) == 1
    assert not [d for d in cache.iterdir() if d.name.startswith(".tmp-")]


def test_key_depends_on_identity(report: Path) -> None:
    a = CacheKey.for_source(report, "nsys-sqlite")
    b = CacheKey.for_source(report, "kineto")
    assert a.path_hash != b.path_hash
    assert a == CacheKey.for_source(report, "nsys-sqlite")


def test_store_failure_leaves_no_entry(
    report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash while writing (here: a failing table write) leaves no half entry."""
    import tuiperf.load.cache.store as cache_mod

    calls = {"n": 0}
    real = cache_mod.write_ipc

    def failing(path, table, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        real(path, table, *args, **kwargs)

    monkeypatch.setattr(cache_mod, "write_ipc", failing)
    root = tmp_path / "c"
    with pytest.raises(CacheError, match="No space left"):
        open_trace(report, OpenOptions(cache_dir=root))
    assert list(root.iterdir()) == []
    assert Cache(root).load(CacheKey.for_source(report, "nsys-sqlite")) is None
