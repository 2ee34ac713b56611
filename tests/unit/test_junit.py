"""`analyze --format junit`: one testcase per rule; the failing ones are the rules with a
finding at or above --fail-on, counted here from the JSON output of the same report."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from contextlib import redirect_stdout

import pytest

from tests.conftest import nsys_report
from tuiperf.analysis.findings import AnalysisResult, Evidence, Finding, Fix, Scope, Severity
from tuiperf.cli import main
from tuiperf.report.junit import write_junit

LEVELS = {"info": 1, "warning": 2, "error": 3}


def _out(*args: str) -> tuple[int, str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main([*args, "-q"])
    return code, buf.getvalue()


def _checks() -> list:  # type: ignore[type-arg]
    from tuiperf.analysis.engine import analyze
    from tuiperf.load.open import OpenOptions, open_trace

    return analyze(open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False))).checks


@pytest.fixture(scope="module")
def cnn() -> tuple[dict, list[dict]]:
    _, text = _out("analyze", str(nsys_report("cnn_osrt")), "-f", "json")
    doc = json.loads(text)
    return doc, doc["findings"]


@pytest.mark.parametrize("fail_on", [None, "info", "warning", "error"])
def test_failing_testcases_are_the_rules_at_or_above_the_threshold(
    cnn: tuple[dict, list[dict]], fail_on: str | None
) -> None:
    _, findings = cnn
    args = ["analyze", str(nsys_report("cnn_osrt")), "-f", "junit"]
    code, xml = _out(*args, *(["--fail-on", fail_on] if fail_on else []))
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')
    root = ET.fromstring(xml)
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    level = LEVELS[fail_on or "warning"]
    want_failing = {f["rule"] for f in findings if LEVELS[f["severity"]] >= level}
    failing = {n for n, c in cases.items() if c.find("failure") is not None}
    assert failing == want_failing and failing  # cnn_osrt has an error, warnings and infos
    assert int(suite.get("failures", "-1")) == len(failing) == int(root.get("failures", "-1"))
    checks = _checks()  # the rules that ran, and how (the engine's own account)
    assert set(cases) == {c.rule for c in checks} | {f["rule"] for f in findings}
    assert int(suite.get("tests", "-1")) == len(cases) > 10
    skipped = {n for n, c in cases.items() if c.find("skipped") is not None}
    assert skipped == {c.rule for c in checks if c.status == "skipped"} and skipped
    assert suite.get("skipped") == str(len(skipped))
    for f in findings:  # each finding is in its rule's case: failing, or below the threshold
        case = cases[f["rule"]]
        node = case.find("failure" if LEVELS[f["severity"]] >= level else "system-out")
        assert node is not None and f"(id {f['id']})" in (node.text or "")
    # the exit code is --fail-on's alone: junit without it does not fail the run
    assert code == (5 if fail_on else 0)


def test_hostile_names_make_valid_xml() -> None:
    ev = Evidence.empty()
    f = Finding("r", "evil \x1b[31m<tag> & \x00", Severity.ERROR, "m]]>", Fix("f"),
                Scope("report"), "tuiperf", 1, ev)  # fmt: skip
    res = AnalysisResult([f], [], 1, source="a\x07b")
    out = io.StringIO()
    write_junit(out, res, Severity.WARNING)
    root = ET.fromstring(out.getvalue())  # well-formed: no control characters, all escaped
    fail = root.find("testsuite/testcase/failure")
    assert fail is not None and fail.get("message") == "error: evil <tag> & "
    assert "m]]>" in (fail.text or "")


def test_junit_to_a_file_is_atomic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r.xml"
    code, _ = _out("analyze", str(nsys_report("lstm")), "-f", "junit", "-o", str(out))
    assert code == 0 and ET.parse(out).getroot().tag == "testsuites"
    assert [p.name for p in tmp_path.iterdir()] == ["r.xml"]
