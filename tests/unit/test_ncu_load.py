"""`.ncu-rep` through the real ncu_report module, checked against ncu's own CSV pages."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_data import close, csv_dicts, decompress, page, rep
from tuiperf.load.ncu.open import describe_ncu, open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.metrics import KernelMetrics

needs.module("ncu_report")


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decompress(tmp_path_factory)


_CODES = {"OPT": "optimization", "INF": "ok", "WRN": "warning"}


@pytest.fixture(scope="module")
def vit(ncu_dir: Path) -> KernelMetrics:
    return open_ncu(rep(ncu_dir, "vit_full"), OpenOptions(use_cache=False))


@pytest.fixture(scope="module")
def lstm(ncu_dir: Path) -> KernelMetrics:
    return open_ncu(rep(ncu_dir, "lstm_basic"), OpenOptions(use_cache=False))


def test_counts(vit: KernelMetrics, lstm: KernelMetrics) -> None:
    assert len(vit) == 7 and len(lstm) == 30
    assert vit.kernel_ids() == list(range(7))
    # metric_names() per kernel: every metric is in the long table at least once
    assert (
        vit.tables["metrics"].filter(vit.tables["metrics"]["kernel_id"].to_numpy() == 0).num_rows
        >= 2243
    )


def test_kernel_facts_match_the_csv_columns(
    ncu_dir: Path, vit: KernelMetrics, lstm: KernelMetrics
) -> None:
    for name, km in (("vit_full", vit), ("lstm_basic", lstm)):
        seen = set()
        for r in csv_dicts(page(ncu_dir, name, "details_base")):
            kid = int(r["ID"])
            if kid in seen:
                continue
            seen.add(kid)
            k = km.kernel(kid)
            assert f"({', '.join(map(str, k.grid))})" == r["Grid Size"]
            assert f"({', '.join(map(str, k.block))})" == r["Block Size"]
            assert str(k.stream) == r["Stream"] and str(k.device) == r["Device"]
            assert k.row["cc"] == r["CC"] and str(k.row["context"]) == r["Context"]
            assert k.nvtx == ("step 3", "forward")
            assert k.mangled  # extern "C" kernels (cuBLAS) are not _Z-mangled
        assert seen == set(km.kernel_ids())


def test_kernel_3_of_vit(vit: KernelMetrics) -> None:
    k = vit.kernel(3)
    assert k.name == "implicit_convolve_sgemm"
    assert k.grid == (256, 12, 1) and k.block == (8, 8, 1)
    assert k.registers == 92 and k.duration_ns == 69536.0
    assert k.row["shared_static"] == 2304 and k.row["device_name"] == "NVIDIA H200"
    assert vit.find_by_mangled(k.mangled or "") == [3]
    assert vit.matching("implicit_convolve") == [3]
    m = vit.metric(3, "dram__bytes.sum.per_second")
    assert m is not None and m.unit == "byte/s" and m.label == "Memory Throughput"
    assert m.value == pytest.approx(48964565117.35, rel=1e-12)
    assert vit.metric(3, "launch__func_cache_config").text == "CachePreferNone"


def _csv_sections(rows: list[dict[str, str]], kid: int) -> list[str]:
    """Section names in the order the details page prints them (rule rows give ids)."""
    out: OrderedDict[str, None] = OrderedDict()
    for r in rows:
        if int(r["ID"]) == kid:
            out[r["Section Name"]] = None
    return list(out)


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_section_order_is_ncus(
    ncu_dir: Path, name: str, vit: KernelMetrics, lstm: KernelMetrics
) -> None:
    km = vit if name == "vit_full" else lstm
    rows = csv_dicts(page(ncu_dir, name, "details_base"))
    for kid in km.kernel_ids():
        ours = []
        for s in km.sections(kid):
            if s.metrics:
                ours.append(s.name)
            if s.rules:
                ours.append(s.id)
        want = _csv_sections(rows, kid)
        assert list(OrderedDict.fromkeys(ours)) == want


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_rules_match_the_details_page(
    ncu_dir: Path, name: str, vit: KernelMetrics, lstm: KernelMetrics
) -> None:
    km = vit if name == "vit_full" else lstm
    want = [
        (
            int(r["ID"]),
            r["Section Name"],
            r["Rule Name"],
            _CODES[r["Rule Type"]],
            r["Rule Description"],
            r["Estimated Speedup Type"],
            r["Estimated Speedup"],
        )
        for r in csv_dicts(page(ncu_dir, name, "details_base"))
        if r["Rule Name"]
    ]
    got = [
        (r.kernel_id, r.section_id, r.rule_id, r.type, r.message, r.speedup_type or "", r.speedup)
        for r in km.rules()
    ]
    assert len(got) == len(want) > 0
    for g, w in zip(got, want, strict=True):
        assert g[:6] == w[:6]
        if w[6]:
            assert g[6] is not None and close(g[6], float(w[6]), 0.01 if "." in w[6] else 1)
        else:
            assert g[6] is None
    assert not any("@section:" in r.message or "@url:" in r.message for r in km.rules())


def test_rule_details_from_the_api(vit: KernelMetrics) -> None:
    rules = vit.rules(3)
    sol = next(r for r in rules if r.rule_id == "SOLBottleneck")
    assert sol.title == "High Memory Throughput" and sol.rule_name == "Bottleneck"
    assert "Look at the Memory Workload Analysis section" in sol.message
    assert sol.focus and sol.focus[0].metric.startswith("gpu__compute_memory_throughput")
    roof = next(r for r in rules if r.rule_id == "SOLFPRoofline")
    assert "Profiling Guide (https://docs.nvidia.com/nsight-compute/ProfilingGuide/" in roof.message
    top = vit.top_rules(3, 2)
    assert [r.rule_id for r in top] == ["UncoalescedGlobalAccess", "TheoreticalOccupancy"]


def test_sections_of_a_kernel(vit: KernelMetrics) -> None:
    secs = vit.sections(3)
    assert secs[0].id == "SpeedOfLight" and secs[0].order == 10
    orders = [s.order for s in secs]
    assert orders == sorted(orders)
    sol = secs[0]
    assert [m.part for m in sol.metrics] == ["header"] * 10
    assert "body" in {m.part for s in vit.sections(3, "all") for m in s.metrics}
    chart = next(s for s in secs if s.id == "MemoryWorkloadAnalysis_Chart")
    assert chart.parent_id == "MemoryWorkloadAnalysis" and not chart.metrics and chart.rules
    compute, memory = vit.throughput(3)
    assert compute == pytest.approx(63.59, abs=0.005) and memory == pytest.approx(77.52, abs=0.005)


def test_cache_round_trip(ncu_dir: Path, tmp_path: Path) -> None:
    opts = OpenOptions(cache_dir=tmp_path / "c", use_cache=True)
    first = open_ncu(rep(ncu_dir, "lstm_basic"), opts)
    second = open_ncu(rep(ncu_dir, "lstm_basic"), opts)
    assert first.meta["from_cache"] is False and second.meta["from_cache"] is True
    for n in ("kernels", "sections", "metrics", "rules"):
        assert first.tables[n].equals(second.tables[n]), n
    assert second.rules(0) == first.rules(0)
    info = describe_ncu(rep(ncu_dir, "lstm_basic"), opts)
    assert info["format"] == "ncu-rep" and info["rows"]["kernels"] == 30
    assert info["devices"][0]["name"] == "NVIDIA H200" and info["devices"][0]["sm_count"] == 132
    assert info["from_cache"] is True and info["cache"]


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_normalized_api_names_equal_the_csv_names(
    ncu_dir: Path, name: str, vit: KernelMetrics, lstm: KernelMetrics
) -> None:
    """ncu_names.normalize bridges the API's (and nsys's) spelling and ncu's CSV spelling."""
    from tuiperf.model.ncu.names import normalize, short_name

    km = vit if name == "vit_full" else lstm
    names = {int(r["ID"]): r["Kernel Name"] for r in csv_dicts(page(ncu_dir, name, "details"))}
    for kid in km.kernel_ids():
        k = km.kernel(kid)
        assert normalize(k.demangled or "") == normalize(names[kid])
        assert short_name(names[kid]) == k.name


def test_text_that_is_not_utf8_reads_as_replacement_characters(
    ncu_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ncu_report hands the bytes of a damaged report that are not UTF-8 over as lone
    surrogates (seen by flipping bytes of lstm_basic.ncu-rep); they are names, not a crash."""
    from tuiperf.load.ncu import rep as ncu_rep

    real_kernel, real_rules = ncu_rep._kernel_row, ncu_rep._rule_rows

    def kernel_row(kid: int, a: object) -> dict[str, object]:
        return {**real_kernel(kid, a), "name": "k\udcff"}

    def rule_rows(kid: int, a: object, secs: list[object]) -> list[dict[str, object]]:
        rows = list(real_rules(kid, a, secs))  # type: ignore[arg-type]
        return [{**r, "focus": [{"info": "x\udcd3"}]} for r in rows]

    monkeypatch.setattr(ncu_rep, "_kernel_row", kernel_row)
    monkeypatch.setattr(ncu_rep, "_rule_rows", rule_rows)
    km = open_ncu(rep(ncu_dir, "lstm_basic"), OpenOptions(use_cache=False))
    assert set(km.kernels["name"].to_pylist()) == {"k\ufffd"}
    assert "x\ufffd" in str(km.tables["rules"]["focus"].to_pylist()[:1])
