"""What allocations are for, from their stacks, and the peak-makeup finding at its
thresholds (hand-built snapshots, bytes by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.snapshots import CPP_FRAME, Snap
from tuiperf.analysis.gpumem import rules as R
from tuiperf.analysis.gpumem.summary import build
from tuiperf.load.gpumem import categories as C
from tuiperf.load.gpumem.snapshot import load_snapshot

MB = 1 << 20
SITE = "/env/lib/python3.11/site-packages/torch"
USER = {"filename": "/proj/u/train.py", "line": 7, "name": "main"}


def _f(path: str, fn: str) -> dict[str, Any]:
    return {"filename": path, "line": 1, "name": fn}


OPT = [CPP_FRAME, _f(f"{SITE}/optim/adamw.py", "_init_group"), USER]
BWD = [CPP_FRAME, {"filename": "", "line": 0, "name": "torch::autograd::Engine::thread_main"}]
PARAMS = [CPP_FRAME, _f(f"{SITE}/nn/modules/module.py", "_apply"), USER]
ACTS = [CPP_FRAME, _f(f"{SITE}/nn/modules/module.py", "_call_impl"), USER]
OTHER = [CPP_FRAME, USER]


def _key(frames: list[dict[str, Any]]) -> tuple[tuple[str, int, str], ...]:
    return tuple((f["filename"], f["line"], f["name"]) for f in frames)


def test_stack_categories() -> None:
    assert C.of_frames(_key(OPT)) == C.OPTIMIZER
    assert C.of_frames(_key(BWD)) == C.BACKWARD
    assert C.of_frames(_key(PARAMS)) == C.PARAMETERS
    assert C.of_frames(_key(ACTS)) == C.ACTIVATIONS
    assert C.of_frames(_key(OTHER)) == C.UNKNOWN
    # the optimizer's step calls modules' code rarely, but its frames win over a forward's
    assert C.of_frames(_key([*OPT[:2], *ACTS[1:]])) == C.OPTIMIZER
    assert C.of_range("Optimizer.step#AdamW.step") == C.OPTIMIZER
    assert C.of_range("autograd::engine::evaluate_function: AddmmBackward0") == C.BACKWARD


def _snap(tmp_path: Path, acts: int, opt: int, params: int = 40 * MB) -> Any:
    s = Snap()
    s.segment(0, 1024 * MB)
    s.alloc(0, params, PARAMS)
    s.alloc(256 * MB, opt, OPT)
    s.alloc(512 * MB, acts, ACTS)
    s.alloc(900 * MB, 2 * MB, BWD)
    s.alloc(950 * MB, 2 * MB, OTHER)
    rep = build(load_snapshot(s.dump(tmp_path / "c.pickle")))
    return rep, rep.devices[0]


def test_bytes_by_category_at_the_peak(tmp_path: Path) -> None:
    _, d = _snap(tmp_path, acts=100 * MB, opt=80 * MB)
    assert d.at.categories == {
        C.PARAMETERS: 40 * MB,
        C.OPTIMIZER: 80 * MB,
        C.ACTIVATIONS: 100 * MB,
        C.BACKWARD: 2 * MB,
        "": 2 * MB,
    }
    assert sum(d.at.categories.values()) == d.at.allocated
    # one line, two categories (train.py:7 made parameters, optimizer state, activations
    # and the unknown block): its bytes are summed in top_sites
    (line,) = [s for s in d.at.sites if s.file == "/proj/u/train.py"]
    assert line.bytes == (40 + 80 + 100 + 2) * MB


def test_categories_in_json(tmp_path: Path) -> None:
    from tuiperf.report.gpumem import json_report

    rep, _ = _snap(tmp_path, acts=100 * MB, opt=80 * MB)
    got = json_report(rep)["categories"]
    assert got == {
        "parameters": 40 * MB,
        "optimizer": 80 * MB,
        "activations": 100 * MB,
        "backward": 2 * MB,
        "unknown": 2 * MB,
    }


def test_peak_makeup_thresholds(tmp_path: Path) -> None:
    # allocated = 40 + opt + acts + 4 MiB; activations exactly half of it
    rep, d = _snap(tmp_path, acts=100 * MB, opt=56 * MB)
    (f,) = R.peak_makeup(rep, d)
    assert f.metrics["category"] == C.ACTIVATIONS and f.metrics["bytes"] == 100 * MB
    rep, d = _snap(tmp_path, acts=100 * MB - 512, opt=56 * MB + 512)  # one block under
    assert R.peak_makeup(rep, d) == []
    # optimizer state at 30%: 60 of 200 MiB allocated
    rep, d = _snap(tmp_path, acts=96 * MB, opt=60 * MB, params=40 * MB)
    assert [f.metrics["category"] for f in R.peak_makeup(rep, d)] == [C.OPTIMIZER]
    rep, d = _snap(tmp_path, acts=96 * MB + 512, opt=60 * MB - 512, params=40 * MB)
    assert R.peak_makeup(rep, d) == []
