"""The roofline of the fp32/bf16 pair: every achieved FLOP/s, bandwidth and ceiling equal
to what the raw CSV page gives when computed here by hand, the FP32 share equal to ncu's
own roofline rule; the text chart fits 80x24 with every kernel and ceiling on it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_depth import DTYPES, raw_value, report, text, text_rules
from tuiperf.analysis.ncu.roofline import kernel_roofline, rooflines
from tuiperf.cli import main
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.report.roofline import MARKS, plot

needs.module("ncu_report")


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ncu-depth")
    return {d: report(d, tmp) for d in DTYPES}


@pytest.fixture(scope="module")
def reports(paths: dict[str, Path]) -> dict[str, KernelMetrics]:
    return {d: open_ncu(p, OpenOptions(use_cache=False)) for d, p in paths.items()}


def _by_hand(dtype: str, kid: int) -> dict[str, float]:
    """The roofline numbers from ncu's raw page, spelt out (ncu's section definitions)."""

    def r(name: str) -> float:
        return raw_value(dtype, kid, name)

    def per_cycle(op: str) -> float:
        return r(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")

    smsp, sm = r("smsp__cycles_elapsed.avg.per_second"), r("sm__cycles_elapsed.avg.per_second")
    x = "derived__smsp__sass_thread_inst_executed_op_"
    peak = "derived__sm__sass_thread_inst_executed_op_"
    return {
        "FP32": (2 * per_cycle("ffma") + per_cycle("fadd") + per_cycle("fmul")) * smsp,
        "FP64": (2 * per_cycle("dfma") + per_cycle("dadd") + per_cycle("dmul")) * smsp,
        "FP16": (r(x + "hfma_pred_on_x4") + r(x + "hadd_pred_on_x2") + r(x + "hmul_pred_on_x2"))
        * smsp,
        "Tensor": r("sm__ops_path_tensor_src_bf16_dst_fp32.sum.per_second")
        + r("sm__ops_path_tensor_src_fp16.sum.per_second"),
        "peak FP32": r(peak + "ffma_pred_on_x2") * sm,
        "peak FP64": r(peak + "dfma_pred_on_x2") * sm,
        "peak FP16": r(peak + "hfma_pred_on_x4") * sm,
        "peak FP16/BF16 tensor": r(
            "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"
        )
        * sm,
        "DRAM": r("dram__bytes.sum.per_second"),
        "peak DRAM": r("dram__bytes.sum.peak_sustained") * r("dram__cycles_elapsed.avg.per_second"),
        "L2": r("derived__lts__lts2xbar_bytes.sum.per_second"),
        "peak L2": r("derived__lts__lts2xbar_bytes.sum.peak_sustained")
        * r("lts__cycles_elapsed.avg.per_second"),
        "L1": r("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second"),
        "peak L1": r("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained")
        * r("l1tex__cycles_elapsed.avg.per_second"),
    }


def _close(ours: float, printed: float) -> bool:
    """The raw page prints 6 decimals of a scaled unit (`0.147088 Tbyte/s`)."""
    return ours == pytest.approx(printed, rel=2e-4, abs=1e-6 * max(abs(printed), 1.0) + 1e3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numbers_equal_the_raw_page(dtype: str, reports: dict[str, KernelMetrics]) -> None:
    km = reports[dtype]
    for kid in km.kernel_ids():
        ours, want = kernel_roofline(km, kid), _by_hand(dtype, kid)
        for prec in ("FP32", "FP64", "FP16", "Tensor"):
            assert _close(ours.flops[prec], want[prec]), (kid, prec)
        for level in ("DRAM", "L2", "L1"):
            assert _close(ours.bandwidth[level], want[level]), (kid, level)
        ceilings = {c.name: c.value for c in ours.ceilings}
        assert set(ceilings) == {"FP16/BF16 tensor", "FP16", "FP32", "FP64", "DRAM", "L2", "L1"}
        for name, value in ceilings.items():
            assert _close(value, want[f"peak {name}"]), (kid, name)
        # the kernel's point: its leading precision's FLOP/s (by hand) over its DRAM bytes/s
        lead = max(want[p] for p in ("FP32", "FP64", "FP16", "Tensor"))
        ai = ours.intensity("DRAM")
        assert ai is not None and ai == pytest.approx(lead / want["DRAM"], rel=2e-4)


def test_the_points_are_the_kernels_kinds(reports: dict[str, KernelMetrics]) -> None:
    fp32 = rooflines(reports["fp32"], reports["fp32"].kernel_ids())
    bf16 = rooflines(reports["bf16"], reports["bf16"].kernel_ids())
    assert [k.precision for k in fp32] == ["FP32"] * 5
    assert bf16[0].precision == "Tensor" and bf16[0].flops["FP32"] == 0
    # a 4096^3 matmul is 2 * 4096^3 FLOP: achieved FLOP/s x duration gives it back
    for km, k in ((reports["fp32"], fp32[0]), (reports["bf16"], bf16[0])):
        seconds = (km.kernel(0).duration_ns or 0) * 1e-9
        assert k.achieved * seconds == pytest.approx(2 * 4096**3, rel=0.02)
    # the GEMM is above the DRAM ridge point, the elementwise kernels far below it
    for k in (fp32[0], bf16[0]):
        assert (k.intensity() or 0) > 100
    assert all((k.intensity() or 1) < 1 for k in fp32[1:4])


@pytest.mark.parametrize("dtype", DTYPES)
def test_fp32_share_is_ncus_roofline_rule(dtype: str, reports: dict[str, KernelMetrics]) -> None:
    """ncu's SOLFPRoofline rule: `The workload achieved 77% of this device's FP32 peak`."""
    km = reports[dtype]
    for kid, k in enumerate(text_rules(text(f"{dtype}_rules.txt"))):
        rule = next(r for r in k.rules if "of this device's FP32 peak" in r.message)
        said = re.search(r"achieved (close to )?(\d+)% of this device's FP32", rule.message)
        assert said is not None, rule.message
        pct, slack = float(said.group(2)), 1.0 if said.group(1) else 0.5
        roof = kernel_roofline(km, kid)
        fp32 = roof.ceiling("FP32")
        assert fp32 is not None
        assert abs(100 * roof.flops["FP32"] / fp32.value - pct) <= slack + 1e-9, (kid, pct)


@pytest.mark.parametrize("ascii_only", [False, True])
def test_chart_fits_80x24(reports: dict[str, KernelMetrics], ascii_only: bool) -> None:
    km = reports["bf16"]
    names = {k: km.kernel(k).name for k in km.kernel_ids()}
    lines = plot(rooflines(km, km.kernel_ids()), names, 80, 24, ascii_only)
    assert len(lines) <= 24 and max(len(line) for line in lines) <= 80
    chart = "\n".join(lines[: lines.index(next(x for x in lines if x.startswith("FLOP/s")))])
    for i in range(5):  # every kernel marked on the chart, and in the legend
        assert MARKS[i] in chart
        assert any(line.startswith(f"{MARKS[i]} [{i}] ") for line in lines)
    for label in ("FP16/BF16 tensor", "FP32 ", "FP64 ", "DRAM ", "L2 "):
        assert label in chart, label
    assert "0.01" in lines[-7] or any("0.01" in line for line in lines)
    if ascii_only:
        assert all(line.isascii() for line in lines)
    else:
        assert any(0x2800 <= ord(ch) <= 0x28FF for ch in chart)


def test_roofline_from_the_cli(paths: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["ncu", str(paths["fp32"]), "--roofline", "--width", "80", "--no-cache"])
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    assert len(lines) <= 24 and max(len(line) for line in lines) <= 80
    assert "FP32 66.6TFLOP/s" in out  # 33,792 FLOP/cycle at the GEMM's 1.97 GHz
    assert "A [0] sm80_xmma_gemm" in out and "E [4] triton_poi_fused_add_gelu_mul_0" in out


def test_the_raw_csv_export_gives_the_same_chart(
    reports: dict[str, KernelMetrics], tmp_path: Path
) -> None:
    """ncu's raw page holds every metric the roofline needs: read from the CSV, the numbers
    are the report's (at the page's 6 printed decimals)."""
    csv_path = tmp_path / "bf16_raw.csv"
    csv_path.write_text(text("bf16_raw.csv"))
    from_csv = open_ncu(csv_path, OpenOptions(use_cache=False))
    for kid in from_csv.kernel_ids():
        a, b = kernel_roofline(reports["bf16"], kid), kernel_roofline(from_csv, kid)
        assert set(a.flops) == set(b.flops) and a.precision == b.precision
        for prec, v in a.flops.items():
            assert b.flops[prec] == pytest.approx(v, rel=2e-4, abs=1e6), (kid, prec)
        for c, d in zip(a.ceilings, b.ceilings, strict=True):
            assert (c.name, c.kind) == (d.name, d.kind)
            assert d.value == pytest.approx(c.value, rel=2e-4), (kid, c.name)
