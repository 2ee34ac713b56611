"""Cache files: holes where a buffer is all zeros, direct I/O only when asked for and with
a buffered fallback; the bytes read back the same."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tuiperf.load.cache.file_sink import FileSink
from tuiperf.load.cache.store import read_ipc, write_ipc


def _holes_supported(folder: Path) -> bool:
    probe = folder / "probe"
    with open(probe, "wb") as f:
        f.seek(1 << 20)
        f.write(b"x")
    sparse = probe.stat().st_blocks * 512 < 1 << 20
    probe.unlink()
    return sparse


def test_all_null_columns_become_holes_and_read_back(tmp_path: Path) -> None:
    n = 300_000
    rng = np.random.default_rng(7)
    data = rng.integers(-(2**62), 2**62, n)
    table = pa.table(
        {
            "start": pa.array(data),
            "return_value": pa.nulls(n, pa.int64()),
            "zeros": pa.array(np.zeros(n, np.int64)),
            "tail": pa.array(data[::-1].copy()),
            "small": pa.array(np.zeros(10, np.int64)).take(pa.array(np.zeros(n, np.int64))),
        }
    )
    path = tmp_path / "t.arrow"
    write_ipc(path, table)
    back = read_ipc(path)
    assert back.equals(table)
    assert back["return_value"].null_count == n
    if not _holes_supported(tmp_path):
        pytest.skip("this file system stores no holes")
    st = path.stat()
    # the two int64 columns of zeros (2.4 MB each) and the nulls' bitmap are not stored
    assert st.st_blocks * 512 <= st.st_size - 4 * n


def test_a_trailing_hole_keeps_the_file_size(tmp_path: Path) -> None:
    path = tmp_path / "raw"
    sink = FileSink(path)
    sink.write(b"head")
    sink.write(bytes(3 << 20))  # all zeros, at the very end
    assert sink.tell() == 4 + (3 << 20)
    sink.close()
    assert path.read_bytes() == b"head" + bytes(3 << 20)
    assert sink.closed


def test_small_or_nonzero_buffers_are_written(tmp_path: Path) -> None:
    path = tmp_path / "raw"
    sink = FileSink(path)
    block = bytearray(1 << 17)
    block[-1] = 1  # zero until its last byte: must not become a hole
    sink.write(bytes(100))
    sink.write(bytes(block))
    sink.close()
    assert path.read_bytes() == bytes(100) + bytes(block)
    assert os.path.getsize(path) == 100 + len(block)


def test_a_file_system_that_refuses_direct_writes_gets_buffered_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """O_DIRECT accepted at open but refused at the first write (EINVAL): the same bytes."""
    import errno

    import tuiperf.load.cache.file_sink as file_sink

    monkeypatch.setattr(file_sink, "_direct_io_ok", lambda path: hasattr(os, "O_DIRECT"))
    real_write = os.write
    refused = []

    def picky(fd: int, data: memoryview) -> int:
        import fcntl

        if hasattr(os, "O_DIRECT") and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            refused.append(len(data))
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(fd, data)

    monkeypatch.setattr(file_sink.os, "write", picky)
    payload = np.arange(700_000, dtype=np.int64).tobytes()
    path = tmp_path / "raw"
    sink = FileSink(path)
    sink.write(payload)
    sink.close()
    assert path.read_bytes() == payload
    if hasattr(os, "O_DIRECT"):
        assert refused  # the direct write was tried, then the buffered one


@pytest.mark.parametrize("fstype", ["nfs4", "fuse.sshfs", "cifs"])
def test_no_direct_io_on_network_file_systems(
    fstype: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tuiperf.load.cache.file_sink as file_sink

    monkeypatch.setenv("TUIPERF_DIRECT_IO", "1")
    monkeypatch.setattr(file_sink, "_fs_type", lambda folder: fstype)
    assert not file_sink._direct_io_ok(tmp_path / "x")
    monkeypatch.setattr(file_sink, "_fs_type", lambda folder: "ext4")
    assert file_sink._direct_io_ok(tmp_path / "x") == hasattr(os, "O_DIRECT")


@pytest.mark.parametrize("setting", [None, "", "0", "1"])
def test_direct_io_only_when_asked_for(
    setting: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    import tuiperf.load.cache.file_sink as file_sink

    if setting is None:
        monkeypatch.delenv("TUIPERF_DIRECT_IO", raising=False)
    else:
        monkeypatch.setenv("TUIPERF_DIRECT_IO", setting)
    monkeypatch.setattr(file_sink, "_fs_type", lambda folder: "ext4")
    sink = FileSink(tmp_path / "raw")
    try:
        flags = fcntl.fcntl(sink._fd, fcntl.F_GETFL)
    finally:
        sink.close()
    direct = bool(flags & getattr(os, "O_DIRECT", 0))
    assert direct == sink._direct
    if setting != "1":
        assert not direct  # buffered unless asked for
