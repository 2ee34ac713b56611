"""Kineto's `External id`: read into `external_id`, and what ties GPU work to its cpu_op."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tuiperf.load.kineto.tables import load_kineto
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace
from tuiperf.summaries import ops

DATA = Path(__file__).resolve().parents[1] / "data" / "kineto"
GPU = {"kernel": "kernels", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}


@pytest.fixture(scope="module", params=("kineto_cnn", "kineto_vit"))
def case(request: pytest.FixtureRequest) -> tuple[Trace, dict[str, Any]]:
    path = DATA / f"{request.param}.json.gz"
    tables, meta = load_kineto(path, None)
    return Trace(tables, meta), json.loads(gzip.decompress(path.read_bytes()))


def of_cat(raw: dict[str, Any], *cats: str) -> list[dict[str, Any]]:
    return [e for e in raw["traceEvents"] if e.get("ph") == "X" and e.get("cat") in cats]


def by_corr(t: pa.Table) -> dict[int, int | None]:
    return dict(zip(t["correlation_id"].to_pylist(), t["external_id"].to_pylist(), strict=True))


def test_api_and_gpu_rows_carry_the_external_id(case) -> None:
    trace, raw = case
    calls = of_cat(raw, "cuda_runtime", "cuda_driver")
    got = by_corr(trace.table("api"))
    assert got == {e["args"]["correlation"]: e["args"].get("External id") for e in calls}
    assert sum(v is not None for v in got.values()) > 100
    for cat, table in GPU.items():
        want = {e["args"]["correlation"]: e["args"]["External id"] for e in of_cat(raw, cat)}
        assert by_corr(trace.table(table)) == want, table


def test_ranges_carry_the_external_id(case) -> None:
    trace, raw = case
    n = trace.table("nvtx")
    got = sorted(zip(n["domain"].cast(pa.string()).to_pylist(), n["external_id"].to_pylist()))
    cats = ("cpu_op", "user_annotation", "gpu_user_annotation")
    want = sorted((e["cat"], e["args"].get("External id")) for e in of_cat(raw, *cats))
    assert got == want


def test_nsys_leaves_it_null(nsys_dir: Path) -> None:
    trace = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    for name in ("api", "nvtx", "kernels"):
        t = trace.table(name)
        assert t.num_rows and t["external_id"].null_count == t.num_rows, name


def with_columns(trace: Trace, **change: Any) -> Trace:
    """A copy of `trace`; change maps table -> {column: function of the old column}."""
    tables = dict(trace.tables)
    for name, cols in change.items():
        t = tables[name]
        for col, fn in cols.items():
            t = t.set_column(t.schema.get_field_index(col), col, fn(t[col]))
        tables[name] = t
    return Trace(tables, trace.meta)


def moved(col: pa.ChunkedArray) -> pa.Array:
    """API call starts moved 1 s before the trace: inside no range at all."""
    return pa.array(np.asarray(col.to_numpy()) - 10**9, pa.int64())


def nulls(col: pa.ChunkedArray) -> pa.Array:
    return pa.nulls(len(col), pa.int64())


def gpu_self(trace: Trace) -> np.ndarray:
    return ops.gpu_self(trace, ops.cpu_ranges(trace))


def test_external_id_decides_the_owner_not_time(case) -> None:
    trace, _ = case
    want = gpu_self(trace)
    assert want.sum() > 0
    shifted = with_columns(trace, api={"start": moved})
    assert (gpu_self(shifted) == want).all()


def test_time_nesting_only_without_external_id(case) -> None:
    trace, _ = case
    want = gpu_self(trace)
    no_ids = {t: {"external_id": nulls} for t in ("api", "kernels", "memcpy", "memset")}
    assert (gpu_self(with_columns(trace, **no_ids)) == want).all()  # the same op, by nesting
    lost = with_columns(trace, **no_ids | {"api": {"external_id": nulls, "start": moved}})
    assert gpu_self(lost).sum() < want.sum()  # by time, calls outside every range own nothing


def test_gpu_work_without_its_call_keeps_its_op(case) -> None:
    """A windowed trace may lack the launching call: the GPU op's own External id names the op."""
    trace, _ = case
    want = gpu_self(trace)
    tables = {k: v for k, v in trace.tables.items() if k != "api"}
    assert (gpu_self(Trace(tables, trace.meta)) == want).all()
