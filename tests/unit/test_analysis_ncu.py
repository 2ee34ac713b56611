"""ncu rules: ncu's own results and tuiperf's section readings, weighted by nsys time."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.support.analysis import ctx_of, kineto_trace, ncu_of, trace_of
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.kernel_levers import fix_for_kernel
from tuiperf.analysis.ncu.rules import RULES, SAME_AS_NCU
from tuiperf.model.ncu.groups import groups, signature_key
from tuiperf.model.trace import Trace


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
    gs = {g.key: g for g in groups(km, ctx.trace)}
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


def test_kineto_trace_weighs_ncu_kernels_by_demangled_name() -> None:
    """A torch.profiler trace has no mangled names: its kernel name is the demangled one."""
    km, ctx = ncu_of("lstm_basic"), Ctx(kineto_trace("lstm"))
    gs = groups(km, ctx.trace)
    assert all(g.nsys_ns is not None for g in gs)  # templates and lambdas included
    gemm = next(
        g for g in gs if g.name.startswith("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64")
    )
    assert len(gemm.ids) == 12 and len(gemm.nsys_rows) == 768
    res = analyze(ctx.trace, km)
    f = next(f for f in res.findings if f.kernel == gemm.name and f.rule == "latency_bound")
    assert f.count == 768 and f.evidence.rows["table"][0].as_py() == "kernels"
    assert f.metrics["share_of_gpu_time"] == pytest.approx(gemm.nsys_ns / ctx.kernel_time_ns, 1e-3)


def test_signature_key_reads_ncu_and_itanium_spellings_alike() -> None:
    ncu = (
        "void at::native::vectorized_elementwise_kernel<(int)8, at::native::float16_copy_kernel_"
        "cuda(at::TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, "
        "(unsigned long)2>>(int, T2, T3)"
    )
    itanium = (
        "void at::native::vectorized_elementwise_kernel<8, at::native::float16_copy_kernel_cuda("
        "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::"
        "float16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, "
        "2ul>)"
    )
    assert signature_key(ncu) == signature_key(itanium)
    assert signature_key(ncu) != signature_key(ncu.replace("(int)8", "(int)4"))


def test_short_names_match_only_one_kernel() -> None:
    """With no demangled match, a short name that one kernel of the trace has makes the
    launches similar, never linked or weighed (another template instance, another program);
    a short name of several kernels (Kineto's CUTLASS kernels are all `Kernel2`) not even
    that."""
    km, trace = ncu_of("lstm_basic"), kineto_trace("lstm")
    kt = trace.table("kernels")
    spelt = pa.array([f"{n} [other spelling]" for n in kt["name"].to_pylist()])
    kt = kt.set_column(kt.schema.get_field_index("name"), "name", spelt)
    by = {g.name: g for g in groups(km, Trace({**trace.tables, "kernels": kt}, trace.meta))}
    cutlass = next(g for n, g in by.items() if "Kernel2" in n)
    assert cutlass.nsys_rows is None and cutlass.similar_rows is None  # every Kernel2
    rnn = next(g for n, g in by.items() if "elemWiseRNNcell" in n)
    assert rnn.nsys_rows is None and rnn.nsys_ns is None
    assert rnn.similar_rows is not None and len(rnn.similar_rows) == 768


@pytest.mark.parametrize("ncu_rule", ["UncoalescedGlobalAccess", "TheoreticalOccupancy"])
def test_tuiperf_reading_and_ncu_rule_are_one_finding(ncu_rule: str) -> None:
    res = analyze(trace_of("vit_amp"), ncu_of("vit_full"))
    mine = {
        "UncoalescedGlobalAccess": "uncoalesced_access",
        "TheoreticalOccupancy": "occupancy_limited",
    }[ncu_rule]
    assert not _by_rule(res.findings, mine)
    conv = [f for f in _by_rule(res.findings, f"ncu:{ncu_rule}") if "implicit" in (f.kernel or "")]
    assert len(conv) == 1
    (f,) = conv
    assert f.source == "ncu" and f.metrics["tuiperf_rule"] == mine
    # the PyTorch-level fix for this kind of kernel: a cuDNN convolution, so its layout/dtype
    assert f.fix.text == fix_for_kernel(mine, f.kernel or "").text and f.fix.snippet
    assert "cuDNN library code" in f.fix.text
    assert f.evidence.rows["table"][0].as_py() == "kernels"
    assert "ncu:" in f.message and not f.message.startswith("void ")
    own = {(f.kernel, f.est_saving_ns) for f in res.findings if f.rule.startswith("ncu:")}
    for f in res.findings:  # no reading left beside its ncu twin with the same saving
        assert f.rule not in SAME_AS_NCU or (f.kernel, f.est_saving_ns) not in own, f.rule


def test_small_grid_merges_with_ncu_launch_configuration() -> None:
    res = analyze(kineto_trace("lstm"), ncu_of("lstm_basic"))
    assert not _by_rule(res.findings, "small_grid")
    merged = [f for f in res.findings if f.metrics.get("tuiperf_rule") == "small_grid"]
    assert merged and all(f.rule == "ncu:LaunchConfiguration" for f in merged)
    assert all("Small Grid" in f.title for f in merged)
    # a tail effect is not ncu's "Small Grid" result: both stay
    tail = _by_rule(res.findings, "tail_effect")
    assert tail and "elemWiseRNNcell" in (tail[0].kernel or "")
