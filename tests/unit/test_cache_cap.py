"""`tuiperf cache list|clear` and the cache's size cap (issue 37): sizes against os.stat
sums, last use against the stamp times set here, eviction order worked out by hand from
those times and sizes, entries in use (another process, or a reader mid-open) kept."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import PYTHON, assert_one_line_error, run_cli
from tuiperf.errors import UsageError
from tuiperf.load.cache import entries as cache_entries
from tuiperf.load.cache import store, usage
from tuiperf.load.cache.key import SCHEMA_VERSION
from tuiperf.load.open import OpenOptions, open_trace

NAMES = ("vit_range", "cnn_osrt", "lstm", "vit_amp")
#: last-use times set by hand (ns since the epoch): a, b, c used in the order a, c, b
T = {"a": 1_000 * 10**9, "b": 3_000 * 10**9, "c": 2_000 * 10**9}
#: ... the same in UTC (1000 s = 16 min 40 s)
ISO = {"a": "1970-01-01T00:16:40+00:00", "b": "1970-01-01T00:50:00+00:00",
       "c": "1970-01-01T00:33:20+00:00"}  # fmt: skip


@pytest.fixture
def reports(tmp_path: Path, nsys_dir: Path) -> dict[str, Path]:
    """Private copies of four fixtures: a, b, c, d."""
    out = {}
    for letter, name in zip("abcd", NAMES, strict=True):
        p = tmp_path / f"{letter}_{name}.sqlite"
        shutil.copy(nsys_dir / f"{name}.sqlite", p)
        out[letter] = p
    return out


def convert(report: Path, cache: Path, cap: int | None = None) -> None:
    trace = open_trace(report, OpenOptions(cache_dir=cache, cache_max=cap))
    assert trace.cache is not None
    trace.cache.release()  # as a process that has ended


def entry_dirs(cache: Path) -> dict[str, Path]:
    """Entry folders by the letter of their report (the stem starts with it)."""
    return {d.name[0]: d for d in cache.iterdir() if d.is_dir() and not d.name.startswith(".")}


def disk_bytes(folder: Path) -> int:
    return sum(
        os.stat(os.path.join(dp, f)).st_blocks * 512 for dp, _, fs in os.walk(folder) for f in fs
    )


def apparent_bytes(folder: Path) -> int:
    return sum(os.stat(os.path.join(dp, f)).st_size for dp, _, fs in os.walk(folder) for f in fs)


def set_last_used(entry: Path, ns: int) -> None:
    os.utime(entry / usage.LAST_USED, ns=(ns, ns))


def listing(cache: Path) -> dict:
    res = run_cli("cache", "list", "--json", "--cache-dir", str(cache))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def kernel_rows(report: Path) -> int:
    with sqlite3.connect(f"file:{report}?mode=ro", uri=True) as db:
        return db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]


def test_list_sizes_times_and_order(reports: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "c"
    for k in "abc":
        convert(reports[k], cache)
    dirs = entry_dirs(cache)
    for k in "abc":
        set_last_used(dirs[k], T[k])
    got = listing(cache)
    assert [Path(e["entry"]).name[0] for e in got["entries"]] == ["a", "c", "b"]
    for e in got["entries"]:
        d = Path(e["entry"])
        k = d.name[0]
        assert e["report"] == str(reports[k].resolve())
        assert e["bytes"] == disk_bytes(d) > 0
        assert e["apparent_bytes"] == apparent_bytes(d)
        assert e["last_used_ns"] == T[k]
        assert e["last_used"] == ISO[k]
        assert e["schema_version"] == SCHEMA_VERSION and e["current"] is True
    assert got["total_bytes"] == sum(disk_bytes(d) for d in dirs.values())
    assert got["cap_bytes"] is None
    text = run_cli("cache", "list", "--cache-dir", str(cache)).stdout.splitlines()
    assert [ln.split()[-1] for ln in text[1:4]] == [str(reports[k].resolve()) for k in "acb"]
    assert text[-1].startswith("3 entries, ") and text[-1].endswith("(no cap)")


def test_open_touches_the_stamp_and_rewrites_nothing(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    cache = tmp_path / "c"
    convert(reports["a"], cache)
    entry = entry_dirs(cache)["a"]
    set_last_used(entry, T["a"])
    before = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in entry.iterdir()}
    trace = open_trace(reports["a"], OpenOptions(cache_dir=cache))
    assert trace.meta.from_cache
    stamp = (entry / usage.LAST_USED).stat()
    assert stamp.st_mtime_ns > T["a"] and stamp.st_size == 0
    after = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in entry.iterdir()}
    assert {n: v for n, v in after.items() if n != usage.LAST_USED} == {
        n: v for n, v in before.items() if n != usage.LAST_USED
    }


def test_stored_summary_counts_as_a_use(reports: dict[str, Path], tmp_path: Path) -> None:
    cache = str(tmp_path / "c")
    args = ("summary", str(reports["a"]), "-r", "cuda_gpu_kern_sum", "--cache-dir", cache, "-q")
    assert run_cli(*args).returncode == 0  # computes, keeps the result in the entry
    entry = entry_dirs(Path(cache))["a"]
    set_last_used(entry, T["a"])
    assert run_cli(*args).returncode == 0  # from the stored result, no table loaded
    assert (entry / usage.LAST_USED).stat().st_mtime_ns > T["a"]


def _sizes_after_d(reports: dict[str, Path], tmp_path: Path) -> dict[str, int]:
    """Each entry's bytes on disk, from a scratch cache (conversions are deterministic)."""
    scratch = tmp_path / "scratch"
    for k in "abcd":
        convert(reports[k], scratch)
    return {k: disk_bytes(d) for k, d in entry_dirs(scratch).items()}


@pytest.mark.parametrize("slack", [0, -1])
def test_eviction_least_recently_used_first(
    reports: dict[str, Path], tmp_path: Path, slack: int
) -> None:
    size = _sizes_after_d(reports, tmp_path)
    cache = tmp_path / "c"
    for k in "abc":
        convert(reports[k], cache)
    for k, d in entry_dirs(cache).items():
        set_last_used(d, T[k])
    # by hand: a, c, b is the order of last use; d (the new entry) stays. A cap of exactly
    # b + c + d needs only a gone; one byte less needs c gone too
    cap = size["b"] + size["c"] + size["d"] + slack
    convert(reports["d"], cache, cap=cap)
    left = set(entry_dirs(cache))
    assert left == ({"b", "c", "d"} if slack == 0 else {"b", "d"})
    assert sum(disk_bytes(d) for d in entry_dirs(cache).values()) <= cap
    assert not [p for p in cache.iterdir() if p.name.startswith(".tmp-")]


def test_cap_smaller_than_one_entry_keeps_the_new_one(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    cache = tmp_path / "c"
    for k in "ab":
        convert(reports[k], cache)
    env = {"TUIPERF_CACHE_MAX": "1"}  # one byte
    res = run_cli("info", str(reports["d"]), "--cache-dir", str(cache), "--json", env=env)
    assert res.returncode == 0, res.stderr
    assert set(entry_dirs(cache)) == {"d"}
    assert json.loads(res.stdout)["rows"]["kernels"] == kernel_rows(reports["d"])
    again = open_trace(reports["d"], OpenOptions(cache_dir=cache, cache_max=1))
    assert again.meta.from_cache
    assert again.table("kernels").num_rows == kernel_rows(reports["d"])


_HOLDER = """
import sys
from pathlib import Path
from tuiperf.load.open import OpenOptions, open_trace
t = open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2])))
print("ready", flush=True)
sys.stdin.readline()
print(t.table("kernels").num_rows, flush=True)
"""


def test_entry_another_process_has_open_is_kept(reports: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "c"
    for k in "ab":
        convert(reports[k], cache)
    child = subprocess.Popen(
        [PYTHON, "-c", _HOLDER, str(reports["a"]), str(cache)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        convert(reports["d"], cache, cap=1)
        assert set(entry_dirs(cache)) == {"a", "d"}  # b went; a is in use
        res = run_cli("cache", "clear", "--cache-dir", str(cache))
        assert res.stdout.splitlines()[-1] == "kept 1 entry a running tuiperf has open"
        assert set(entry_dirs(cache)) == {"a"}
        child.stdin.write("\n")
        child.stdin.flush()
        assert int(child.stdout.readline()) == kernel_rows(reports["a"])
    finally:
        child.kill() if child.poll() is None else None
        child.wait()
    res = run_cli("cache", "clear", "--cache-dir", str(cache))
    assert res.stdout.startswith("removed 1 entry ")
    assert entry_dirs(cache) == {}


def test_open_while_an_eviction_runs(
    reports: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader in the middle of opening an entry holds it: the eviction that runs then
    (here: at the reader's first table) leaves it; an eviction that came first makes the
    reader convert anew. Either way the numbers are the report's."""
    cache = tmp_path / "c"
    convert(reports["a"], cache)
    real_read = store.read_ipc
    evicted: list[list[str]] = []

    def read_during_eviction(path: Path):
        if not evicted:
            evicted.append([e.path.name for e in cache_entries.evict(cache, 1)])
        return real_read(path)

    monkeypatch.setattr(store, "read_ipc", read_during_eviction)
    trace = open_trace(reports["a"], OpenOptions(cache_dir=cache))
    assert evicted == [[]] and trace.meta.from_cache
    assert trace.table("kernels").num_rows == kernel_rows(reports["a"])
    monkeypatch.setattr(store, "read_ipc", real_read)

    real_hold = usage.hold

    def evict_first(entry: Path):
        gone = cache_entries.evict(cache, 1)
        evicted.append([e.path.name for e in gone])
        return real_hold(entry)

    trace.cache.release()
    monkeypatch.setattr(usage, "hold", evict_first)
    again = open_trace(reports["a"], OpenOptions(cache_dir=cache))
    assert evicted[1] == [Path(trace.meta.cache_path).name]
    assert not again.meta.from_cache
    assert again.table("kernels").num_rows == kernel_rows(reports["a"])


def test_clear_one_report_then_all(reports: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "c"
    for k in "ab":
        convert(reports[k], cache)
    (cache / "notes").mkdir()  # not an entry: never listed, never removed
    (cache / "notes" / "x.txt").write_text("mine")
    a_bytes = disk_bytes(entry_dirs(cache)["a"])
    res = run_cli("cache", "clear", str(reports["a"]), "--cache-dir", str(cache))
    assert res.returncode == 0, res.stderr
    # binary units, one decimal below a GiB
    unit = f"{a_bytes / 2**20:.1f} MiB" if a_bytes >= 2**20 else f"{a_bytes / 2**10:.1f} KiB"
    assert res.stdout == f"removed 1 entry of {reports['a']} ({unit}) from {cache}\n"
    assert set(entry_dirs(cache)) == {"b", "n"}
    res = run_cli("cache", "clear", "--cache-dir", str(cache))
    assert res.stdout.startswith("removed 1 entry (")
    res = run_cli("cache", "clear", "--cache-dir", str(cache))
    assert res.stdout == f"no cache entries in {cache}\n"
    assert (cache / "notes" / "x.txt").read_text() == "mine"
    assert listing(cache)["entries"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1", 1), ("4096", 4096), ("1K", 1024), ("500M", 500 << 20), ("2g", 2 << 30),
     ("1.5GiB", 3 << 29), ("20 GB", 20 << 30)],
)  # fmt: skip
def test_sizes(text: str, expected: int) -> None:
    assert usage.parse_size(text) == expected


@pytest.mark.parametrize("text", ["0", "0K", "-1", "1x", "", "abc", "1e9", "0.0001K"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(UsageError):
        usage.parse_size(text)


def test_bad_sizes_one_line(reports: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "c"
    res = run_cli("summary", str(reports["a"]), "--cache-max", "12Q", "--cache-dir", str(cache))
    assert_one_line_error(res, 2)
    assert "--cache-max" in res.stderr
    res = run_cli("info", str(reports["a"]), "--cache-dir", str(cache), env={
        "TUIPERF_CACHE_MAX": "lots"})  # fmt: skip
    assert_one_line_error(res, 2)
    assert "TUIPERF_CACHE_MAX" in res.stderr
    res = run_cli("cache", "list", "--cache-dir", str(cache), env={"TUIPERF_CACHE_MAX": "0"})
    assert_one_line_error(res, 2)
    assert not cache.exists() or entry_dirs(cache) == {}


def test_cache_dir_that_is_a_file(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "f"
    not_a_folder.write_text("x")
    for action in ("list", "clear"):
        res = run_cli("cache", action, "--cache-dir", str(not_a_folder))
        assert_one_line_error(res, 1)
    assert not_a_folder.read_text() == "x"
    res = run_cli("cache", "list", "--cache-dir", str(tmp_path / "none"))
    assert res.returncode == 0 and res.stdout == f"0 entries, 0 B in {tmp_path / 'none'} (no cap)\n"


def test_a_changed_reports_old_entry_goes_even_in_use(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    """The entry of the report as it was is dropped when it is converted again, even while
    a trace still maps it (as before eviction existed); that trace still reads its rows."""
    cache = tmp_path / "c"
    old = open_trace(reports["a"], OpenOptions(cache_dir=cache))
    old_entry = Path(old.meta.cache_path or "")
    later = old_entry.stat().st_mtime + 10
    os.utime(reports["a"], (later, later))
    new = open_trace(reports["a"], OpenOptions(cache_dir=cache))
    assert not new.meta.from_cache and not old_entry.exists()
    assert list(entry_dirs(cache).values()) == [Path(new.meta.cache_path or "")]
    assert old.table("kernels", ["start"]).num_rows == kernel_rows(reports["a"])


def test_profile_hands_the_cap_to_the_report_it_opens() -> None:
    import argparse

    from tuiperf.commands import analyze, profile

    p = argparse.ArgumentParser()
    profile.prepare(p)
    args = p.parse_args(["--cache-max", "2M", "--", "python", "train.py"])
    flags = profile._cache_flags(args)
    assert flags == ["--cache-max", str(2 << 20)]
    a = argparse.ArgumentParser()
    analyze.prepare(a)
    assert a.parse_args(["run.nsys-rep", *flags]).cache_max == 2 << 20


def test_ranks_hands_the_cap_to_its_workers(reports: dict[str, Path], tmp_path: Path) -> None:
    """`ranks --cache-max`: each worker's conversion evicts as a single open does (the cap
    is parsed once by the command and travels with the job)."""
    cache = tmp_path / "c"
    for k in "bc":
        convert(reports[k], cache)
    res = run_cli("ranks", str(reports["a"]), "--cache-dir", str(cache), "--cache-max", "1",
                  "-j", "1", "--format", "json")  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert set(entry_dirs(cache)) == {"a"}


def test_ranks_bad_cache_max_env_one_line(reports: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "c"
    res = run_cli("ranks", str(reports["a"]), "--cache-dir", str(cache),
                  env={"TUIPERF_CACHE_MAX": "lots"})  # fmt: skip
    assert_one_line_error(res, 2)
    assert "TUIPERF_CACHE_MAX" in res.stderr
