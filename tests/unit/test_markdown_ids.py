"""`analyze`/`diff --format markdown --max-chars` and the stable ids of findings and
evidence rows: sizes against the budget at its boundaries, what is dropped against the
JSON output's findings, ids against the rows they name (sqlite3 on the export)."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from tests.conftest import nsys_report
from tuiperf.analysis import ids
from tuiperf.analysis.engine import analyze
from tuiperf.cli import main
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.report.mdfit import fit

_DROPPED = re.compile(r"\*(\d+) lower-ranked findings? left out to stay within ([\d,]+) char")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args, "-q"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def cnn_json() -> dict:
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["analyze", str(nsys_report("cnn_osrt")), "-f", "json", "-q"]) == 0
    return json.loads(buf.getvalue())


# -- fit: the budget at its boundaries -------------------------------------------------------


def test_fit_keeps_the_order_and_never_exceeds() -> None:
    def note(n: int) -> str:
        return f"[{n} dropped]"

    heads, items = ["HEAD-FULL|", "H|"], ["aaaa", "bbbb", "cccc"]
    whole = "HEAD-FULL|aaaabbbbcccc"
    assert fit(heads, items, note, (), None) == whole
    assert fit(heads, items, note, (), len(whole)) == whole  # exactly at the budget: all
    one_less = fit(heads, items, note, (), len(whole) - 1)
    assert one_less == "H|aaaabbbbcccc"  # every item, under the smaller head
    assert fit(heads, items, note, (), 13) == "H|[3 dropped]"  # 2 + 11: the note alone
    assert fit(heads, items, note, (), 14) == "H|aaaabbbbcccc"  # its exact length
    # under the smallest head and the note (13), the head is cut and the note stays whole
    assert fit(heads, items, note, (), 12) == "[3 dropped]"  # no room for a cut head
    assert fit(heads, items, note, (), 11) == "[3 dropped]"  # the note's exact length
    assert fit(heads, items, note, (), 10) == "[3 droppe…"  # shorter than the note: cut
    small = ["HEAD-FULL|", "HEADHEAD|"]  # 9 + 11 > 16: the head is cut ('…' and a blank line)
    assert fit(small, items, note, (), 16) == "HE…\n\n[3 dropped]"
    assert fit(small, items, note, (), 15) == "H…\n\n[3 dropped]"
    assert fit(small, items, note, (), 14) == "[3 dropped]"  # 11 + 3: no head left
    for budget in range(1, 40):
        text = fit(heads, items, note, ("FOOT",), budget)
        assert len(text) <= budget
        kept = [i for i in items if i in text]
        assert kept == items[: len(kept)]  # the lower ones go first
        if len(kept) < len(items):  # says so, unless the budget is shorter than saying it
            said = f"[{len(items) - len(kept)} dropped]"
            assert said in text or len(said) > budget


def test_a_cut_head_leaves_no_code_span_open() -> None:
    def note(n: int) -> str:
        return f"`{n}` left"

    text = fit(["ab `code span` cd"], ["x" * 40], note, (), 20)
    assert text == "ab …\n\n`1` left" and text.count("`") % 2 == 0  # not "ab `co…"


def test_fit_prefers_an_item_to_the_fuller_head() -> None:
    def note(n: int) -> str:
        return f"<{n}>"

    # the full head leaves no room for the item; the small one does
    assert fit(["F" * 10, "f"], ["x" * 6], note, (), 10) == "f" + "x" * 6
    # an item's smaller version is taken when the full one does not fit
    assert fit(["h"], [("LONGLONG", "sh")], note, (), 4) == "hsh"


# -- analyze --format markdown --max-chars ----------------------------------------------------


@pytest.mark.parametrize("budget", [150, 300, 399, 600, 1500, 3000, 6000, 12000])
def test_analyze_markdown_stays_within_the_budget(
    capsys: pytest.CaptureFixture[str], cnn_json: dict, budget: int
) -> None:
    code, md, _ = _run(capsys, "analyze", str(nsys_report("cnn_osrt")), "-f", "markdown",
                       "--max-chars", str(budget))  # fmt: skip
    assert code == 0 and len(md) <= budget
    headings = re.findall(r"^### (\d+)\. .*\(`([a-z0-9_]+)`\)$", md, flags=re.M)
    findings = cnn_json["findings"]
    # the kept findings are the best-ranked ones, in order; the note counts the rest
    assert [int(i) for i, _ in headings] == list(range(1, len(headings) + 1))
    assert [r for _, r in headings] == [f["rule"] for f in findings[: len(headings)]]
    m = _DROPPED.search(md)
    left = len(findings) - len(headings)
    # the note on what is left out is always there (the head cut to make room for it)
    assert (m is not None and int(m.group(1)) == left) if left else m is None
    if budget <= 300:  # not even the verdict and the note fit: the verdict, cut
        assert "…\n\n*" in md and not headings
    if budget >= 600:
        first = f"**Verdict:** {len(findings)} findings, the worst error; first: CPU-bound"
        assert first in md


def test_without_a_budget_nothing_is_dropped_and_the_full_length_is_the_boundary(
    capsys: pytest.CaptureFixture[str], cnn_json: dict
) -> None:
    rep = str(nsys_report("cnn_osrt"))
    n = len(cnn_json["findings"])
    _, full, _ = _run(capsys, "analyze", rep, "-f", "markdown")
    assert "left out" not in full and full.count("\n### ") == n
    assert "| part | total | % of steps | median/step |" in full and "```\n█" in full
    _, same, _ = _run(capsys, "analyze", rep, "-f", "markdown", "--top", "0")
    assert same == full
    _, at, _ = _run(capsys, "analyze", rep, "-f", "markdown", "--max-chars", str(len(full)))
    # the budgeted form has no summary table: at the unbudgeted length everything else fits
    assert "left out" not in at and at.count("\n### ") == n and len(at) <= len(full)
    _, under, _ = _run(capsys, "analyze", rep, "-f", "markdown", "--max-chars", str(len(at) - 1))
    assert len(under) <= len(at) - 1
    assert "left out" in under or under.count("\n### ") == n  # dropped, or shorter forms


def test_markdown_ids_are_the_json_ids(capsys: pytest.CaptureFixture[str], cnn_json: dict) -> None:
    _, md, _ = _run(capsys, "analyze", str(nsys_report("cnn_osrt")), "-f", "markdown")
    assert re.findall(r"^\*id:\* `([^`]+)`", md, flags=re.M) == [
        f["id"] for f in cnn_json["findings"]
    ]
    first_rows = re.findall(r"^\| `([^`]+)` \|", md, flags=re.M)
    want = [e["id"] for f in cnn_json["findings"] for e in f["evidence"][:5]]
    assert first_rows == want


def test_the_note_fits_at_its_own_length(capsys: pytest.CaptureFixture[str]) -> None:
    """At the note's exact length only the note; one under, the note cut (nothing fits)."""
    rep = str(nsys_report("cnn_osrt"))
    _, md, _ = _run(capsys, "analyze", rep, "-f", "markdown", "--max-chars", "300")
    note = md[md.index("*10 lower") :]
    n = len(note)  # the note's length does not depend on the budget while it has 3 digits
    for budget, whole in ((n, True), (n + 3, True), (n + 4, True), (n - 1, False)):
        _, md, _ = _run(capsys, "analyze", rep, "-f", "markdown", "--max-chars", str(budget))
        assert len(md) <= budget
        m = _DROPPED.search(md)
        assert (m is not None and m.group(1) == "10" and md.endswith(".*\n\n")) is whole
    _, md, _ = _run(capsys, "analyze", rep, "-f", "markdown", "--max-chars", str(n + 4))
    assert md.startswith("#…\n\n*10 lower") and len(md) == n + 4


def test_max_chars_is_markdown_only_and_positive(capsys: pytest.CaptureFixture[str]) -> None:
    rep = str(nsys_report("lstm"))
    for args in (("-f", "json", "--max-chars", "100"), ("-f", "markdown", "--max-chars", "0")):
        code, _, err = _run(capsys, "analyze", rep, *args)
        assert code == 2 and err.count("\n") == 1 and "--max-chars" in err


# -- the ids -----------------------------------------------------------------------------------


def test_evidence_ids_name_the_rows_they_come_from(cnn_json: dict) -> None:
    """`memcpy:R` is row R of the canonical memcpy table, which is the export's memcpy rows
    in start order: the row's start, kind and size agree with sqlite3's."""
    by_rule = {f["rule"]: f for f in cnn_json["findings"]}
    ev = by_rule["pageable_h2d_in_steps"]["evidence"]
    with sqlite3.connect(f"file:{nsys_report('cnn_osrt')}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT start, srcKind, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                          "ORDER BY start").fetchall()  # fmt: skip
    assert len(ev) == 18
    for e in ev:
        table, row = e["id"].split(":")
        assert table == "memcpy" == e["table"] and int(row) == e["row"]
        start, src, kind = rows[int(row)]
        assert (start, src, kind) == (e["start_ns"], 0, 1)  # pageable, host-to-device
    spans = by_rule["cpu_bound"]["evidence"]
    assert all(e["id"] == f"at:{e['start_ns']}+{e['duration_ns']}" for e in spans)


@pytest.mark.parametrize("name", ["cnn_osrt", "vit_amp", "lstm", "vit_range"])
def test_ids_are_stable_distinct_and_parse_back(name: str) -> None:
    a = analyze(open_trace(nsys_report(name), OpenOptions(use_cache=False)))
    b = analyze(open_trace(nsys_report(name), OpenOptions()))  # through the cache
    fa, fb = ids.finding_ids(a.findings), ids.finding_ids(b.findings)
    assert fa == fb and len(set(fa)) == len(fa) > 0
    for f, g in zip(a.findings, b.findings, strict=True):
        ea = ids.evidence_ids(f.evidence)
        assert ea == ids.evidence_ids(g.evidence)
        for e in ea:
            t = ids.parse(e)
            assert (t.table, t.row) != ("", None) or t.start_ns is not None
    for fid in fa:
        assert ids.parse(fid).finding == fid


def test_a_rule_firing_twice_gets_its_first_rows_id() -> None:
    from tuiperf.analysis.findings import Evidence, Finding, Fix, Scope, Severity

    def finding(rule: str, row: int | None, label: str = "") -> Finding:
        import numpy as np

        ev = (Evidence.build("kernels", np.array([row]), np.array([10]), np.array([5]))
              if row is not None else Evidence.empty())  # fmt: skip
        return Finding(rule, "t", Severity.INFO, "m", Fix(""), Scope("kernel", label), "x", 1, ev)

    fs = [finding("a", 3), finding("a", 7), finding("b", 1), finding("c", None, "k<1>"),
          finding("c", None, "k<2>"), finding("a", 3)]  # fmt: skip
    assert ids.finding_ids(fs) == ["a@kernels:3", "a@kernels:7", "b", "c@kernel:_k_1",
                                   "c@kernel:_k_2", "a@kernels:3#2"]  # fmt: skip


@pytest.mark.parametrize("bad", ["foo:1", "kernels:-1", "kernels:x", "", "at:1", "at:1+-2",
                                 "Kernels:1", "a b"])  # fmt: skip
def test_bad_ids(bad: str) -> None:
    with pytest.raises(ValueError, match="not an id"):
        ids.parse(bad)


def test_goto_with_a_bad_id_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(nsys_report("lstm")), "--goto", "foo:1"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("tuiperf: error: --goto: not an id: 'foo:1'")


# -- diff --format markdown --max-chars -------------------------------------------------------


@pytest.mark.parametrize("budget", [200, 900, 2500, 5000])
def test_diff_markdown_drops_the_lower_sections_first(
    capsys: pytest.CaptureFixture[str], budget: int
) -> None:
    args = ("diff", str(nsys_report("lstm")), str(nsys_report("cnn_osrt")), "-f", "markdown")
    _, full, _ = _run(capsys, *args)
    order = re.findall(r"^### (.+)$", full, flags=re.M)
    assert order[:2] == ["Step and budget (mean per steady step)",
                         "Findings (saving as % of step time; id: the finding)"]  # fmt: skip
    _, md, _ = _run(capsys, *args, "--max-chars", str(budget))
    assert len(md) <= budget
    kept = re.findall(r"^### (.+)$", md, flags=re.M)
    assert kept == order[: len(kept)]
    m = re.search(r"\*(\d+) lower sections? left out", md)
    assert (int(m.group(1)) if m else 0) == len(order) - len(kept) or md.endswith("…")
    if budget >= 900:
        assert "**Verdict:** " in md


@pytest.mark.parametrize(
    ("timeline", "ncu"),
    [(None, "lstm_basic"), (None, "vit_full"), ("lstm", "lstm_basic"), ("vit_range", "vit_full")],
)
def test_ncu_ids_parse_back(
    tmp_path_factory: pytest.TempPathFactory, timeline: str | None, ncu: str
) -> None:
    """Every id analyze prints for an Nsight Compute report, alone or linked, parses back:
    findings as findings (`ncu:Rule@...`), rows as the ncu kernel (ncu's ID, from its own
    details page) or the linked launch."""
    from tests.support import needs
    from tests.support.ncu_data import csv_dicts, decompress, page, rep
    from tuiperf.load.ncu.open import open_ncu

    needs.module("ncu_report")
    folder = decompress(tmp_path_factory)
    km = open_ncu(rep(folder, ncu), OpenOptions(use_cache=False))
    trace = None if timeline is None else open_trace(nsys_report(timeline), OpenOptions())
    result = analyze(trace, km)
    fids = ids.finding_ids(result.findings)
    assert any(f.startswith("ncu:") for f in fids)
    for fid in fids:
        assert ids.parse(fid).finding == fid
    ncu_ids = {int(r["ID"]) for r in csv_dicts(page(folder, ncu, "details"))}
    n_kernels = trace.table("kernels").num_rows if trace is not None else 0
    for f in result.findings:
        for e in ids.evidence_ids(f.evidence):
            t = ids.parse(e)
            if t.table == "ncu_kernels":
                assert t.row in ncu_ids
            elif t.table == "kernels":
                assert t.row is not None and 0 <= t.row < n_kernels
            else:  # the timeline's own findings: another event, or a stretch of time
                assert timeline is not None and (t.row is not None or t.start_ns is not None)


def test_goto_without_one_timeline_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """--goto with two timelines (the diff view), an .ncu-rep alone or two of them, or an
    ncu result's id without its report: one line, exit 2, before any terminal is needed."""
    from tests.support.ncu_data import decompress, rep

    folder = decompress(tmp_path_factory)
    ncu_a, ncu_b = str(rep(folder, "lstm_basic")), str(rep(folder, "vit_full"))
    lstm, cnn = str(nsys_report("lstm")), str(nsys_report("cnn_osrt"))
    for args, says in (
        ((lstm, cnn, "--goto", "kernels:1"), "the diff view of two reports"),
        ((ncu_a, "--goto", "ncu_kernels:1"), "an Nsight Compute report alone"),
        ((ncu_a, ncu_b, "--goto", "latency_bound"), "an Nsight Compute report alone"),
        ((lstm, "--goto", "ncu_kernels:1"), "without its report"),
    ):
        code = main(list(args))
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, args
        assert err.startswith(f"tuiperf: error: --goto {args[-1]}: ") and says in err, err
