"""docs/*.md and the README against what they describe: every `tuiperf` command line they
show, checked against the argument parsers (commands, options, the values an option takes);
the option reference and the exit codes, summary reports, rules and environment variables
they list, against the parsers, `ExitCode`, the report names, the rule engine and the
variables tuiperf/settings.py reads."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import shlex
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.support.markdown import (
    DOCS,
    REPO,
    blocks,
    code_in,
    pages,
    sections,
    spans,
    table_rows,
)
from tuiperf.analysis.engine import all_rule_ids
from tuiperf.cli import build_parser
from tuiperf.commands.open_tui import build_parser as viewer_parser
from tuiperf.errors import ExitCode
from tuiperf.summaries.names import REPORT_NAMES, resolve

COMMANDS = DOCS / "commands.md"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def options() -> ModuleType:
    return _load("docs_options")


class Cli:
    """The parsers: `tuiperf` (the top level and the viewer) and each subcommand."""

    def __init__(self) -> None:
        self.top = build_parser()
        self.viewer = viewer_parser()
        self.commands: dict[str, argparse.ArgumentParser] = {}
        for action in self.top._actions:
            if isinstance(action, argparse._SubParsersAction):
                self.commands = dict(action.choices)

    def problems(self, line: str) -> list[str]:
        """What is wrong with one `tuiperf ...` command line, as the docs write it."""
        out = []
        for words in _commands(line):
            out += self._check(words)
        return out

    def _check(self, words: list[str]) -> list[str]:
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] in self.top._option_string_actions:
            rest = rest[1:]  # `tuiperf --debug COMMAND`
        if not rest or rest[0].startswith("-"):
            return self._options(self.viewer, "the viewer", rest)
        first = rest[0]
        if first in self.commands:
            parser, who, rest = self.commands[first], first, rest[1:]
            actions = _actions_of(parser)  # `tuiperf cache list ...`
            if rest and rest[0] in actions:
                parser, who, rest = actions[rest[0]], f"{first} {rest[0]}", rest[1:]
            return self._options(parser, who, rest)
        if _placeholder(first):  # `tuiperf COMMAND --help`, `tuiperf REPORT`
            parser = self.viewer if first != "COMMAND" else None
            return self._options(parser, "the viewer", rest[1:]) if parser else []
        if re.fullmatch(r"[a-z][a-z_-]*", first):  # no path, no placeholder: a command
            return [f"no command {first!r}"]
        return self._options(self.viewer, "the viewer", rest[1:])

    def _options(self, p: argparse.ArgumentParser, who: str, words: list[str]) -> list[str]:
        out = []
        for i, raw in enumerate(words):
            if raw == "--":  # `profile -- PROGRAM ARGS`: the program's own
                break
            word = raw.strip("[](),;:")
            if not re.fullmatch(r"--?[A-Za-z][\w-]*(=.*)?", word):
                continue
            name, _, inline = word.partition("=")
            action = p._option_string_actions.get(name)
            if action is None:
                out.append(f"{who} has no option {name}")
                continue
            value = inline or (words[i + 1].strip("[](),;:") if i + 1 < len(words) else "")
            if action.nargs != 0 and value[:1] not in ("", "-") and not _placeholder(value):
                out += _value(who, name, action, value)
        return out


def _actions_of(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A command's own subcommands (`cache list`, `cache clear`), none for most."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands(line: str) -> Iterator[list[str]]:
    """Each `tuiperf ...` command of a shell line (`&&`, `;` and pipes split them)."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:  # an unclosed quote in prose
        words = line.split()
    current: list[str] = []
    for w in [*words, "&&"]:
        if w in ("&&", "||", ";", "|", ">", "2>", "<"):
            if current and current[0] == "tuiperf":
                yield current
            current = []
        else:
            current.append(w)


def _placeholder(word: str) -> bool:
    """REPORT, PCT, `…`, `<N>`: a name for a value, not a value."""
    return word.isupper() or "…" in word or word.startswith("<") or word == "..."


def _value(who: str, name: str, action: argparse.Action, value: str) -> list[str]:
    if not re.fullmatch(r"[\w.:/*-]+", value):
        return []
    if action.choices and value not in action.choices:
        return [f"{who} {name} takes none of {value!r} (choices: {', '.join(action.choices)})"]
    if who == "summary" and name in ("-r", "--report") and resolve(value) is None:
        return [f"summary has no report {value!r}"]
    if who == "analyze" and name == "--rule" and value not in all_rule_ids():
        return [f"analyze has no rule {value!r}"]
    return []


def command_lines(text: str) -> list[str]:
    """Every `tuiperf` command line a page shows: shell and console blocks (console: the
    `$ ` lines), and inline code that starts with `tuiperf `."""
    lines = []
    for b in blocks(text):
        if b.lang not in ("", "sh", "bash", "console", "shell"):
            continue
        body = re.sub(r"\\\n\s*", " ", b.text)  # continued lines
        for line in body.splitlines():
            if b.lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if re.match(r"\s*tuiperf\s", line) or " && tuiperf " in line:
                lines.append(line.strip())
    lines += [s for s in spans(text) if s.startswith("tuiperf ")]
    return lines


@pytest.fixture(scope="module")
def cli() -> Cli:
    return Cli()


def test_every_command_line_in_the_docs_parses(cli: Cli) -> None:
    wrong = []
    for page in pages():
        for line in command_lines(page.read_text(encoding="utf-8")):
            wrong += [f"{page.name}: `{line}`: {p}" for p in cli.problems(line)]
    assert not wrong, "\n".join(wrong)


def test_the_docs_show_command_lines(cli: Cli) -> None:
    """The check above reads something: a line per command at least, across the pages."""
    shown = " ".join(line for p in pages() for line in command_lines(p.read_text("utf-8")))
    missing = [c for c in cli.commands if f"tuiperf {c} " not in shown]
    assert not missing, missing


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("tuiperf summary run.sqlite --nope", "summary has no option --nope"),
        ("tuiperf frobnicate run.sqlite", "no command 'frobnicate'"),
        ("tuiperf export run.sqlite --table bogus", "--table takes none of 'bogus'"),
        ("tuiperf export run.sqlite --table=bogus", "--table takes none of 'bogus'"),
        ("tuiperf summary run.sqlite -r nosuch_sum --csv", "summary has no report 'nosuch_sum'"),
        ("tuiperf analyze run.sqlite --rule no_such_rule", "analyze has no rule 'no_such_rule'"),
        ("tuiperf ranks run/ --merge m/ && tuiperf m/ --nomouse", "the viewer has no option"),
        ("tuiperf run.nsys-rep --jobs 2", "the viewer has no option --jobs"),
        ("tuiperf --debug summary x.sqlite --fail-on error", "summary has no option --fail-on"),
    ],
)
def test_a_wrong_command_line_is_named(cli: Cli, line: str, problem: str) -> None:
    assert any(problem in p for p in cli.problems(line)), cli.problems(line)


@pytest.mark.parametrize(
    "line",
    [
        "tuiperf summary run.sqlite -r kern --csv | head -4",
        "tuiperf profile --steps 5 --no-tui -- python train.py --lr 0.1",
        "tuiperf --debug COMMAND --whatever",
        "tuiperf BEFORE AFTER --ascii",
        "tuiperf ncu a.ncu-rep --format=json",
        "tuiperf analyze run.sqlite --rule cpu_bound --fail-on SEVERITY",
    ],
)
def test_a_right_command_line_passes(cli: Cli, line: str) -> None:
    assert cli.problems(line) == []


def _command_rows(text: str) -> dict[str, list[list[str]]]:
    """Table rows whose first cell names a command (`info` or `tuiperf info ...`)."""
    out: dict[str, list[list[str]]] = {}
    for row in table_rows(text):
        code = code_in(row[0]) if row else []
        words = code[0].split() if code else []
        name = words[1] if words[:1] == ["tuiperf"] and len(words) > 1 else "".join(words[:1])
        out.setdefault(name, []).append(row)
    return out


def test_options_named_beside_a_command_are_its_own(cli: Cli) -> None:
    """`--fail-on` in the analyze section of commands.md, or in its row of a commands
    table, is an option of analyze."""
    wrong = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        found: list[tuple[str, str]] = []
        for title, body in sections(text).items():
            if title in cli.commands:
                found += [(title, s) for s in spans(body)]
        for name, rows in _command_rows(text).items():
            if name in cli.commands:
                found += [(name, s) for r in rows for c in r[1:] for s in code_in(c)]
        for name, span in found:
            if span.startswith("-") and not span.startswith("-- "):
                line = f"tuiperf {name} {span}"
                wrong += [f"{page.name}: `{span}`: {p}" for p in cli.problems(line)]
    assert not wrong, "\n".join(wrong)


def test_the_option_reference_is_rendered_from_the_parsers(options: ModuleType) -> None:
    text = COMMANDS.read_text(encoding="utf-8")
    assert options.current(text) == options.render(), (
        "docs/commands.md's option reference is out of date: run `make readme`"
    )


def test_the_option_reference_lists_every_command_and_option(options: ModuleType) -> None:
    """Every option string of every parser is in the rendered reference, and a parser
    with an option added renders differently (the check above would see it)."""
    body = options.render()
    cli = Cli()
    for p in [cli.top, cli.viewer, *cli.commands.values()]:
        for action in p._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for s in action.option_strings:
                assert f"`{s}" in body, s
    for name in cli.commands:
        assert f"### `tuiperf {name}" in body, name
    grown = build_parser()
    for action in grown._actions:
        if isinstance(action, argparse._SubParsersAction):
            diff = action.choices["diff"]
            diff.add_argument("--brand-new", action="store_true", help="a new thing")
    assert "| `--brand-new` | a new thing |" in options.render(grown)


def test_the_option_reference_tables_keep_two_columns(options: ModuleType) -> None:
    """A `|` in an option (`--at peak|TIME`) or its help is escaped, not a new cell."""
    rows = table_rows(options.render())
    assert rows and all(len(r) == 2 for r in rows), [r for r in rows if len(r) != 2]
    at = argparse.ArgumentParser().add_argument("--at", metavar="peak|TIME", help="a|b")
    assert table_rows("\n".join(options.table([at]))) == [["`--at peak\\|TIME`", "a\\|b"]]


def test_exit_codes_table_is_exit_code() -> None:
    rows = table_rows(sections(COMMANDS.read_text(encoding="utf-8"))["Exit codes"])
    listed = {int(r[0]) for r in rows}
    assert listed == {int(c) for c in ExitCode}


def test_summary_reports_table_names_real_reports() -> None:
    rows = [r for r in table_rows(sections(COMMANDS.read_text("utf-8"))["summary"]) if r]
    assert rows
    for row in rows:
        (name,) = code_in(row[0])
        assert name in REPORT_NAMES, name
        for alias in code_in(row[1]):
            assert resolve(alias) == name, (alias, name)


def test_rules_table_names_real_rules() -> None:
    text = (DOCS / "advice.md").read_text(encoding="utf-8")
    rows = table_rows(sections(text)["The rules"])
    named = [code_in(r[0])[0] for r in rows]
    assert len(named) == len(set(named))
    unknown = set(named) - set(all_rule_ids())
    assert not unknown, f"docs/advice.md names rules that do not exist: {sorted(unknown)}"


def settings_variables() -> set[str]:
    """The environment variable names tuiperf/settings.py holds as string literals."""
    tree = ast.parse((REPO / "tuiperf" / "settings.py").read_text(encoding="utf-8"))
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and re.fullmatch(r"[A-Z][A-Z0-9_]{2,}", n.value)
    }


def test_environment_page_names_variables_settings_reads() -> None:
    rows = table_rows((DOCS / "environment.md").read_text(encoding="utf-8"))
    named = {v for r in rows for v in code_in(r[0])}
    assert "TUIPERF_CACHE_DIR" in named
    unknown = named - settings_variables()
    assert not unknown, f"docs/environment.md lists variables settings.py never reads: {unknown}"


def test_every_tuiperf_variable_named_anywhere_is_read() -> None:
    known = settings_variables()
    wrong = []
    for page in pages():
        for name in set(re.findall(r"\bTUIPERF_[A-Z0-9_]+\b", page.read_text("utf-8"))):
            if name not in known:
                wrong.append(f"{page.name}: {name}")
    assert not wrong, wrong


def test_settings_variables_are_found() -> None:
    """The oracle reads settings.py itself: the names its accessors read are there."""
    found = settings_variables()
    assert {"TUIPERF_NSYS", "NSYS", "TERM", "LANG", "DASK_SCHEDULER_ADDRESS"} <= found
    assert "Path" not in found
