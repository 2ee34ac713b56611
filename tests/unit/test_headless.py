"""The headless core never imports Textual (harlequin's import-hygiene test), nor does the
viewer's headless state (tuiperf.tui.viewstate)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import tuiperf
from tuiperf.cli import build_parser, main

HEADLESS = sorted(
    m.name
    for m in pkgutil.walk_packages(tuiperf.__path__, "tuiperf.")
    if (not m.name.startswith("tuiperf.tui") or m.name.startswith("tuiperf.tui.viewstate"))
    and m.name not in ("tuiperf.torch", "tuiperf.__main__")
)


@pytest.mark.parametrize("module", HEADLESS)
def test_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_batch_commands_do_not_import_textual(nsys_dir) -> None:  # type: ignore[no-untyped-def]
    path = str(nsys_dir / "vit_range.sqlite")
    for args in (
        ["--help"],
        ["--version"],
        ["summary", path, "--csv"],
        ["info", path],
        ["summary", "--help"],
    ):
        # an exit handler: `python -m tuiperf` ends the process itself (cli.exit_now)
        code = (
            "import atexit, runpy, sys\n"
            "atexit.register(lambda: print('TEXTUAL' if 'textual' in sys.modules else "
            "'HEADLESS', file=sys.stderr))\n"
            f"sys.argv = ['tuiperf', *{args!r}]\n"
            "runpy.run_module('tuiperf', run_name='__main__')\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        assert out.stderr.strip().endswith("HEADLESS"), (args, out.stderr[-500:])


def test_python_m_equals_console_script(nsys_dir) -> None:  # type: ignore[no-untyped-def]
    import shutil

    script = shutil.which("tuiperf", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert script, "console script not installed"
    path = str(nsys_dir / "vit_range.sqlite")
    a = subprocess.run(
        [sys.executable, "-m", "tuiperf", "summary", path, "--csv"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    b = subprocess.run(
        [script, "summary", path, "--csv"], capture_output=True, text=True, timeout=120
    )
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout and a.stdout.startswith("Time (%),")


def test_help_lists_the_viewers_options(capsys: pytest.CaptureFixture[str]) -> None:
    """`tuiperf --help` shows what `tuiperf REPORT` takes, not only the subcommands."""
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    viewer = text[text.index("viewer options") :]
    assert "--ascii" in viewer and "--no-mouse" in viewer


def test_viewer_options_before_a_subcommand_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--ascii", "summary", "x.sqlite"])
    assert done.value.code == 2
    assert "options of the viewer" in capsys.readouterr().err


def test_a_subcommands_own_ascii_option_is_its_own() -> None:
    """`analyze --ascii` is analyze's option, not the viewer's (same spelling)."""
    args = build_parser().parse_args(["analyze", "x.sqlite", "--ascii"])
    assert args.ascii and not args.viewer_ascii
