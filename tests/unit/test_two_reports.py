"""A timeline report and an Nsight Compute report given together to info, summary and ncu."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import nsys_path
from tests.support import needs
from tests.support.ncu_data import decompress, rep
from tuiperf.cli import main

needs.module("ncu_report")


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decompress(tmp_path_factory)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main([*args, "--no-cache"])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("order", ["nsys first", "ncu first"])
def test_ncu_json_links_each_result_to_its_launches(nsys_dir, ncu_dir, capsys, order) -> None:
    pair = [str(nsys_path(nsys_dir, "vit_range")), str(rep(ncu_dir, "vit_full"))]
    if order == "ncu first":
        pair.reverse()
    rc, out, err = run(capsys, "ncu", *pair, "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["link"]["unmatched_ncu"] == [] and doc["link"]["matched_on"] == "mangled name"
    rows = [k["nsys"]["nsys_profiled_rows"] for k in doc["kernels"]]
    # vit_full profiled the first 7 kernels of one step: 7 consecutive launches of the trace
    assert all(len(r) == 1 for r in rows)
    first = [r[0] for r in rows]
    assert first == list(range(first[0], first[0] + 7))
    assert all(k["nsys"]["nsys_launches"] >= 1 for k in doc["kernels"])


def test_ncu_table_says_what_is_unmatched(nsys_dir, ncu_dir, capsys) -> None:
    """The LSTM's ncu results against the ViT's timeline: the GEMMs never ran there."""
    rc, out, err = run(
        capsys, "ncu", str(rep(ncu_dir, "lstm_basic")), str(nsys_path(nsys_dir, "vit_range")),
        "--width", "80", "--rules",
    )  # fmt: skip
    assert rc == 0, err
    assert "unmatched" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_info_describes_both_and_the_link(nsys_dir, ncu_dir, capsys) -> None:
    rc, out, err = run(
        capsys, "info", str(nsys_path(nsys_dir, "vit_range")), str(rep(ncu_dir, "vit_full")),
        "--json",
    )  # fmt: skip
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["timeline"]["rows"]["kernels"] == 2560
    assert doc["ncu"]["rows"]["kernels"] == 7
    assert doc["link"]["nsys_kernel_rows"] == 2560
    assert len(doc["link"]["kernels"]) == 7
    rc, out, err = run(
        capsys, "info", str(nsys_path(nsys_dir, "vit_range")), str(rep(ncu_dir, "vit_full"))
    )
    assert rc == 0 and "7 of 7 ncu results linked" in out


def test_summary_table_gains_ncu_ids_and_csv_stays_nsys_stats(
    nsys_dir, ncu_dir, reference_dir, capsys
) -> None:
    sqlite, ncu = str(nsys_path(nsys_dir, "vit_range")), str(rep(ncu_dir, "vit_full"))
    rc, out, err = run(capsys, "summary", sqlite, ncu, "--width", "160", "--top", "0")
    assert rc == 0, err
    assert "ncu IDs" in out
    rc, out, err = run(capsys, "summary", sqlite, ncu, "--csv")
    want = (reference_dir / "stats_vit_range_cuda_gpu_kern_sum.csv").read_text()
    assert rc == 0 and out == want


@pytest.mark.parametrize(
    "args",
    [("vit_range", "vit_range"), ("vit_full", "vit_full")],
    ids=["two timelines", "two ncu reports"],
)
def test_two_of_a_kind_is_a_usage_error(nsys_dir, ncu_dir, capsys, args) -> None:
    paths = [
        str(nsys_path(nsys_dir, a)) if a == "vit_range" else str(rep(ncu_dir, a)) for a in args
    ]
    rc, out, err = run(capsys, "info", *paths)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("bad", [("--top", "-1"), ("--width", "0")])
def test_summary_rejects_nonsense_numbers(nsys_dir, capsys, bad) -> None:
    rc, out, err = run(capsys, "summary", str(nsys_path(nsys_dir, "vit_range")), *bad)
    assert rc == 2 and out == "" and err.startswith("tuiperf: error: ")
