"""Text nits of issue 35 item 15: a count says its noun in the singular for one ("1 event",
"1 region"), and a finding scoped to its events does not say the count twice."""

from __future__ import annotations

import io

from rich.console import Console

from tuiperf.analysis.findings import SCOPE_EVENTS, Evidence, Finding, Fix, Scope, Severity
from tuiperf.model import fmt
from tuiperf.report.findings import _text_finding


def test_plural() -> None:
    assert [fmt.plural(n, "event") for n in (0, 1, 2, 1385)] == [
        "0 events", "1 event", "2 events", "1,385 events",
    ]  # fmt: skip


def _scope_line(scope: Scope, count: int) -> str:
    f = Finding("gpu_gaps", "GPU gaps", Severity.INFO, "m", Fix(""), scope, "nsys-analyze",
                count, Evidence.empty())  # fmt: skip
    out = io.StringIO()
    _text_finding(Console(file=out, width=200), 1, f, 0, True)
    return next(ln.strip() for ln in out.getvalue().splitlines() if "scope:" in ln)


def test_an_events_scope_says_its_count_once() -> None:
    line = _scope_line(Scope(SCOPE_EVENTS, "385 events"), 385)
    assert line.count("385") == 1 and "scope: 385 events ·" in line
    assert "scope: 1 event ·" in _scope_line(Scope(SCOPE_EVENTS, "1 event"), 1)
    assert "scope: report · 2 events ·" in _scope_line(Scope("report"), 2)
