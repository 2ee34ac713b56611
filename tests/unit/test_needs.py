"""tests.support.needs: a missing dependency the dev install declares skips on a developer's
machine and fails in CI (CI set) or with TUIPERF_STRICT_DEPS=1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import needs

ABSENT = "tuiperf_no_such_module_for_the_needs_test"


def _strict_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TUIPERF_STRICT_DEPS", raising=False)


@pytest.mark.parametrize("value", ["", "0", "false", "no"])
def test_skips_off_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    _strict_off(monkeypatch)
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception):
        needs.module(ABSENT)
    with pytest.raises(pytest.skip.Exception):
        needs.program(ABSENT)


@pytest.mark.parametrize(
    ("var", "value"), [("CI", "true"), ("CI", "1"), ("TUIPERF_STRICT_DEPS", "1")]
)
def test_fails_in_ci(monkeypatch: pytest.MonkeyPatch, var: str, value: str, tmp_path: Path) -> None:
    _strict_off(monkeypatch)
    monkeypatch.setenv(var, value)
    for call in (lambda: needs.module(ABSENT), lambda: needs.program(ABSENT),
                 lambda: needs.file(tmp_path / "nope", "a console script")):  # fmt: skip
        with pytest.raises(pytest.fail.Exception, match="the dev install declares it"):
            call()


def test_present_ones_come_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert needs.module("json").dumps([1]) == "[1]"
    assert Path(needs.program("sh")).name == "sh"
    assert needs.file(Path(__file__), "this file") == Path(__file__)
