"""The CPU-bound finding says when the capture itself inflates the CPU time it reports:
Python stacks recorded with every CUDA call (nsys --python-backtrace), torch.profiler's own
host overhead; a plain nsys capture gets no such word."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.data import unxz
from tuiperf.analysis.engine import analyze
from tuiperf.load.open import OpenOptions, open_trace

ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "graphs/pybt.sqlite.xz": "recorded a Python stack",  # nsys --python-backtrace=cuda
    "budget/cpu_bound.kineto.json.gz": "torch.profiler's own host overhead",
    "budget/cpu_bound.sqlite.xz": "",  # plain nsys -t cuda,nvtx,osrt
}


@pytest.mark.parametrize("name", list(CASES))
def test_cpu_bound_names_the_capture_cost(name: str) -> None:
    path = ROOT / "tests/data" / name
    report = unxz(path) if name.endswith(".xz") else path
    res = analyze(open_trace(report, OpenOptions(use_cache=False)))
    (f,) = [f for f in res.findings if f.rule == "cpu_bound"]
    words = ("recorded a Python stack", "torch.profiler's own host overhead")
    said = [w for w in words if w in f.message]
    assert said == ([CASES[name]] if CASES[name] else [])
