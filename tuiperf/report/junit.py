"""`analyze --format junit`: the rules as a JUnit XML test report, for CI systems that show one.

One testcase per rule: every rule that ran (`checks`), and any finding's rule that is not
among them (Nsight Compute rules report under their own names). A testcase fails when its
rule found something at or above the threshold (`--fail-on`, else warning); a rule that
crashed is an error, one that did not apply is skipped; findings below the threshold are in
its system-out. Text is cleaned of control characters (XML 1.0 cannot carry them).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, TextIO

from tuiperf.analysis.findings import SCOPE_EVENTS
from tuiperf.analysis.ids import evidence_ids, finding_ids
from tuiperf.model import fmt

if TYPE_CHECKING:
    from tuiperf.analysis.findings import AnalysisResult, Finding, Severity

#: evidence ids listed per finding in a failure's text
EVIDENCE_IDS = 5


def write_junit(out: TextIO, result: AnalysisResult, threshold: Severity) -> None:
    suite = junit_suite(result, threshold)
    keys = ("name", "tests", "failures", "errors", "skipped")
    root = ET.Element("testsuites", {k: suite.get(k, "0") for k in keys})
    root.append(suite)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")


def junit_suite(result: AnalysisResult, threshold: Severity) -> ET.Element:
    ids = dict(zip(map(id, result.findings), finding_ids(result.findings), strict=True))
    by_rule: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_rule.setdefault(f.rule, []).append(f)
    cases = [(c.rule, c.source, c.status, c.note) for c in result.checks]
    known = {c.rule for c in result.checks}
    cases += [(r, fs[0].source, "found", "") for r, fs in by_rule.items() if r not in known]
    suite = ET.Element("testsuite", {"name": _clean(f"tuiperf analyze: {result.source}")})
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for rule, source, status, note in cases:
        case = ET.SubElement(suite, "testcase", {"classname": f"tuiperf.{source}",
                                                 "name": rule, "time": "0"})  # fmt: skip
        counts["tests"] += 1
        found = by_rule.get(rule, [])
        failing = [f for f in found if f.severity >= threshold]
        if status == "failed":
            ET.SubElement(case, "error", {"message": _clean(note)}).text = _clean(note)
            counts["errors"] += 1
        elif status == "skipped":
            ET.SubElement(case, "skipped", {"message": _clean(note)})
            counts["skipped"] += 1
        elif failing:
            worst = max(failing, key=lambda f: f.severity)
            attrs = {"message": _clean(f"{worst.severity.word}: {worst.title}"),
                     "type": worst.severity.word}  # fmt: skip
            text = "\n\n".join(_finding_text(f, ids[id(f)]) for f in failing)
            ET.SubElement(case, "failure", attrs).text = text
            counts["failures"] += 1
        passing = [f for f in found if f not in failing]
        if passing:
            below = "\n\n".join(_finding_text(f, ids[id(f)]) for f in passing)
            ET.SubElement(case, "system-out").text = f"below {threshold.word}:\n\n{below}"
    for k, v in counts.items():
        suite.set(k, str(v))
    suite.set("time", "0")
    return suite


def _finding_text(f: Finding, fid: str) -> str:
    scope = "" if f.scope.kind == SCOPE_EVENTS else f"{f.scope.text()} · "
    lines = [
        f"{f.severity.word}: {f.title} (id {fid})",
        f"scope: {scope}{fmt.plural(f.count, 'event')}",
        f.message,
    ]
    if f.fix.text:
        lines.append(f"fix: {f.fix.text}")
    if f.fix.snippet:
        lines.append(f.fix.snippet)
    eids = [e for e in evidence_ids(f.evidence) if e][:EVIDENCE_IDS]
    if eids:
        more = f" (+{len(f.evidence) - len(eids):,} more)" if len(f.evidence) > len(eids) else ""
        lines.append("evidence: " + ", ".join(eids) + more)
    return "\n".join(_clean(s, keep_lines=True) for s in lines)


def _clean(text: str, keep_lines: bool = False) -> str:
    if keep_lines:
        return "\n".join(fmt.clean(line) for line in text.split("\n"))
    return fmt.clean(text)
