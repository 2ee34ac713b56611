"""torch.profiler (Kineto) traces -> canonical tables, checked against the trace's own events."""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from tuiperf import schema
from tuiperf.load.kineto.tables import load_kineto, memcpy_kinds, short_kernel_name, thread_label
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace
from tuiperf.summaries.cells import csv_rows
from tuiperf.summaries.stats import compute

DATA = Path(__file__).resolve().parents[1] / "data" / "kineto"
TRACES = ("kineto_cnn", "kineto_lstm", "kineto_vit")


def raw_events(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt") as f:
        return json.load(f)


@pytest.fixture(scope="module", params=TRACES)
def loaded(request: pytest.FixtureRequest) -> tuple[Trace, dict[str, Any]]:
    path = DATA / f"{request.param}.json.gz"
    tables, meta = load_kineto(path, None)
    return Trace(tables, meta), raw_events(path)


def ns(us: float) -> int:
    return round(us * 1000)


def of_cat(raw: dict[str, Any], cat: str) -> list[dict[str, Any]]:
    return [e for e in raw["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat]


def test_tables_conform_to_the_canonical_schema(loaded: tuple[Trace, dict[str, Any]]) -> None:
    trace, _ = loaded
    for name, table in trace.tables.items():
        assert table.schema == schema.TABLES[name], name
        if name in schema.EVENT_TABLES:
            starts = table["start"].to_numpy()
            assert (starts[1:] >= starts[:-1]).all(), f"{name} not sorted by start"


def test_kernel_counts_and_durations_match_the_trace(loaded) -> None:
    trace, raw = loaded
    want: dict[str, list[int]] = defaultdict(list)
    for e in of_cat(raw, "kernel"):
        want[e["name"]].append(ns(e["dur"]))
    got = compute(trace, "cuda_gpu_kern_sum").data.to_pylist()
    assert {r["name"]: (r["count"], r["total_ns"]) for r in got} == {
        n: (len(d), sum(d)) for n, d in want.items()
    }
    assert trace.table("kernels").num_rows == sum(len(d) for d in want.values())


def test_memcpy_kinds_use_nsys_labels(loaded) -> None:
    trace, raw = loaded
    want: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for e in of_cat(raw, "gpu_memcpy"):
        kind = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device"}[
            e["name"].split()[1]
        ]
        want[f"[CUDA memcpy {kind}]"] += 1
        total[f"[CUDA memcpy {kind}]"] += ns(e["dur"])
    memsets = of_cat(raw, "gpu_memset")
    want["[CUDA memset]"] += len(memsets)
    total["[CUDA memset]"] += sum(ns(e["dur"]) for e in memsets)
    rows = compute(trace, "cuda_gpu_mem_time_sum").data.to_pylist()
    assert {r["operation"]: r["count"] for r in rows} == dict(want)
    assert {r["operation"]: r["total_ns"] for r in rows} == dict(total)


def test_memcpy_name_parsing() -> None:
    assert memcpy_kinds("Memcpy HtoD (Pageable -> Device)") == (
        "Host-to-Device",
        "Pageable",
        "Device",
    )
    assert memcpy_kinds("Memcpy DtoH (Device -> Pinned)") == ("Device-to-Host", "Device", "Pinned")
    assert memcpy_kinds("Memcpy PtoP (Device -> Device)")[0] == "Peer-to-Peer"
    assert memcpy_kinds("something else") == ("Unknown", "Unknown", "Unknown")


def test_every_gpu_op_is_linked_to_its_launch(loaded) -> None:
    trace, raw = loaded
    api = {}
    for cat in ("cuda_runtime", "cuda_driver"):
        for e in of_cat(raw, cat):
            api[e["args"]["correlation"]] = (e["pid"], e["tid"])
    for name in ("kernels", "memcpy", "memset"):
        t = trace.table(name)
        for corr, pid, tid in zip(
            t["correlation_id"].to_pylist(), t["pid"].to_pylist(), t["tid"].to_pylist(), strict=True
        ):
            assert (pid, tid) == api[corr]


def test_api_calls(loaded) -> None:
    trace, raw = loaded
    want = Counter(e["name"] for c in ("cuda_runtime", "cuda_driver") for e in of_cat(raw, c))
    rows = compute(trace, "cuda_api_sum").data.to_pylist()
    assert {r["name"]: r["count"] for r in rows} == dict(want)
    kinds = set(trace.table("api")["api_kind"].cast("string").to_pylist())
    assert kinds <= {"CUDA runtime", "CUDA driver"}


def test_times_are_ns_from_the_earliest_event(loaded) -> None:
    trace, raw = loaded
    t0 = min(ns(e["ts"]) for e in raw["traceEvents"] if isinstance(e.get("ts"), (int, float)))
    k = next(e for e in raw["traceEvents"] if e.get("cat") == "kernel")
    row = trace.table("kernels").filter(
        pc.equal(trace.table("kernels")["correlation_id"], k["args"]["correlation"])
    )
    assert row["start"][0].as_py() == ns(k["ts"]) - t0
    assert row["duration"][0].as_py() == ns(k["dur"])
    assert any(str(raw["baseTimeNanoseconds"] + t0) in d for d in trace.meta.diagnostics)


def test_ranges_land_in_nvtx_by_category(loaded) -> None:
    trace, raw = loaded
    nvtx = trace.table("nvtx")
    got = Counter(nvtx["domain"].cast("string").to_pylist())
    want = {c: len(of_cat(raw, c)) for c in ("cpu_op", "user_annotation", "gpu_user_annotation")}
    assert dict(got) == want
    gpu = nvtx.filter(pc.equal(nvtx["domain"].cast("string"), "gpu_user_annotation"))
    assert gpu["pid"].null_count == gpu.num_rows  # on a stream, not a process
    assert set(gpu["tid"].to_pylist()) <= set(trace.table("streams")["stream"].to_pylist())
    steps = nvtx.filter(pc.match_substring(nvtx["text"].cast("string"), "ProfilerStep#"))
    cpu_steps = steps.filter(pc.is_valid(steps["pid"]))
    assert cpu_steps["depth"].to_pylist() == [0, 0, 0]
    assert pc.max(nvtx["depth"]).as_py() >= 3


def test_machine_tables(loaded) -> None:
    trace, raw = loaded
    dev = trace.table("devices").to_pylist()
    assert dev[0]["name"] == raw["deviceProperties"][0]["name"]
    assert dev[0]["sm_count"] == raw["deviceProperties"][0]["numSms"]
    assert dev[0]["max_warps_per_sm"] == 64
    procs = trace.table("processes").to_pylist()
    assert len(procs) == 1 and procs[0]["name"] == "python3"  # not the 16 "GPU n" rows
    names = set(trace.table("threads")["name"].to_pylist())
    assert "pt_autograd_0" in names


def test_names_and_labels() -> None:
    name = (
        "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
        "(cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, "
        "float const*, float*)"
    )
    assert short_kernel_name(name) == "nchwToNhwcKernel"
    assert short_kernel_name("ampere_sgemm_128x64_tn") == "ampere_sgemm_128x64_tn"
    assert short_kernel_name("void at::native::(anonymous namespace)::f<int>(int)") == "f"
    assert thread_label("thread 8795 (pt_autograd_0)") == "pt_autograd_0"


def test_plain_json_and_cache_round_trip(tmp_path: Path) -> None:
    plain = tmp_path / "kineto_cnn.json"
    plain.write_bytes(gzip.decompress((DATA / "kineto_cnn.json.gz").read_bytes()))
    opts = OpenOptions(cache_dir=tmp_path / "cache")
    first = open_trace(plain, opts)
    again = open_trace(plain, opts)
    assert not first.meta.from_cache and again.meta.from_cache
    assert again.counts() == first.counts()
    _, rows = csv_rows(compute(again, "cuda_gpu_mem_time_sum"))
    assert "[CUDA memcpy Host-to-Device]" in {r[-1] for r in rows}
