"""Oracle: the `nsys stats` summaries (summaries.stats) of hand-built tables whose every
total, count, mean, median, min, max and sample stdev is worked out by hand in the
comments. The golden tests compare with real `nsys stats` output; these add what those
captures never hold: null names, durations, copy kinds and bytes, string (not dictionary)
columns, NVTX ranges without an end or of another style, and `kern_sum`'s other base."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from tuiperf import schema
from tuiperf.model.trace import Trace, TraceMeta
from tuiperf.summaries import stats as S

I64 = pa.int64()
TIME_HEADERS = ["Time (%)", "Total Time (ns)", "{}", "Avg (ns)", "Med (ns)", "Min (ns)",
                "Max (ns)", "StdDev (ns)"]  # fmt: skip
TIME_KEYS = ["time_pct", "total_ns", "count", "avg_ns", "med_ns", "min_ns", "max_ns",
             "stddev_ns"]  # fmt: skip


def _dict(values: list) -> pa.Array:
    return pa.array(values, pa.string()).dictionary_encode()


def _trace(**tables: pa.Table) -> Trace:
    return Trace(dict(tables), TraceMeta(source="tiny", format="test"))


def _rows(table) -> list[tuple]:
    d = table.data.to_pydict()
    return [tuple(d[c.key][i] for c in table.columns) for i in range(table.data.num_rows)]


def _approx(rows: list[tuple]) -> list[tuple]:
    return [tuple(pytest.approx(v, rel=1e-9) if isinstance(v, float) else v for v in r)
            for r in rows]  # fmt: skip


def _headers(table) -> list[str]:
    return [c.header for c in table.columns]


#: how each column is printed: time share, integer ns and counts, ns to one decimal, text
TIME_FMTS = ["pct", "int", "int", "f1", "f1", "int", "int", "f1"]


def _fmts(table) -> list[str]:
    return [c.fmt for c in table.columns]


# kernels: name A: 10, 20, 30 and a null duration (0) -> total 60, 4 instances, mean 15,
# median (10 + 20) / 2 = 15, min 0, max 30, stdev sqrt((225 + 25 + 25 + 225) / 3);
# name B: 100 once (stdev 0); a null name: 5 once (label ""). Grand total 165.
# short names: A's and B's are all "ab" (total 160, 5 launches), the null one "z".
K_NAMES = ["A", "B", "A", None, "A", "A"]
K_SHORT = ["ab", "ab", "ab", "z", "ab", "ab"]
K_DUR = [10, 100, 20, 5, 30, None]


def _kernels() -> Trace:
    n = len(K_NAMES)
    cols = {
        "start": pa.array(range(n), I64),
        "duration": pa.array(K_DUR, I64),
        "name": _dict(K_NAMES),
        "short_name": _dict(K_SHORT),
    }
    return _trace(kernels=schema.conform("kernels", cols, n))


def test_kern_sum_by_hand() -> None:
    t = S.kern_sum(_kernels())
    assert t.report == "cuda_gpu_kern_sum"
    assert _headers(t) == [*(h.format("Instances") for h in TIME_HEADERS), "Name"]
    assert t.data.column_names == [*TIME_KEYS, "name"]
    assert _fmts(t) == [*TIME_FMTS, "str"]
    sd_a = math.sqrt(500 / 3)
    assert _rows(t) == _approx([
        (100 * 100 / 165, 100, 1, 100.0, 100.0, 100, 100, 0.0, "B"),
        (100 * 60 / 165, 60, 4, 15.0, 15.0, 0, 30, sd_a, "A"),
        (100 * 5 / 165, 5, 1, 5.0, 5.0, 5, 5, 0.0, ""),
    ])  # fmt: skip
    assert t.data["total_ns"].type == pa.int64() and t.data["count"].type == pa.int64()
    assert t.data["name"].type == pa.string()


def test_kern_sum_by_short_name() -> None:
    # "ab": 10, 100, 20, 30, 0 -> total 160, 5, mean 32, median 20, min 0, max 100,
    # stdev: deviations -22, 68, -12, -2, -32 -> (484 + 4624 + 144 + 4 + 1024) / 4 = 1570
    t = S.kern_sum(_kernels(), base="short_name")
    assert _rows(t) == _approx([
        (100 * 160 / 165, 160, 5, 32.0, 20.0, 0, 100, math.sqrt(1570), "ab"),
        (100 * 5 / 165, 5, 1, 5.0, 5.0, 5, 5, 0.0, "z"),
    ])  # fmt: skip


def test_kern_sum_empty_and_all_zero() -> None:
    empty = S.kern_sum(_trace())
    assert empty.data.num_rows == 0 and empty.data.column_names == [*TIME_KEYS, "name"]
    assert empty.data["name"].type == pa.string()  # not Arrow's null type of an empty list
    empty = S.mem_size_sum(_trace())
    assert empty.data.num_rows == 0 and empty.data["operation"].type == pa.string()
    # a grand total of 0 divides by 1: 0 %, not NaN
    cols = {"start": pa.array([0, 1], I64), "duration": pa.array([0, 0], I64),
            "name": _dict(["x", "y"])}  # fmt: skip
    t = S.kern_sum(_trace(kernels=schema.conform("kernels", cols, 2)))
    assert t.data["time_pct"].to_pylist() == [0.0, 0.0]
    assert t.data["name"].to_pylist() == ["x", "y"]  # equal totals: by key (first seen)


def test_api_sum_strips_version_suffix_and_reads_string_columns() -> None:
    # cudaLaunchKernel_v7000: 5, 7 -> total 12, mean 6, median 6, stdev sqrt(2);
    # cudaMemcpy: 3; a null name: 1 (label ""). The names are a plain string column.
    api = pa.table({
        "name": pa.array(["cudaLaunchKernel_v7000", "cudaMemcpy", "cudaLaunchKernel_v7000",
                          None], pa.string()),
        "duration": pa.array([5, 3, 7, 1], I64),
    })  # fmt: skip
    t = S.api_sum(_trace(api=api))
    assert t.report == "cuda_api_sum"
    assert _headers(t) == [*(h.format("Num Calls") for h in TIME_HEADERS), "Name"]
    assert _fmts(t) == [*TIME_FMTS, "str"]
    assert _rows(t) == _approx([
        (100 * 12 / 16, 12, 2, 6.0, 6.0, 5, 7, math.sqrt(2), "cudaLaunchKernel"),
        (100 * 3 / 16, 3, 1, 3.0, 3.0, 3, 3, 0.0, "cudaMemcpy"),
        (100 * 1 / 16, 1, 1, 1.0, 1.0, 1, 1, 0.0, ""),
    ])  # fmt: skip


def test_osrt_sum_by_hand() -> None:
    # poll: 100, 300 -> total 400, mean 200, stdev sqrt(2 * 100^2) = 141.42...; read: 50
    cols = {"start": pa.array([0, 1, 2], I64), "duration": pa.array([100, 50, 300], I64),
            "name": _dict(["poll", "read", "poll"])}  # fmt: skip
    t = S.osrt_sum(_trace(osrt=schema.conform("osrt", cols, 3)))
    assert t.report == "osrt_sum"
    assert _headers(t) == [*(h.format("Num Calls") for h in TIME_HEADERS), "Name"]
    assert _fmts(t) == [*TIME_FMTS, "str"]
    assert _rows(t) == _approx([
        (100 * 400 / 450, 400, 2, 200.0, 200.0, 100, 300, math.sqrt(20000), "poll"),
        (100 * 50 / 450, 50, 1, 50.0, 50.0, 50, 50, 0.0, "read"),
    ])  # fmt: skip


# memcpy: Host-to-Device 10 ns/1000 B and 30 ns/3000 B; Device-to-Host 20 ns, null bytes
# (0); a null copy kind 1 ns/7 B ("[CUDA memcpy ]"). memset: 5 ns/500 B and a null
# duration (0)/1500 B: one group.
def _mem() -> Trace:
    mc = {
        "start": pa.array([0, 1, 2, 3], I64),
        "duration": pa.array([10, 20, 30, 1], I64),
        "bytes": pa.array([1000, None, 3000, 7], I64),
        "copy_kind": _dict(["Host-to-Device", "Device-to-Host", "Host-to-Device", None]),
    }
    ms = {
        "start": pa.array([4, 5], I64),
        "duration": pa.array([5, None], I64),
        "bytes": pa.array([500, 1500], I64),
    }
    return _trace(memcpy=schema.conform("memcpy", mc, 4), memset=schema.conform("memset", ms, 2))


def test_mem_time_sum_by_hand() -> None:
    # H2D 40 (mean 20, stdev sqrt(200)); D2H 20; memset 5 + 0 (mean 2.5, median 2.5, stdev
    # sqrt(12.5)); null kind 1. Grand total 66.
    t = S.mem_time_sum(_mem())
    assert t.report == "cuda_gpu_mem_time_sum"
    assert _headers(t) == [*(h.format("Count") for h in TIME_HEADERS), "Operation"]
    assert _fmts(t) == [*TIME_FMTS, "str"]
    assert _rows(t) == _approx([
        (100 * 40 / 66, 40, 2, 20.0, 20.0, 10, 30, math.sqrt(200), "[CUDA memcpy Host-to-Device]"),
        (100 * 20 / 66, 20, 1, 20.0, 20.0, 20, 20, 0.0, "[CUDA memcpy Device-to-Host]"),
        (100 * 5 / 66, 5, 2, 2.5, 2.5, 0, 5, math.sqrt(12.5), "[CUDA memset]"),
        (100 * 1 / 66, 1, 1, 1.0, 1.0, 1, 1, 0.0, "[CUDA memcpy ]"),
    ])  # fmt: skip


def test_mem_size_sum_by_hand() -> None:
    # H2D 4000 B (mean 2000, stdev sqrt(2e6) = 1414.2 B); memset 2000 (mean 1000, stdev
    # sqrt(5e5)); null kind 7; D2H 0 (null bytes). In MB (1e6 B).
    t = S.mem_size_sum(_mem())
    assert t.report == "cuda_gpu_mem_size_sum"
    assert _headers(t) == ["Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)",
                           "Max (MB)", "StdDev (MB)", "Operation"]  # fmt: skip
    assert [c.fmt for c in t.columns] == ["f3", "int", "f3", "f3", "f3", "f3", "f3", "str"]
    assert t.data.column_names == ["total_mb", "count", "avg_mb", "med_mb", "min_mb", "max_mb",
                                   "stddev_mb", "operation"]  # fmt: skip
    assert _rows(t) == _approx([
        (4000e-6, 2, 2000e-6, 2000e-6, 1000e-6, 3000e-6, math.sqrt(2e6) / 1e6,
         "[CUDA memcpy Host-to-Device]"),
        (2000e-6, 2, 1000e-6, 1000e-6, 500e-6, 1500e-6, math.sqrt(5e5) / 1e6, "[CUDA memset]"),
        (7e-6, 1, 7e-6, 7e-6, 7e-6, 7e-6, 0.0, "[CUDA memcpy ]"),
        (0.0, 1, 0.0, 0.0, 0.0, 0.0, 0.0, "[CUDA memcpy Device-to-Host]"),
    ])  # fmt: skip


def test_nvtx_sum_by_hand() -> None:
    # kept: push/pop and start/end ranges with an end. (null domain) "step" push/pop 100
    # and 300 -> 400, 2; "step" start/end 50 (another style: another row); NCCL
    # "allreduce" push/pop 70; "fwd" in domain NCCL 30 and in no domain 20 (two rows).
    # Dropped: a Mark, a push/pop range without an end. Grand total 570.
    ranges = [  # (domain, text, style, duration, ended)
        (None, "step", "PushPop", 100, True),
        ("NCCL", "allreduce", "PushPop", 70, True),
        (None, "step", "StartEnd", 50, True),
        (None, "mark", "Mark", 1000, True),
        (None, "open", "PushPop", None, False),
        (None, "step", "PushPop", 300, True),
        ("NCCL", "fwd", "PushPop", 30, True),
        (None, "fwd", "PushPop", 20, True),
    ]
    n = len(ranges)
    cols = {
        "start": pa.array(range(n), I64),
        "end": pa.array([i + (r[3] or 0) if r[4] else None for i, r in enumerate(ranges)], I64),
        "duration": pa.array([r[3] for r in ranges], I64),
        "domain": _dict([r[0] for r in ranges]),
        "text": _dict([r[1] for r in ranges]),
        "style": _dict([r[2] for r in ranges]),
    }
    t = S.nvtx_sum(_trace(nvtx=schema.conform("nvtx", cols, n)))
    assert t.report == "nvtx_sum"
    assert _headers(t) == [*(h.format("Instances") for h in TIME_HEADERS), "Style", "Range"]
    assert _fmts(t) == [*TIME_FMTS, "str", "str"]
    assert _rows(t) == _approx([
        (100 * 400 / 570, 400, 2, 200.0, 200.0, 100, 300, math.sqrt(20000), "PushPop", ":step"),
        (100 * 70 / 570, 70, 1, 70.0, 70.0, 70, 70, 0.0, "PushPop", "NCCL:allreduce"),
        (100 * 50 / 570, 50, 1, 50.0, 50.0, 50, 50, 0.0, "StartEnd", ":step"),
        (100 * 30 / 570, 30, 1, 30.0, 30.0, 30, 30, 0.0, "PushPop", "NCCL:fwd"),
        (100 * 20 / 570, 20, 1, 20.0, 20.0, 20, 20, 0.0, "PushPop", ":fwd"),
    ])  # fmt: skip


def test_compute_dispatches_by_report_name() -> None:
    trace = _kernels()
    for name in ("cuda_gpu_kern_sum", "cuda_api_sum", "osrt_sum", "nvtx_sum",
                 "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"):  # fmt: skip
        assert S.compute(trace, name).report == name
    assert S.compute(trace, "cuda_gpu_kern_sum").data["total_ns"].to_pylist() == [100, 60, 5]
