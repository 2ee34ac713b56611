"""The memory chart of the fp32/bf16 pair: every number on it is the raw CSV page's, and
the chart fits 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_depth import DTYPES, raw_close, raw_value, report
from tuiperf.cli import main
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.report.memory import chart_lines, memory_chart
from tuiperf.report.roofline import si

needs.module("ncu_report")

#: the chart's numbers by hand: (link, read bytes, write bytes), raw metric names
BY_HAND = {
    "L1/TEX-L2": ("l1tex__m_xbar2l1tex_read_bytes.sum", "l1tex__m_l1tex2xbar_write_bytes.sum"),
    "L2-DRAM": ("dram__bytes_read.sum", "dram__bytes_write.sum"),
}
RATES = {
    "L1/TEX-L2": ("l1tex__m_xbar2l1tex_read_bytes.sum.per_second",
                  "l1tex__m_l1tex2xbar_write_bytes.sum.per_second"),
    "L2-DRAM": ("dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second"),
}  # fmt: skip


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ncu-depth")
    return {d: report(d, tmp) for d in DTYPES}


@pytest.fixture(scope="module")
def reports(paths: dict[str, Path]) -> dict[str, KernelMetrics]:
    return {d: open_ncu(p, OpenOptions(use_cache=False)) for d, p in paths.items()}


@pytest.mark.parametrize("dtype", DTYPES)
def test_links_and_hit_rates_are_the_raw_page(
    dtype: str, reports: dict[str, KernelMetrics]
) -> None:
    km = reports[dtype]
    for kid in km.kernel_ids():
        c = memory_chart(km, kid)
        for link, (rd, wr) in BY_HAND.items():
            assert raw_close(c.links[link].read, dtype, kid, rd), (kid, link)
            assert raw_close(c.links[link].write, dtype, kid, wr), (kid, link)
            rrd, rwr = RATES[link]
            for ours, name in ((c.links[link].read_rate, rrd), (c.links[link].write_rate, rwr)):
                assert raw_close(ours, dtype, kid, name), name
        sysmem = "lts__t_sectors_srcunit_tex_aperture_sysmem_op_read_lookup_miss.sum"
        sysread = c.links["L2-System"].read
        assert sysread is not None and raw_close(sysread / 32, dtype, kid, sysmem)
        assert raw_close(c.hit_rates["L2"], dtype, kid, "lts__t_sector_hit_rate.pct")
        assert raw_close(c.hit_rates["L1/TEX"], dtype, kid, "l1tex__t_sector_hit_rate.pct")
        for op in ("ld", "st"):
            name = f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"
            assert raw_close(c.requests[f"global {op}"], dtype, kid, name)
        conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
        assert raw_close(c.shared["bank conflicts"], dtype, kid, conflicts)


def test_the_gemm_reuses_l2_and_the_elementwise_kernel_streams(
    reports: dict[str, KernelMetrics],
) -> None:
    gemm, add = memory_chart(reports["fp32"], 0), memory_chart(reports["fp32"], 2)
    g, a = gemm.links["L1/TEX-L2"], add.links["L1/TEX-L2"]
    assert g.read is not None and gemm.links["L2-DRAM"].read is not None
    assert g.read > 5 * gemm.links["L2-DRAM"].read  # tiles read many times from L2
    assert (gemm.hit_rates["L2"] or 0) > 80 and (add.hit_rates["L2"] or 100) < 60
    assert a.read == pytest.approx(4 * 64 * 2**20, rel=0.01)  # 64M fp32 inputs, once


@pytest.mark.parametrize("ascii_only", [False, True])
def test_chart_fits_80x24_with_the_numbers(
    reports: dict[str, KernelMetrics], ascii_only: bool
) -> None:
    km = reports["bf16"]
    lines = chart_lines(km, 0, 80, ascii_only)
    text = "\n".join(lines)
    assert len(lines) <= 22 and max(len(line) for line in lines) <= 80
    for name in ("l1tex__m_xbar2l1tex_read_bytes.sum", "dram__bytes_read.sum",
                 "dram__bytes_write.sum"):  # fmt: skip
        assert si(raw_value("bf16", 0, name), "B") in text, name
    l2 = raw_value("bf16", 0, "lts__t_sector_hit_rate.pct")
    assert f"hit {l2:.1f}%" in text
    for box in ("L1/TEX cache", "Shared memory", "L2 cache", "System", "Device memory (DRAM)"):
        assert box in text
    assert all(line.isascii() for line in lines) == ascii_only


def test_memory_chart_from_the_cli(
    paths: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["ncu", str(paths["fp32"]), "--memory-chart", "--id", "0", "--id", "4",
               "--width", "80", "--no-cache"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert "Memory chart [0] sm80_xmma" in out and "Memory chart [4] triton_poi" in out
    assert max(len(line) for line in out.splitlines()) <= 80
