"""`tuiperf ncu bf16.ncu-rep --baseline fp32.ncu-rep`: kernels matched across the reports,
and every compared value equal to ncu's own details CSV of the report it comes from."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_data import close
from tests.support.ncu_depth import DTYPES, details_rows, number, report
from tuiperf.cli import main
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.baseline import BY_BASE_NAME, BY_NAME, BY_ORDER, compare, match_kernels
from tuiperf.model.ncu.metrics import KernelMetrics

needs.module("ncu_report")


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ncu-depth")
    return {d: report(d, tmp) for d in DTYPES}


@pytest.fixture(scope="module")
def reports(paths: dict[str, Path]) -> dict[str, KernelMetrics]:
    return {d: open_ncu(p, OpenOptions(use_cache=False)) for d, p in paths.items()}


def test_kernels_are_matched_by_name_then_order(reports: dict[str, KernelMetrics]) -> None:
    pairs = match_kernels(reports["bf16"], reports["fp32"])
    # the matmul changed library (xmma -> nvjet): launch order, with a note; the two
    # elementwise kernels and the reduction are other template instances: function name
    assert [(p.kernel_id, p.baseline_id, p.match) for p in pairs] == [
        (0, 0, BY_ORDER),
        (1, 1, BY_BASE_NAME),
        (2, 2, BY_BASE_NAME),
        (3, 3, BY_BASE_NAME),
        (4, 4, BY_NAME),
    ]
    assert "launch order" in pairs[0].note and pairs[4].note == ""
    same = match_kernels(reports["fp32"], reports["fp32"])
    assert all(p.match == BY_NAME and p.kernel_id == p.baseline_id for p in same)


def test_names_win_over_launch_order(reports: dict[str, KernelMetrics]) -> None:
    """A baseline whose kernels ran in the reverse order: the Triton kernel still finds
    its namesake and the reduction its function; the two elementwise kernels pair in the
    baseline's launch order, the matmul takes what is left."""
    fp32 = reports["fp32"]
    tables = dict(fp32.tables, kernels=fp32.kernels.take([4, 3, 2, 1, 0]))
    reversed_fp32 = KernelMetrics(tables, fp32.meta)
    assert reversed_fp32.kernel_ids() == [4, 3, 2, 1, 0]
    pairs = match_kernels(reports["bf16"], reversed_fp32)
    assert [(p.kernel_id, p.baseline_id, p.match) for p in pairs] == [
        (0, 0, BY_ORDER),
        (1, 2, BY_BASE_NAME),
        (2, 1, BY_BASE_NAME),
        (3, 3, BY_BASE_NAME),
        (4, 4, BY_NAME),
    ]


def _ref(dtype: str) -> dict[tuple[int, str, str], str]:
    return {
        (int(r["ID"]), r["Section Name"], r["Metric Name"]): r["Metric Value"]
        for r in details_rows(dtype)
        if r["Metric Name"]
    }


def _same(ours: str, printed: str) -> bool:
    if printed == "" or ours == "":
        return ours == printed
    try:
        want = number(printed)
    except ValueError:
        return ours == printed
    frac = printed.rpartition(".")[2] if "." in printed else ""
    return close(float(ours), want, 10.0 ** -len(frac))


def test_csv_values_are_ncus_of_each_report(
    paths: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["ncu", str(paths["bf16"]), "--baseline", str(paths["fp32"]), "--csv",
               "--no-cache"])  # fmt: skip
    out = capsys.readouterr()
    assert rc == 0, out.err
    rows = list(csv.DictReader(io.StringIO(out.out)))
    cur, base = _ref("bf16"), _ref("fp32")
    checked = 0
    for r in rows:
        kid, bid, sec, name = (
            int(r["ID"]),
            int(r["Baseline ID"]),
            r["Section Name"],
            r["Metric Name"],
        )
        assert _same(r["Metric Value"], cur.get((kid, sec, name), "")), r
        assert _same(r["Baseline Value"], base.get((bid, sec, name), "")), r
        if r["Difference"]:
            diff = float(r["Metric Value"]) - float(r["Baseline Value"])
            assert float(r["Difference"]) == pytest.approx(diff, rel=1e-9, abs=1e-9)
            if float(r["Baseline Value"]):
                pct = 100 * diff / abs(float(r["Baseline Value"]))
                assert float(r["Difference %"]) == pytest.approx(pct, rel=1e-9, abs=1e-9)
        checked += 1
    # every header metric of ncu's page of either report is in the comparison
    assert {(int(r["ID"]), r["Section Name"], r["Metric Name"]) for r in rows} >= set(cur)
    assert checked >= len(cur)
    gemm = [r for r in rows if r["ID"] == "0" and r["Metric Name"] == "Duration"]
    assert gemm[0]["Match"] == BY_ORDER and float(gemm[0]["Difference %"]) < -50


def test_table_output_names_both_kernels(
    paths: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["ncu", str(paths["bf16"]), "--baseline", str(paths["fp32"]), "--width", "80",
               "--id", "0", "--no-cache"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "nvjet_sm90" in out and "baseline [0]" in out and "launch order" in out
    assert "Diff %" in out and "Duration" in out


def test_compare_lists_sections_only_one_side_has(reports: dict[str, KernelMetrics]) -> None:
    rows = compare(reports["bf16"], 4, reports["fp32"], 4)
    assert rows and all(r.baseline is not None or r.current is not None for r in rows)
    duration = next(r for r in rows if r.name == "gpu__time_duration.sum")
    assert duration.difference == pytest.approx(
        reports["bf16"].value(4, "gpu__time_duration.sum")
        - reports["fp32"].value(4, "gpu__time_duration.sum")
    )


def test_bad_baseline_is_one_line(paths: dict[str, Path], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(b"not a report")
    rc = main(["ncu", str(paths["bf16"]), "--baseline", str(bad), "--no-cache"])
    err = capsys.readouterr().err
    assert rc != 0 and len(err.strip().splitlines()) == 1 and "bad.ncu-rep" in err


def test_json_has_both_values_per_metric(
    paths: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    rc = main(["ncu", str(paths["bf16"]), "--baseline", str(paths["fp32"]), "--json",
               "--kernel", "triton", "--no-cache"])  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["baseline"].endswith("fp32.ncu-rep")
    (k,) = doc["kernels"]
    assert (k["id"], k["baseline_id"], k["match"]) == (4, 4, BY_NAME)
    dur = next(m for m in k["metrics"] if m["metric_id"] == "gpu__time_duration.sum")
    assert dur["difference"] == pytest.approx(dur["value"] - dur["baseline"])
    assert dur["difference_pct"] == pytest.approx(100 * dur["difference"] / dur["baseline"])
