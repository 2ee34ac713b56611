"""tuiperf.settings: every environment variable is read there, at call time, and nowhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tuiperf import settings

PACKAGE = Path(settings.__file__).resolve().parent


def _environment_uses(text: str, name: str) -> list[str]:
    """`os.environ`, `os.getenv`, `os.putenv`, `os.unsetenv` and `from os import environ …`."""
    found = []
    for node in ast.walk(ast.parse(text, name)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in ("environ", "environb", "getenv", "getenvb", "putenv", "unsetenv")
        ):
            found.append(f"{name}:{node.lineno} os.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"{name}:{node.lineno} {a.name}" for a in node.names if "env" in a.name]
    return found


def test_only_settings_reads_the_environment() -> None:
    uses = [
        use
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "settings.py"
        for use in _environment_uses(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    ]
    assert not uses, "read the environment through tuiperf.settings:\n" + "\n".join(uses)


def test_the_check_sees_every_form() -> None:
    text = "import os\nfrom os import getenv\nA = os.environ.get('X')\nos.putenv('Y', '1')\n"
    assert sorted(_environment_uses(text, "m.py")) == [
        "m.py:2 getenv",
        "m.py:3 os.environ",
        "m.py:4 os.putenv",
    ]


def test_read_at_call_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TUIPERF_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert settings.cache_dir() is None
    assert settings.xdg_cache_home() == tmp_path / "xdg"
    monkeypatch.setenv("TUIPERF_CACHE_DIR", "~/c")
    assert settings.cache_dir() == Path("~/c").expanduser()


@pytest.mark.parametrize(
    ("value", "expected"), [(None, False), ("", False), ("0", False), ("1", True), ("yes", True)]
)
def test_direct_io(monkeypatch: pytest.MonkeyPatch, value: str | None, expected: bool) -> None:
    if value is None:
        monkeypatch.delenv("TUIPERF_DIRECT_IO", raising=False)
    else:
        monkeypatch.setenv("TUIPERF_DIRECT_IO", value)
    assert settings.direct_io() is expected


@pytest.mark.parametrize(("value", "expected"), [(None, False), ("", False), ("0", True)])
def test_flags_are_any_non_empty_value(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: bool
) -> None:
    for var in ("TUIPERF_NO_CACHE", "TUIPERF_NO_PAGE_READER"):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    assert settings.no_cache() is expected
    assert settings.no_page_reader() is expected


def test_profile_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(settings.PROFILE_STEPS, "x3")
    assert settings.profile_steps() is None
    monkeypatch.setenv(settings.PROFILE_STEPS, "3")
    assert settings.profile_steps() == 3
    monkeypatch.setenv(settings.PROFILE_OUT, "")
    assert settings.profile_out() is None


def test_nsys_variables_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NSYS", "/b/nsys")
    monkeypatch.setenv("TUIPERF_NSYS", "")
    assert settings.nsys_variables() == [("NSYS", "/b/nsys")]
    assert settings.nsys_path() is None
    monkeypatch.setenv("TUIPERF_NSYS", "/a/nsys")
    assert settings.nsys_variables() == [("TUIPERF_NSYS", "/a/nsys"), ("NSYS", "/b/nsys")]


def test_terminal_holds_only_the_set_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in settings.TERMINAL_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "linux")
    assert settings.terminal() == {"TERM": "linux"}
