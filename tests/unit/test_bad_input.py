"""Every bad input: one line on stderr, the right exit code, input untouched, no cache debris."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import assert_one_line_error, cache_is_clean, digest, run_cli


def _truncated(src: Path, dst: Path, frac: float) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * frac)])
    return dst


#: seeds of the random bytes: each case is the same file on every run
SEED = 17


def _random_bytes(n: int, seed: int = SEED) -> bytes:
    return random.Random(seed).randbytes(n)


def _corrupt_pages(src: Path, dst: Path) -> Path:
    """512 random bytes in every third 4 KiB page from the third on."""
    data = bytearray(src.read_bytes())
    rng = random.Random(SEED)
    for off in range(8192, len(data), 4096 * 3):
        data[off : off + 512] = rng.randbytes(512)
    dst.write_bytes(bytes(data))
    return dst


def _damaged_btree(src: Path, dst: Path, how: str) -> Path:
    """The API table's B-tree (big enough for the page reader) damaged in one place."""
    dst.write_bytes(src.read_bytes())
    db = sqlite3.connect(dst)
    (root,) = db.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_RUNTIME'"
    ).fetchone()
    (size,) = db.execute("PRAGMA page_size").fetchone()
    db.close()
    data = bytearray(dst.read_bytes())
    at = (root - 1) * size
    assert data[at] == 0x05  # an interior page
    if how == "loop":  # its right-most child is itself
        data[at + 8 : at + 12] = root.to_bytes(4, "big")
    else:  # its first child, a leaf: garbage records (SQLite says it is malformed;
        # garbage cell pointers, by contrast, get random answers from SQLite itself)
        first = int.from_bytes(data[at + 12 : at + 14], "big")
        leaf = (int.from_bytes(data[at + first : at + first + 4], "big") - 1) * size
        data[leaf + 200 : leaf + 712] = bytes(range(256)) * 2
    dst.write_bytes(bytes(data))
    return dst


def _not_nsys(dst: Path) -> Path:
    db = sqlite3.connect(dst)
    db.execute("create table people (name text, age int)")
    db.execute("insert into people values ('a', 1)")
    db.commit()
    db.close()
    return dst


def _kernel_value(src: Path, dst: Path, value: object) -> Path:
    """One kernel row whose deviceId SQLite (dynamically typed) holds as `value`."""
    dst.write_bytes(src.read_bytes())
    dst.chmod(0o644)
    db = sqlite3.connect(dst)
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = ? WHERE rowid = 7", (value,))
    db.commit()
    db.close()
    return dst


def _arrowdir_bad_text(src: Path, dst: Path) -> Path:
    """An arrowdir export whose StringIds are not UTF-8 (Arrow's IPC reader does not check
    text)."""
    import shutil

    import pyarrow as pa
    import pyarrow.ipc as ipc

    shutil.copytree(src, dst)
    path = dst / "StringIds.arrow"
    path.chmod(0o644)
    t = ipc.open_stream(path.read_bytes()).read_all()
    raw = [None if v is None else b"\xff" + v.encode() for v in t["value"].to_pylist()]
    bad = pa.array(raw, pa.binary()).view(pa.string())  # a view is not checked either
    t = t.set_column(t.schema.get_field_index("value"), "value", bad)
    with pa.OSFile(str(path), "wb") as f, ipc.new_stream(f, t.schema) as w:
        w.write_table(t)
    return dst


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


CASES = {
    "empty file": lambda d, s: _write(d / "empty.sqlite", b""),
    "random bytes .nsys-rep": lambda d, s: _write(d / "r.nsys-rep", _random_bytes(4096)),
    "random bytes .sqlite": lambda d, s: _write(d / "r.sqlite", _random_bytes(4096)),
    "SQLite header then random bytes": lambda d, s: _write(
        d / "h.sqlite", s.read_bytes()[:100] + _random_bytes(4096 * 8 - 100)
    ),
    "truncated sqlite 30%": lambda d, s: _truncated(s, d / "t30.sqlite", 0.3),
    "truncated sqlite 90%": lambda d, s: _truncated(s, d / "t90.sqlite", 0.9),
    "corrupt pages": lambda d, s: _corrupt_pages(s, d / "c.sqlite"),
    "B-tree page pointing at itself": lambda d, s: _damaged_btree(s, d / "l.sqlite", "loop"),
    "garbage records on a leaf": lambda d, s: _damaged_btree(s, d / "g.sqlite", "records"),
    "sqlite that is not nsys": lambda d, s: _not_nsys(d / "other.sqlite"),
    "text where a number belongs": lambda d, s: _kernel_value(s, d / "txt.sqlite", "GPU 0"),
    "a blob where a number belongs": lambda d, s: _kernel_value(s, d / "b.sqlite", b"\x00\x01"),
    "a number beyond its column's type": lambda d, s: _kernel_value(s, d / "n.sqlite", 1 << 40),
    "arrowdir with text that is not UTF-8": lambda d, s: _arrowdir_bad_text(
        s.parent / "cnn_osrt_arrowdir", d / "ad"
    ),
    "directory without export": lambda d, s: _mkdir(d / "emptydir"),
    "unknown text": lambda d, s: _write(d / "notes.txt", b"hello\n"),
    "json that is not a trace": lambda d, s: _write(d / "x.json", b'{"a": 1}'),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_report(case: str, tmp_path: Path, nsys_dir: Path) -> None:
    src = nsys_dir / "vit_range.sqlite"
    bad = CASES[case](tmp_path, src)
    before = digest(bad)
    cache = tmp_path / "cache"
    res = run_cli("summary", str(bad), "--csv", "--cache-dir", str(cache))
    assert_one_line_error(res, 1)
    assert res.stdout == ""
    assert digest(bad) == before
    assert cache_is_clean(cache)


def test_missing_path_is_usage_error(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("info", str(tmp_path / "nope.sqlite")), 2)


def test_unknown_report_name(nsys_dir: Path) -> None:
    res = run_cli("summary", str(nsys_dir / "vit_range.sqlite"), "-r", "bogus")
    assert_one_line_error(res, 2)


def test_unwritable_cache_dir(tmp_path: Path, nsys_dir: Path) -> None:
    if os.geteuid() == 0:
        blocker = tmp_path / "file"  # root ignores permissions: use a file where a dir must be
        blocker.write_text("x")
        cache = blocker / "cache"
    else:
        cache = tmp_path / "ro"
        cache.mkdir()
        cache.chmod(0o500)
    res = run_cli("summary", str(nsys_dir / "vit_range.sqlite"), "--cache-dir", str(cache))
    assert_one_line_error(res, 1)
    assert "--no-cache" in res.stderr


def test_unreadable_file(
    tmp_path: Path, nsys_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    p = tmp_path / "secret.sqlite"
    p.write_bytes((nsys_dir / "vit_range.sqlite").read_bytes())
    p.chmod(0)
    if os.geteuid() != 0:
        assert_one_line_error(run_cli("info", str(p)), 1)
        return
    # root reads every file whatever its mode: refuse it the way the kernel would refuse
    # anyone else, at every way in (open(), os.open, SQLite's own open)
    import builtins
    import sqlite3

    from tuiperf.cli import main

    def deny(name: object) -> None:
        if str(name).find(str(p)) >= 0:
            raise PermissionError(13, "Permission denied", str(p))

    real_open, real_os_open, real_connect = builtins.open, os.open, sqlite3.connect
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: deny(f) or real_open(f, *a, **k))
    monkeypatch.setattr(os, "open", lambda f, *a, **k: deny(f) or real_os_open(f, *a, **k))
    monkeypatch.setattr(sqlite3, "connect", lambda f, *a, **k: deny(f) or real_connect(f, *a, **k))
    code = main(["info", str(p), "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "ermission" in err or "cannot read" in err


def test_output_not_half_written(tmp_path: Path, nsys_dir: Path) -> None:
    """-o into a missing folder fails cleanly and leaves nothing behind."""
    out = tmp_path / "missing" / "out.csv"
    res = run_cli("summary", str(nsys_dir / "vit_range.sqlite"), "--csv", "-o", str(out))
    assert_one_line_error(res, 1)
    assert not out.parent.exists()


def test_no_traceback_without_debug_but_with_it(tmp_path: Path) -> None:
    p = tmp_path / "x.nsys-rep"
    p.write_bytes(b"garbage")
    res = run_cli("--debug", "info", str(p))
    assert res.returncode != 0
    assert "Traceback" in res.stderr
