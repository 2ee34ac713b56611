"""tuiperf.torch: train a tiny model on the CPU under the helper, then open the real trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from tests.support import needs

torch = needs.module("torch")

import tuiperf.torch as tt  # noqa: E402
from tuiperf.load.open import OpenOptions, open_trace  # noqa: E402
from tuiperf.model.trace import Trace  # noqa: E402
from tuiperf.summaries import ops, reports  # noqa: E402

STEPS = 3


def train(path: Path, steps: int = STEPS, **kw: object) -> tt.StepProfiler:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with tt.profile_steps(path, steps=steps, wait=0, warmup=1, **kw) as prof:
        while not prof.done:
            with torch.profiler.record_function("forward"):
                loss = torch.nn.functional.cross_entropy(
                    model(torch.randn(4, 1, 8, 8)), torch.tensor([0, 1, 2, 0])
                )
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
        prof.step()  # past the end: ignored
    return prof


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    path = tmp_path_factory.mktemp("torch") / "tiny.pt.trace.json.gz"
    prof = train(path)
    assert prof.written and path.read_bytes()[:2] == b"\x1f\x8b"
    return open_trace(path, OpenOptions(use_cache=False))


def ranges(trace: Trace, domain: str):
    n = trace.table("nvtx")
    return n.filter(pc.equal(n["domain"].cast("string"), domain))


def test_steps_are_recorded(trace: Trace) -> None:
    ann = ranges(trace, "user_annotation")
    steps = sorted(t for t in ann["text"].cast("string").to_pylist() if t.startswith("Profiler"))
    # steps 0-2 were timed with nothing recording, step 3 warm-up
    assert steps == [f"ProfilerStep#{i}" for i in range(4, 4 + STEPS)]
    assert "forward" in ann["text"].cast("string").to_pylist()
    assert trace.meta.format == "kineto" and "cpu_op" in trace.meta.capture


def test_ops_nest_inside_their_steps(trace: Trace) -> None:
    r = ops.cpu_ranges(trace)
    steps = np.flatnonzero([str(n).startswith("ProfilerStep#") for n in r.names])
    assert (r.depth[steps] == 0).all()
    linear = np.flatnonzero(r.names == "aten::linear")
    assert len(linear) == STEPS
    # walk up from each aten::linear: forward, then a ProfilerStep
    chain = [str(r.names[r.parent[i]]) for i in linear]
    assert chain == ["forward"] * STEPS
    step_of = r.parent[r.parent[linear]]
    assert all(str(r.names[s]).startswith("ProfilerStep#") for s in step_of)
    assert (r.start[step_of] <= r.start[linear]).all() and (r.end[linear] <= r.end[step_of]).all()


def test_op_summary_and_durations(trace: Trace) -> None:
    rows = {r["name"]: r for r in reports.compute(trace, "op_sum").data.to_pylist()}
    for name in ("aten::conv2d", "aten::linear", "aten::addmm", "aten::relu"):
        assert rows[name]["count"] == STEPS, name
    lin = rows["aten::linear"]
    assert 0 < lin["self_ns"] < lin["total_ns"]  # addmm etc. run inside it
    assert rows["aten::addmm"]["total_ns"] < lin["total_ns"]
    n = trace.table("nvtx")
    assert pc.min(n["duration"]).as_py() >= 0
    assert not trace.has("kernels")  # CPU only
    assert trace.table("threads").num_rows >= 1


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
def test_short_run_still_writes_a_trace(tmp_path: Path) -> None:
    """A loop that stops before all steps ran: the recorded part is still saved."""
    path = tmp_path / "short.json"
    with tt.profile_steps(path, steps=5, wait=0, warmup=0, timed=0) as prof:
        torch.ones(3).sum()
        prof.step()
    assert not prof.done
    t = open_trace(path, OpenOptions(use_cache=False))
    assert t.has("nvtx")


@pytest.mark.parametrize("ran", [0, 1])  # ends in the waiting step, in the warm-up step
def test_block_ending_before_any_recorded_step_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ran: int
) -> None:
    path = tmp_path / "early.json"
    with tt.profile_steps(path, steps=2, wait=1, warmup=1) as prof:
        for _ in range(ran):
            torch.ones(3).sum()
            prof.step()
    assert not prof.written and not path.exists()
    err = capsys.readouterr().err
    assert f"no trace written to {path}" in err
    assert f"after {ran} of its 1 waiting, 3 timed and 1 warm-up steps" in err
    assert list(tmp_path.iterdir()) == []  # no temporary file left either


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        tt.profile_steps("x.json", steps=0)


def test_example_script_runs_on_cpu(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "examples" / "train.py"
    out = tmp_path / "ex.pt.trace.json.gz"
    r = subprocess.run(
        [sys.executable, str(script), "--steps", "2", "--batch-size", "4", "--image-size", "16",
         "--workers", "0", "--profile", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    # --steps 2 records 2 steps after 1 waiting, 3 timed and 1 warm-up step: 7 run
    assert "7 steps (1 waiting, 3 timed, 1 warm-up, 2 recorded) on cpu" in r.stdout
    t = open_trace(out, OpenOptions(use_cache=False))
    texts = set(t.table("nvtx")["text"].cast("string").to_pylist())
    assert {"ProfilerStep#5", "ProfilerStep#6", "aten::conv2d"} <= texts
    assert not {"ProfilerStep#4", "ProfilerStep#7"} & texts
    assert t.meta.untraced_step_ns is not None  # the 3 timed steps' mean
    help_text = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=300
    ).stdout
    assert "profiled ones" not in help_text and "STEPS + 5" in " ".join(help_text.split())
