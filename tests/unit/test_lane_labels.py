"""Lanes are named by what they hold: nsys's CUDA API/NVTX/OS runtime, Kineto's CUDA runtime
calls and CPU ops, GPU annotations beside their stream, and the processes of each GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.timeline.lanes import build_lanes

KINETO = Path(__file__).resolve().parents[1] / "data" / "kineto"


@pytest.mark.parametrize("trace", ["kineto_cnn.json.gz", "kineto_vit.json.gz"])
def test_kineto_lanes_say_cuda_runtime_and_cpu_ops(trace: str) -> None:
    ls = build_lanes(open_trace(KINETO / trace, OpenOptions(use_cache=False)))
    labels = [lane.label for lane in ls.lanes]
    assert not [x for x in labels if "NVTX" in x or "CUDA API" in x], labels
    cpu = [ls.lanes[i] for g in ls.groups if not g.key.startswith("gpu:") for i in g.lanes]
    assert {lane.kind for lane in cpu} >= {"api", "nvtx"}
    for lane in cpu:
        word = {"api": "CUDA runtime", "nvtx": "CPU ops"}[lane.kind]
        assert word in lane.label, lane.label
    # GPU-side annotations (no process) sit in the GPU group of their stream
    gpu = [ls.lanes[i] for g in ls.groups if g.key.startswith("gpu:") for i in g.lanes]
    notes = [lane for lane in gpu if lane.kind == "nvtx"]
    assert notes and all(lane.label.startswith("stream ") for lane in notes)
    assert all(g.label != "process" for g in ls.groups)


def test_nsys_lanes_keep_nsys_words(nsys_dir: Path) -> None:
    ls = build_lanes(open_trace(nsys_dir / "cnn_osrt.sqlite", OpenOptions(use_cache=False)))
    main = [ls.lanes[i].label for g in ls.groups if g.label.startswith("python") for i in g.lanes]
    assert {
        "python3 [12197] CUDA API",
        "python3 [12197] NVTX",
        "python3 [12197] OS runtime",
    } <= set(main)


def test_gpus_of_several_processes_name_them(nsys_dir: Path) -> None:
    trace = open_trace(nsys_dir / "h100_2gpu_1s.sqlite", OpenOptions(use_cache=False))
    ls = build_lanes(trace)
    gpus = [g.label for g in ls.groups if g.key.startswith("gpu:")]
    assert gpus == ["GPU 0 · python3 (111)", "GPU 1 · python3 (112)"]
    # one process: no process in the label
    one = build_lanes(open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False)))
    assert [g.label for g in one.groups if g.key.startswith("gpu:")] == ["GPU 0 · NVIDIA H200"]
