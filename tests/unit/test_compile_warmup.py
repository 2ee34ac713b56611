"""torch.compile inside the capture (a real H200 capture, tests/data/graphs/compile): step 0
compiles and autotunes for seconds; it stays out of the steady figures and is named."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.support.data import unxz
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import step_budget
from tuiperf.load.open import OpenOptions, open_trace

GRAPHS = Path(__file__).resolve().parents[1] / "data" / "graphs"


@pytest.fixture(scope="module")
def compiled() -> Path:
    return unxz(GRAPHS / "compile.sqlite.xz")


def test_compilation_is_start_up_and_named(compiled: Path) -> None:
    b = step_budget(Ctx(open_trace(compiled, OpenOptions(use_cache=False))))
    assert b is not None and b.startup_labels.startswith("step 0")
    main = b.main
    assert main.startup is not None and main.startup.wall_ns > 100 * b.steady.wall_ns / b.n_steady
    note = b.extra["startup_note"]
    # independently: Triton kernels launched before step 1 starts
    con = sqlite3.connect(compiled)
    (step1,) = con.execute("SELECT start FROM NVTX_EVENTS WHERE text = 'step 1'").fetchone()
    (n,) = con.execute(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId) "
        "JOIN StringIds s ON s.id = k.shortName WHERE r.start < ? AND s.value LIKE 'triton_%'",
        (step1,),
    ).fetchone()
    assert n > 0 and f"{n:,} of them Triton kernels" in note
    assert "torch.compile" in note and b.to_json()["startup_note"] == note


def test_no_note_without_compilation(nsys_dir: Path) -> None:
    b = step_budget(Ctx(open_trace(nsys_dir / "vit_amp.sqlite", OpenOptions(use_cache=False))))
    assert b is not None and "startup_note" not in b.extra
