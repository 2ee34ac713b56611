"""`analyze TIMELINE NCU` with an ncu report of another program: its findings about kernels
the timeline never ran are listed apart, after the timeline's, with no saving; none twice."""

from __future__ import annotations

import io
from pathlib import Path

from tests.support import needs
from tests.support.data import unxz
from tuiperf.analysis.engine import analyze
from tuiperf.analysis.findings import SOURCE_NCU
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.report.findings import print_text

needs.module("ncu_report")

NCU = Path(__file__).resolve().parents[1] / "data" / "ncu"


def _ncu(name: str) -> KernelMetrics:
    return open_ncu(unxz(NCU / f"{name}.ncu-rep.xz"), OpenOptions(use_cache=False))


def test_other_programs_ncu_findings_go_apart(nsys_dir: Path) -> None:
    trace = open_trace(nsys_dir / "vit_amp.sqlite", OpenOptions(use_cache=False))
    res = analyze(trace, _ncu("lstm_basic"))
    ranked_ncu = [f for f in res.findings if f.source == SOURCE_NCU]
    assert res.unlinked  # the LSTM report's findings are there, apart
    assert not ranked_ncu  # none of its kernels has a launch with its grid/block in the ViT
    assert all(f.est_saving_ns is None for f in res.unlinked)
    keys = [(f.rule, f.title, tuple(f.evidence.rows["row"].to_pylist())) for f in res.unlinked]
    assert len(keys) == len(set(keys))
    out = io.StringIO()
    print_text(out, res, width=200)
    text = out.getvalue()
    apart = text.index("Nsight Compute results with no launch in this timeline")
    assert apart > text.index(" 1. ")  # after the timeline's findings


def test_same_programs_ncu_findings_are_ranked(nsys_dir: Path) -> None:
    trace = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    res = analyze(trace, _ncu("vit_full"))
    assert not res.unlinked
    ranked_ncu = [f for f in res.findings if f.source == SOURCE_NCU]
    assert ranked_ncu and all(f.evidence.rows["table"][0].as_py() == "kernels" for f in ranked_ncu)
    assert any(f.est_saving_ns for f in ranked_ncu)
    keys = [(f.rule, f.title, tuple(f.evidence.rows["row"].to_pylist())) for f in ranked_ncu]
    assert len(keys) == len(set(keys))


def test_savings_say_what_they_are_a_share_of(nsys_dir: Path) -> None:
    """A % of the whole capture (start-up included) beside a % of step time misled: each
    report says its whole, and every saving names it."""
    alone = analyze(None, _ncu("vit_full"))
    assert alone.saving_basis == "the profiled kernels' summed duration"
    total = alone.profiled_ns  # the summed ncu durations
    f = next(f for f in alone.findings if f.est_saving_ns)
    assert f.est_saving_pct == round(100.0 * f.est_saving_ns / total, 2)
    trace = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    res = analyze(trace)
    assert res.saving_basis.startswith("steady-state step time")
    out = io.StringIO()
    print_text(out, res, width=300)
    assert "% of steady-state step time)" in out.getvalue()
    assert "Findings by the share of steady-state step time" in out.getvalue()


def test_evidence_numbers_are_never_cut(nsys_dir: Path) -> None:
    """A capture of minutes has starts like `155.370 s`; at 80 columns they were cut."""
    import numpy as np
    from rich.console import Console

    from tuiperf.analysis.findings import Evidence, Finding, Fix, Scope, Severity
    from tuiperf.report.findings import _evidence_table

    ev = Evidence.build(
        "kernels", np.array([1, 2]), np.array([155_370_123_456, 1_234_567_890_123]),
        np.array([1000, 2000]), {"name": np.array(["x" * 200, "y" * 200])}, {"name": "Kernel"},
    )  # fmt: skip
    f = Finding("r", "t", Severity.INFO, "m", Fix(""), Scope("report"), "tuiperf", 2, ev)
    con = Console(width=60, record=True, file=io.StringIO())
    con.print(_evidence_table(f, 5))
    text = con.export_text()
    assert "155.370 s" in text and "1234.568 s" in text, text
