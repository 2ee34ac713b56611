"""`ranks` says when its reports do not look like ranks of one run: different collectives,
different step markers, or median steps more than SAME_RUN_STEP_RATIO apart (boundary)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tuiperf.analysis.ranks.assemble import SAME_RUN_STEP_RATIO, different_runs
from tuiperf.analysis.ranks.summary import STEP_COLUMNS, RankResult


def _rank(step_ns: int, kinds: tuple[str, ...] = ("AllReduce",)) -> RankResult:
    steps = {c: np.zeros(3, np.int64) for c in STEP_COLUMNS}
    steps["wall_ns"] = np.array([step_ns, step_ns + 10, step_ns - 10], np.int64)  # median
    z = np.zeros(0, np.int64)
    return RankResult(
        path="r.nsys-rep", name_rank=None, meta_rank=None, step_source="nvtx",
        comm_source="kernels", device=0, labels=["step 1", "step 2", "step 3"],
        starts=np.arange(3, dtype=np.int64), steps=steps, coll_starts=z, coll_ends=z,
        collectives={k: (3, 300) for k in kinds},
    )  # fmt: skip


def test_ranks_of_one_run_get_no_warning() -> None:
    assert SAME_RUN_STEP_RATIO == 2.0
    assert different_runs([_rank(1000), _rank(2000)]) == ""  # exactly 2x: one run


@pytest.mark.parametrize(
    ("other", "words"),
    [
        (_rank(2001), "their median steps differ 2.0x"),
        (_rank(1000, ("AllReduce", "SendRecv")), "their collectives differ"),
        (dataclasses.replace(_rank(1000), step_source="pattern"), "different markers"),
    ],
)
def test_reports_of_different_runs_are_named(other: RankResult, words: str) -> None:
    text = different_runs([_rank(1000), other])
    assert text.startswith("These reports may not be ranks of one run") and words in text
