"""The snapshot reader never builds an object the file names, streams the trace, and
turns a damaged or foreign pickle into one line and exit 1."""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path

import pytest

from tests.support.cli import assert_one_line_error, digest, run_cli
from tests.support.snapshots import Snap, frames
from tuiperf.errors import BadReportError
from tuiperf.load.gpumem import pickle_stream
from tuiperf.load.gpumem.snapshot import load_snapshot


class Boom:
    """Unpickling this would run os.system: the reader must refuse, not run it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_reduce_is_refused_and_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    snap = Snap().snapshot()
    snap["device_traces"] = [[{"action": "alloc", "addr": 1, "size": 512, "x": Boom(marker)}]]
    p = tmp_path / "evil.pickle"
    p.write_bytes(pickle.dumps(snap, protocol=4))
    with pytest.raises(BadReportError, match="builds Python objects"):
        load_snapshot(p)
    assert not marker.exists()


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_class_instances_are_refused(tmp_path: Path, protocol: int) -> None:
    p = tmp_path / "obj.pickle"
    p.write_bytes(pickle.dumps({"segments": [], "x": Path("/")}, protocol=protocol))
    with pytest.raises(BadReportError, match="refused"):
        load_snapshot(p)


def test_matches_stdlib_on_plain_data() -> None:
    """Everything but the trace entries comes out as pickle.loads builds it."""
    data = {
        "segments": [{"a": (1, 2), "b": [1.5, None, True, False, -(2**70)]}],
        "s": "é" * 300,
        "big": 2**63 - 1,
        "neg": -5,
        "device_traces": [],
    }
    for protocol in (2, 3, 4, 5):
        if protocol >= 3:  # protocol 2 pickles bytes through a GLOBAL: refused, rightly
            data["bytes"] = b"x" * 300
        raw = pickle.dumps(data, protocol=protocol)
        got = pickle_stream.read(io.BytesIO(raw), lambda d, e: None, "x")
        assert got == pickle.loads(raw)


def test_trace_entries_are_not_kept() -> None:
    """20k entries over 3 distinct stacks: the entries are handed over and their memo
    slots dropped, so what stays is a few interned stacks, not 20k dicts."""
    stacks = [frames("/w/t.py", n, "f") for n in (1, 2, 3)]
    trace = [
        {"action": "alloc", "addr": i, "size": 512, "frames": [dict(f) for f in stacks[i % 3]]}
        for i in range(20_000)
    ]
    raw = pickle.dumps({"segments": [], "device_traces": [trace]}, protocol=4)
    seen: list[int] = []
    r = pickle_stream.Reader(io.BytesIO(raw), lambda d, e: seen.append(e["addr"]))
    top = r.load()
    assert seen == list(range(20_000))
    assert top["device_traces"] == [[]]
    kept = [v for v in r._memo if isinstance(v, dict | list)]
    assert len(kept) < 10
    assert len({k for k in r.frames if isinstance(k[0], tuple)}) == 3  # the 3 stacks


def test_entries_of_each_device(tmp_path: Path) -> None:
    s = Snap(devices=3)
    s.segment(0, 2 << 20, dev=0)
    s.segment(4096, 2 << 20, dev=2)
    s.segment(8192, 2 << 20, dev=2)
    data = load_snapshot(s.dump(tmp_path / "d.pickle"))
    assert data.events["device"].to_pylist() == [0, 2, 2]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c", "truncated"),
        (pickle.dumps([1, 2, 3]), "not a PyTorch memory snapshot"),
        (pickle.dumps({"segments": 5}), "not a list"),
        (b"\x80\x04\xff\xff", "unknown pickle opcode"),
    ],
)
def test_bad_pickles_are_one_line(tmp_path: Path, content: bytes, why: str) -> None:
    p = tmp_path / "bad.pickle"
    p.write_bytes(content)
    before = digest(p)
    res = run_cli("memory", str(p))
    assert_one_line_error(res, 1)
    assert why in res.stderr
    assert digest(p) == before


def test_snapshot_given_to_another_command_says_which(tmp_path: Path) -> None:
    p = Snap().dump(tmp_path / "s.pickle")
    res = run_cli("info", str(p))
    assert_one_line_error(res, 2)
    assert "tuiperf memory" in res.stderr


def test_damaged_bytes_never_escape_as_another_error(tmp_path: Path) -> None:
    """300 copies of a snapshot with 1-3 random bytes changed (a fifth also cut short):
    each reads, or fails as one BadReportError; the report of what reads is made too."""
    import random

    from tuiperf.analysis.gpumem.run import memory_report
    from tuiperf.report.gpumem import json_report

    s = Snap()
    s.segment(0, 8 << 20)
    for k in range(5):
        s.alloc(k << 20, 512 << 10, frames("/w/a.py", k, "f"))
    s.free(0)
    s.oom(1 << 30, 5, frames("/w/a.py", 9, "g"))
    raw = pickle.dumps(s.snapshot(), protocol=4)
    rng = random.Random(3)
    p = tmp_path / "d.pickle"
    refused = 0
    for _ in range(300):
        b = bytearray(raw)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        if rng.random() < 0.2:
            b = b[: rng.randrange(len(b))]
        p.write_bytes(bytes(b))
        try:
            json_report(memory_report(load_snapshot(p)))
        except BadReportError:
            refused += 1
    assert 0 < refused < 300


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"\x80\x04N\x94r\xff\xff\xff\x7f.", "out of order"),  # BINPUT 2**31-1: a memo bomb
        (b"\x80\x04\x8d" + (2**62).to_bytes(8, "little") + b"abc", "truncated"),
        (b"\x80\x04\x8b\xff\xff\xff\x7f", "too large"),  # LONG4 of 2 GB
    ],
)
def test_stated_sizes_are_not_trusted(content: bytes, why: str) -> None:
    with pytest.raises(BadReportError, match=why):
        pickle_stream.read(io.BytesIO(content), lambda d, e: None, "x")
