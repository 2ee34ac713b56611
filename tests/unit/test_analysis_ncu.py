"""ncu rules: ncu's own results and tuiperf's section readings, weighted by nsys time."""

from __future__ import annotations

import pytest

from tests.unit.test_analysis_support import ctx_of, ncu_of
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.ncu_rules import RULES, groups


def _by_rule(findings, rule):  # type: ignore[no-untyped-def]
    return [f for f in findings if f.rule == rule]


def test_vit_conv_kernel_readings() -> None:
    km = ncu_of("vit_full")
    occ = RULES["ncu_occupancy"](km, None)
    conv = [f for f in occ if "implicit_convolve_sgemm" in f.kernel]
    assert len(conv) == 1
    assert conv[0].metrics["limiter"] == "registers per thread"
    assert conv[0].metrics["theoretical_pct"] == pytest.approx(31.25)
    unc = [f for f in RULES["ncu_uncoalesced"](km, None) if "implicit_convolve" in f.kernel]
    assert unc and unc[0].metrics["bytes_per_sector"] == pytest.approx(6.4)
    tail = [f for f in RULES["ncu_launch_shape"](km, None) if "implicit_convolve" in f.kernel]
    assert tail[0].rule == "tail_effect" and tail[0].metrics["waves_per_sm"] == pytest.approx(2.327)


def test_ncu_own_results_keep_their_speedup() -> None:
    km = ncu_of("vit_full")
    own = RULES["ncu_rule_results"](km, None)
    assert own and all(f.rule.startswith("ncu:") for f in own)
    unc = [f for f in own if f.rule == "ncu:UncoalescedGlobalAccess" and "implicit" in f.kernel]
    assert unc[0].metrics["speedup_pct"] == pytest.approx(74.10, abs=0.01)
    # ncu alone: the saving is the speedup of the profiled launch itself
    assert unc[0].est_saving_ns == int(69536 * unc[0].metrics["speedup_pct"] / 100)


def test_nsys_weighting_uses_the_kernels_total_time() -> None:
    km, ctx = ncu_of("vit_full"), ctx_of("vit_amp")
    gs = {g.key: g for g in groups(km, ctx)}
    matched = [g for g in gs.values() if g.nsys_ns is not None]
    assert len(matched) == len(gs)  # every profiled kernel is found by mangled name
    conv = next(g for g in matched if "implicit_convolve" in g.name)
    assert conv.nsys_ns > conv.ncu_ns and len(conv.nsys_rows) > 1
    own = RULES["ncu_rule_results"](km, ctx)
    f = next(f for f in own if f.rule == "ncu:UncoalescedGlobalAccess" and "implicit" in f.kernel)
    assert f.est_saving_ns == int(conv.nsys_ns * f.metrics["speedup_pct"] / 100)
    assert f.evidence.rows["table"][0].as_py() == "kernels"  # jumps to the nsys timeline


def test_ranked_by_weighted_saving() -> None:
    res = analyze(ctx_of("vit_amp").trace, ncu_of("vit_full"))
    savings = [f.est_saving_ns for f in res.findings if f.est_saving_ns is not None]
    assert savings == sorted(savings, reverse=True)
    assert not [c for c in res.checks if c.status == "failed"]


def test_lstm_basic_default_set() -> None:
    res = analyze(None, ncu_of("lstm_basic"))
    assert res.findings and {f.source for f in res.findings} == {"ncu"}
    assert not [c for c in res.checks if c.status == "failed"]
    assert _by_rule(res.findings, "memory_bound") or _by_rule(res.findings, "latency_bound")
