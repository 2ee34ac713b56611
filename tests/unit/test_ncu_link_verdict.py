"""The Speed Of Light verdict agrees with ncu's own SOLBottleneck rule on every kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_data import decompress, rep
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu import verdict as V

needs.module("ncu_report")

#: SOLBottleneck's result titles -> the verdicts they mean
TITLES = {
    "Small Grid": {V.SMALL_GRID},
    "Latency Issue": {V.LATENCY},
    "High Memory Throughput": {V.MEMORY},
    "High Compute Throughput": {V.COMPUTE},
    "Balanced Throughput": {V.BALANCED},
    "High Throughput": {V.MEMORY, V.COMPUTE},
}


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decompress(tmp_path_factory)


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_verdict_matches_sol_bottleneck(ncu_dir: Path, name: str) -> None:
    km = open_ncu(rep(ncu_dir, name), OpenOptions(use_cache=False))
    seen = set()
    for kid in km.kernel_ids():
        (rule,) = [r for r in km.rules(kid) if r.rule_id == "SOLBottleneck"]
        v = V.sol_verdict(km, kid)
        assert v.kind in TITLES[rule.title or ""], (kid, v, rule.title)
        seen.add(v.kind)
    assert len(seen) >= (3 if name == "vit_full" else 2)


def test_occupancy_and_stalls(ncu_dir: Path) -> None:
    km = open_ncu(rep(ncu_dir, "vit_full"), OpenOptions(use_cache=False))
    occ = V.occupancy(km, 3)
    assert occ.theoretical == pytest.approx(31.25) and occ.achieved == pytest.approx(27.2333, 1e-4)
    assert occ.limiting == ["registers"]  # 10 blocks, the lowest of the five limits
    assert {lim.what for lim in occ.limiters} >= {"registers", "shared memory", "warps"}
    top = V.stalls(km, 3, 3)
    assert [s.reason for s in top] == ["not selected", "wait", "short scoreboard"]
    assert top[0].cycles >= top[1].cycles >= top[2].cycles
    assert all(s.reason != "selected" for s in V.stalls(km, 3, 50))
    lstm = open_ncu(rep(ncu_dir, "lstm_basic"), OpenOptions(use_cache=False))
    assert V.stalls(lstm, 0) == []  # the default set has no Warp State Statistics


def test_thresholds_at_the_edges() -> None:
    from tuiperf.model.ncu.metrics import KernelMetrics, make_table

    def km(sm: float, mem: float, waves: float = 4.0) -> KernelMetrics:
        names = [V.SM_PCT, V.MEM_PCT, V.WAVES]
        metrics = make_table(
            "metrics",
            {"kernel_id": [0] * 3, "metric": names, "value": [sm, mem, waves], "unit": ["%"] * 3},
        )
        return KernelMetrics({"kernels": make_table("kernels", {"id": [0]}), "metrics": metrics})

    assert V.sol_verdict(km(80.0, 75.0), 0).kind == V.COMPUTE
    assert V.sol_verdict(km(79.9, 75.0), 0).kind == V.BALANCED
    assert V.sol_verdict(km(59.9, 59.9), 0).kind == V.LATENCY
    assert V.sol_verdict(km(59.9, 59.9, 0.5), 0).kind == V.SMALL_GRID
    assert V.sol_verdict(km(60.0, 50.0), 0).kind == V.COMPUTE
    assert V.sol_verdict(km(50.0, 60.0), 0).kind == V.MEMORY
    assert V.sol_verdict(km(60.0, 50.1), 0).kind == V.BALANCED
    assert (
        V.sol_verdict(KernelMetrics({"kernels": make_table("kernels", {"id": [0]})}), 0).kind == ""
    )
