"""The lane layout's file (tui/viewstate/layout.py): malformed JSON is a default layout,
never an error; a save that cannot be written says so and leaves no file behind; and
`arrange` by hand on a tiny lane set (pinned, hidden, moved, bundled)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tuiperf.model.timeline.lane_intervals import Intervals
from tuiperf.model.timeline.lanes import Group, Lane, LaneSet, NameColumn
from tuiperf.tui.viewstate import layout as L


@pytest.mark.parametrize(
    "text",
    ["", "[1, 2]", "{", '{"hidden": 3, "pinned": [1, "a"], "order": [], "folded": {"g": 1}}'],
)
def test_malformed_files_give_a_default_layout(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUIPERF_CONFIG_DIR", str(tmp_path))
    path = L.layout_path("/some/report.sqlite")
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_text(text)
    got = L.load("/some/report.sqlite")
    assert got.hidden == [] and got.order == {} and got.folded == {}
    assert got.pinned == (["a"] if "pinned" in text else [])


def test_save_then_load_and_a_failed_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUIPERF_CONFIG_DIR", str(tmp_path))
    lay = L.Layout(["osrt/1/2"], ["api/1/1"], {"gpu:0": ["b", "a"]}, {"proc:1": True})
    assert L.save("r.sqlite", lay)
    assert L.load("r.sqlite") == lay
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("TUIPERF_CONFIG_DIR", str(blocked))  # a file where a folder should be
    assert not L.save("r.sqlite", lay)
    assert blocked.read_text() == ""


def _lane(key: tuple, kind: str, names: list[str], tid: int) -> Lane:
    n = len(names)
    iv = Intervals(np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64) + 1,
                   np.arange(n, dtype=np.int64))  # fmt: skip
    col = NameColumn(pa.chunked_array([pa.array(names)]))
    return Lane(key, "proc:1", "/".join(map(str, key)), kind, "osrt", iv, col,
                {"pid": 1, "tid": tid})  # fmt: skip


def test_arrange_by_hand() -> None:
    wait = ["pthread_cond_wait", "pthread_cond_wait", "poll"]  # 2 of 3: its main call
    lanes = [
        _lane(("api", 1, 1), "api", ["cudaLaunchKernel"], 1),
        _lane(("osrt", 1, 1), "osrt", wait, 1),  # the main thread: never bundled
        _lane(("osrt", 1, 2), "osrt", wait, 2),
        _lane(("osrt", 1, 3), "osrt", wait, 3),
        _lane(("osrt", 1, 4), "osrt", ["poll", "poll", "pthread_cond_wait"], 4),
        _lane(("osrt", 1, 5), "osrt", wait, 5),
    ]
    base = LaneSet([Group("proc:1", "python3 (1)", list(range(6)))], lanes, 0, 10)
    shown, folded = L.arrange(base, L.Layout())
    assert [(g.key, g.lanes) for g in shown.groups] == [
        ("proc:1", [0, 1, 4]),
        ("proc:1:osrt:pthread_cond_wait", [2, 3, 5]),
    ]
    assert folded == {1}
    lay = L.Layout(hidden=["osrt/1/3"], pinned=["osrt/1/4"], order={"proc:1": ["osrt/1/1"]},
                   folded={"proc:1:osrt:pthread_cond_wait": False})  # fmt: skip
    shown, folded = L.arrange(base, lay)
    assert [(g.key, g.lanes) for g in shown.groups] == [
        ("pinned", [4]),
        ("proc:1", [1, 0]),
        ("proc:1:osrt:pthread_cond_wait", [2, 5]),  # 3 hidden: two threads left, still one
    ]
    assert folded == set()
    assert L.move(lay, shown, 1, 1, 1) is True  # lane 1 down: the order [0, 1]
    assert lay.order["proc:1"] == ["api/1/1", "osrt/1/1"]
    assert L.move(lay, shown, 0, 4, -1) is False  # already first


def test_an_unknown_lane_in_a_layout_is_left_out() -> None:
    base = LaneSet([Group("g", "g", [0])], [_lane(("api", 1, 1), "api", ["x"], 1)], 0, 1)
    shown, _ = L.arrange(base, L.Layout(hidden=["nope"], pinned=["gone"]))
    assert [(g.key, g.lanes) for g in shown.groups] == [("g", [0])]
    assert json.dumps(L.Layout().to_json())
