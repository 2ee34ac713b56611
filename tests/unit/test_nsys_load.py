"""Loading nsys exports into the canonical tables: formats, schema versions, linking."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.summaries import stats
from tuiperf.summaries.cells import csv_rows

NO_CACHE = OpenOptions(use_cache=False)


def load(path: Path):  # type: ignore[no-untyped-def]
    return open_trace(path, NO_CACHE)


@pytest.mark.parametrize("kind", ["arrowdir", "parquetdir"])
def test_directory_exports_equal_sqlite(kind: str, nsys_dir: Path) -> None:
    a = load(nsys_dir / "cnn_osrt.sqlite")
    b = load(nsys_dir / f"cnn_osrt_{kind}")
    assert a.counts() == b.counts()
    for name in ("kernels", "memcpy", "api", "nvtx", "osrt"):
        ta, tb = a.table(name), b.table(name)
        for col in ta.column_names:
            assert ta[col].cast(ta.schema.field(col).type).to_pylist() == tb[col].to_pylist(), (
                f"{name}.{col}"
            )
    for report in stats.REPORTS:
        assert csv_rows(stats.compute(a, report)) == csv_rows(stats.compute(b, report))


def test_enums_decoded_from_the_export(nsys_dir: Path) -> None:
    """Pinned is 1 and pageable 0 in ENUM_CUDA_MEM_KIND: vit_amp batches are pinned."""
    t = load(nsys_dir / "vit_amp.sqlite").table("memcpy")
    h2d = t.filter(pc.equal(t["copy_kind"].cast("string"), "Host-to-Device"))
    kinds = pc.value_counts(h2d["src_kind"].cast("string")).to_pylist()
    assert {k["values"]: k["counts"] for k in kinds} == {"Pinned": 46, "Pageable": 77}


def test_pid_tid_decoded_and_kernels_get_launching_thread(nsys_dir: Path) -> None:
    tr = load(nsys_dir / "cnn_osrt.sqlite")
    k = tr.table("kernels")
    assert set(pc.unique(k["pid"]).to_pylist()) == {12197}
    assert k["tid"].null_count == 0  # all 1956 kernels find their launch
    threads = {t["tid"]: t["name"] for t in tr.table("threads").to_pylist()}
    launchers = pc.value_counts(k["tid"]).to_pylist()
    by_name = {threads.get(v["values"]): v["counts"] for v in launchers}
    assert by_name["pt_autograd_0"] == 1155  # PyTorch's backward thread (FORMATS.md §1.5)


def test_join_uses_pid_too(nsys_dir: Path) -> None:
    """Two processes reuse correlation ids; only the (pid, id) join is right."""
    tr = load(nsys_dir / "h100_2gpu_1s.sqlite")
    k = tr.table("kernels")
    assert k.num_rows == 3442
    assert k.num_rows - k["tid"].null_count == 1632
    assert not tr.has("devices")  # no TARGET_INFO_GPU in this 2026.2 export
    assert tr.meta.export_schema == "3.25.0"
    assert tr.table("nvtx").num_rows == 16782


def test_nvtx_depth_and_domains(nsys_dir: Path) -> None:
    nv = load(nsys_dir / "cnn_osrt.sqlite").table("nvtx")
    rows = nv.to_pylist()
    steps = [r for r in rows if r["text"].startswith("step ")]
    assert steps and all(r["depth"] == 0 for r in steps)
    assert {r["depth"] for r in rows if r["text"] in ("forward", "backward")} == {1}
    assert {r["depth"] for r in rows if r["text"] in ("stem", "body")} == {2}
    assert any(r["domain"] == "cuBLAS" for r in rows)


def test_versioned_tables_are_read(nsys_dir: Path, tmp_path: Path) -> None:
    """A newer export names a table KERNEL_V2: its rows must not vanish."""
    p = tmp_path / "v2.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", p)
    p.chmod(0o644)
    db = sqlite3.connect(p)
    db.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO CUPTI_ACTIVITY_KIND_KERNEL_V2")
    db.commit()
    db.close()
    ref = load(nsys_dir / "vit_range.sqlite")
    got = load(p)
    assert got.table("kernels").num_rows == ref.table("kernels").num_rows == 2560
    assert csv_rows(stats.kern_sum(got)) == csv_rows(stats.kern_sum(ref))


def test_missing_tables_are_absent_not_errors(nsys_dir: Path, tmp_path: Path) -> None:
    p = tmp_path / "bare.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", p)
    p.chmod(0o644)
    db = sqlite3.connect(p)
    for t in ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_MEMCPY", "TARGET_INFO_GPU", "ThreadNames"):
        db.execute(f"DROP TABLE {t}")
    db.commit()
    db.close()
    tr = load(p)
    assert tr.table("kernels").num_rows == 2560
    assert not tr.has("nvtx") and not tr.has("memcpy") and not tr.has("devices")
    assert csv_rows(stats.compute(tr, "cuda_gpu_trace"))[1][0][16] == "GPU (0)"


@pytest.mark.parametrize("api_order", ["start order", "two processes interleaved"])
def test_launch_index_joins_like_a_plain_lookup(api_order: str) -> None:
    """Each GPU row gets the tid of the first API row with its (pid, correlationId)."""
    import pyarrow as pa

    from tuiperf.load.nsys.tables import LaunchIndex

    rng = np.random.default_rng(5)
    n = 4000
    pid = np.full(n, 7) if api_order == "start order" else rng.choice([7, 9], n)
    corr = np.arange(n) if api_order == "start order" else rng.integers(0, 1500, n)
    api = pa.table({
        "pid": pa.array(pid, pa.int64()),
        # nulls only where the keys are unsorted anyway: "start order" takes the no-sort path
        "correlation_id": pa.array(corr, pa.int64(), mask=(rng.random(n) < 0.01) & (pid == 9)),
        "tid": pa.array(rng.integers(1, 2**24, n), pa.int64()),
    })  # fmt: skip
    gpu = pa.table({
        "pid": pa.array(rng.choice([7, 9], 500), pa.int64()),
        "correlation_id": pa.array(rng.integers(-5, 1600, 500), pa.int64()),
        "tid": pa.nulls(500, pa.int64()),
    })  # fmt: skip
    first: dict[tuple[int, int], int] = {}
    for p, c, t in zip(*(api[k].to_pylist() for k in ("pid", "correlation_id", "tid"))):
        if c is not None:
            first.setdefault((p, c), t)
    want = [
        first.get((p, c)) for p, c in zip(gpu["pid"].to_pylist(), gpu["correlation_id"].to_pylist())
    ]
    got = LaunchIndex.from_api(api).attach_tid(gpu)["tid"].to_pylist()
    assert got == want and any(w is not None for w in want) and None in want
