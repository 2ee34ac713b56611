"""tuiperf.torch.profile_steps under `tuiperf profile`: stacks and shapes by default, the
variables that move its trace and set its steps, and the Nsight Systems capture range."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import needs

torch = needs.module("torch")

import tuiperf.torch as tt  # noqa: E402
from tuiperf import settings  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")


def run_loop(prof: tt.StepProfiler, seen: list[str] | None = None) -> None:
    with prof:
        while not prof.done:
            torch.ones(4).mul(2).sum()
            if seen is not None:
                seen.append("step")
            prof.step()


def test_stacks_and_shapes_by_default(tmp_path: Path) -> None:
    path = tmp_path / "t.pt.trace.json.gz"
    run_loop(tt.profile_steps(path, steps=1, wait=0, warmup=0))
    doc = json.loads(gzip.decompress(path.read_bytes()))
    assert doc.get("with_stack") and doc.get("record_shapes")
    assert any(e.get("cat") == "python_function" for e in doc["traceEvents"])
    off = tmp_path / "off.json"
    run_loop(tt.profile_steps(off, steps=1, wait=0, warmup=0, with_stack=False))
    doc = json.loads(off.read_text())
    assert not any(e.get("cat") == "python_function" for e in doc["traceEvents"])


def test_tuiperf_profile_variables_move_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "elsewhere.json"
    monkeypatch.setenv(settings.PROFILE_MODE, "torch")
    monkeypatch.setenv(settings.PROFILE_OUT, str(out))
    monkeypatch.setenv(settings.PROFILE_STEPS, "2")
    prof = tt.profile_steps(tmp_path / "own.json", steps=7, wait=0, warmup=0)
    assert (prof.steps, prof.path) == (2, out)
    run_loop(prof)
    assert out.is_file() and not (tmp_path / "own.json").exists()


class FakeCudaProfiler:
    """Where torch.cuda.profiler.start/stop would call cudaProfilerStart/Stop."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def start(self) -> None:
        self.log.append("start")

    def stop(self) -> None:
        self.log.append("stop")


@pytest.fixture
def cuda_log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    log: list[str] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "profiler", FakeCudaProfiler(log))
    return log


@pytest.mark.parametrize("wait,warmup", [(0, 0), (1, 2)])
def test_nsys_mode_is_a_capture_range_over_the_recorded_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cuda_log: list[str], wait: int, warmup: int
) -> None:
    monkeypatch.setenv(settings.PROFILE_MODE, "nsys")
    prof = tt.profile_steps(tmp_path / "t.json", steps=3, wait=wait, warmup=warmup, nvtx=False)
    run_loop(prof, seen=cuda_log)
    skipped = ["step"] * (wait + prof.timed + warmup)  # 3 timed steps by default
    assert prof.timed == 3
    assert cuda_log == [*skipped, "start", "step", "step", "step", "stop"]
    assert prof.written and list(tmp_path.iterdir()) == []  # nsys writes, not torch.profiler


def test_nsys_mode_ending_early_stops_the_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cuda_log: list[str]
) -> None:
    monkeypatch.setenv(settings.PROFILE_MODE, "nsys")
    with tt.profile_steps(tmp_path / "t.json", steps=5, wait=0, warmup=1, timed=0,
                          nvtx=False) as prof:  # fmt: skip
        for _ in range(3):
            prof.step()
    assert cuda_log == ["start", "stop"]


def test_nsys_mode_without_cuda_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setenv(settings.PROFILE_MODE, "nsys")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    prof: Any = tt.profile_steps(tmp_path / "t.json", steps=1, wait=0, warmup=0)
    run_loop(prof)
    assert not prof.written
    assert "tuiperf.torch: no steps captured" in capsys.readouterr().err
