"""README.md and docs/: the README stays what a user reads first (at most 300 lines, every
docs/ page linked from it, one line per command, its keys bound in the pane it names);
docs/viewer.md's key list is what scripts/readme_keys.py renders from the binding registry
now (a changed binding without `make readme` fails here); every relative link and image of
every page resolves, anchors included."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.markdown import (
    DOCS,
    README,
    REPO,
    anchors,
    code_in,
    links,
    pages,
    prose,
    section,
    slug,
    spans,
    table_rows,
)
from tuiperf.cli import COMMAND_MODULES
from tuiperf.tui.actions import REGISTRY

VIEWER = DOCS / "viewer.md"
MAX_LINES = 300
#: the README's key table names panes by these words; the registry's scopes they mean
PANES = {"everywhere": ("app",), "timeline": ("timeline",), "events": ("events", "rows")}


@pytest.fixture(scope="module")
def keys() -> ModuleType:
    path = REPO / "scripts" / "readme_keys.py"
    spec = importlib.util.spec_from_file_location("readme_keys", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def key_section(keys: ModuleType) -> str:
    return str(keys.current(VIEWER.read_text(encoding="utf-8")))


def test_keys_section_is_rendered_from_the_registry(keys: ModuleType) -> None:
    stale = "docs/viewer.md's keys are out of date: run `make readme`"
    assert key_section(keys) == keys.render(), stale


def test_the_key_list_is_not_folded_away() -> None:
    text = VIEWER.read_text(encoding="utf-8")
    assert "<details>" not in text and "## Every key" in text


def test_a_changed_binding_no_longer_matches(keys: ModuleType) -> None:
    """The comparison above sees a key that moved, and one that was added."""
    moved = [replace(k, keys="F") if k.id == "timeline.fit_all" else k for k in REGISTRY]
    assert keys.render(moved) != key_section(keys)
    added = [*REGISTRY, replace(REGISTRY[0], id="x.new", keys="Z", description="New thing")]
    assert "| `Z` | New thing |" in keys.render(added)
    assert keys.render(added) != key_section(keys)


def test_every_entry_has_a_row(keys: ModuleType) -> None:
    body = key_section(keys)
    for k in REGISTRY:
        if k.help:
            assert f"| {keys.key_cell(k)} | {k.description} |" in body, k.id
        else:  # a key that a listed entry's display names (`1-9 0` for the sections)
            siblings = [o for o in REGISTRY if o.help and o.scope == k.scope and o.display]
            shown = [o.display or "" for o in siblings]
            assert any(k.keys in d.split() or "-" in d for d in shown), k.id


def test_every_pane_has_a_title(keys: ModuleType) -> None:
    """No pane is listed under its registry name (`ncu-view`) for want of a title."""
    titles = re.findall(r"^### (.+)$", key_section(keys), re.M)
    assert len(titles) == len({k.scope for k in REGISTRY if k.help})
    assert not [t for t in titles if t in {k.scope for k in REGISTRY}]


def test_key_names_are_written_as_characters(keys: ModuleType) -> None:
    cells = {k.id: keys.key_cell(k) for k in REGISTRY}
    assert cells["events.filter"] == "`/`"
    assert cells["events.sort_prev"] == "`<`"
    assert cells["timeline.zoom_in"] == "`+` `=` `w`"
    assert cells["app.next_match"] == "`n`"  # not the footer's "n N" for the pair


def test_rewrite_keeps_the_rest_of_the_file(keys: ModuleType) -> None:
    text = f"intro\n{keys.START}\nold\n{keys.END}\noutro\n"
    new = keys.replaced(text, "new\n")
    assert new == f"intro\n{keys.START}\nnew\n{keys.END}\noutro\n"
    assert keys.current(new) == "new\n"
    with pytest.raises(ValueError, match="markers"):
        keys.current("no markers here")


# --- the README ------------------------------------------------------------------------


def readme() -> str:
    return README.read_text(encoding="utf-8")


def test_readme_is_short() -> None:
    assert len(readme().splitlines()) <= MAX_LINES


def test_readme_keeps_the_quick_start() -> None:
    """`make demo` and `make test` stay, and so does how to open your own report after."""
    quick = section(readme(), "Quick start")
    assert "make demo" in quick and "make test" in quick
    assert re.search(r"^tuiperf \S+\.nsys-rep", quick, re.M), "no line opening your own report"
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def bound(scopes: tuple[str, ...], keys: ModuleType) -> set[str]:
    """The keys the registry binds in these panes, written as the docs write them."""
    out: set[str] = set()
    for k in REGISTRY:
        if k.scope in scopes:
            out |= set(code_in(keys.key_cell(k)))
    return out


def readme_key_rows() -> list[list[str]]:
    return [r for r in table_rows(section(readme(), "The viewer")) if len(r) == 3]


#: keys written by name in the docs, as the registry's key cells write them
NAMED = {"esc", "⏎", "home", "end", "pageup", "pagedown", "F1", "space", "⌫"}


def keylike(span: str) -> bool:
    """Inline code that is a key: one character, a named key, ctrl+… or shift+…."""
    one = len(span) == 1 and not span.isspace()
    return one or span in NAMED or re.fullmatch(r"(ctrl|shift)\+\S+", span) is not None


def misplaced(rows: list[list[str]], keys: ModuleType) -> list[str]:
    """Keys a row names (every one in its key cell, lone keys in its text) that its pane
    does not bind."""
    wrong = []
    for where, key, does in rows:
        have = bound(PANES[where], keys)
        named = code_in(key) + [s for s in code_in(does) if keylike(s)]
        wrong += [f"{where}: `{k}`" for k in named if k not in have]
    return wrong


def test_readme_keys_are_bound_in_the_pane_they_name(keys: ModuleType) -> None:
    rows = readme_key_rows()
    assert len(rows) >= 15
    wrong = misplaced(rows, keys)
    assert not wrong, f"the README names keys its pane does not bind: {wrong}"


def test_a_key_in_the_wrong_pane_is_seen(keys: ModuleType) -> None:
    """The check above can fail: `b` is a timeline key, `S` an events-table one."""
    rows = [["timeline", "`b`", "ok"], ["everywhere", "`b`", "no"], ["timeline", "`+`", "`S`"]]
    rows.append(["events", "`/`", "the `nsys stats` columns"])  # not a key: not checked
    assert misplaced(rows, keys) == ["everywhere: `b`", "timeline: `S`"]


def test_keys_named_in_the_docs_prose_exist(keys: ModuleType) -> None:
    """A lone key in inline code (`A`, `esc`, `ctrl+p`) in the README or docs/viewer.md is
    bound somewhere in the app."""
    anywhere = bound(tuple({k.scope for k in REGISTRY}), keys)
    wrong = []
    for page in (README, VIEWER):
        text = keys.replaced(page.read_text(encoding="utf-8"), "") if page == VIEWER else readme()
        wrong += [f"{page.name}: `{s}`" for s in spans(text) if keylike(s) and s not in anywhere]
    assert not wrong, wrong


def test_readme_has_one_line_per_command() -> None:
    rows = table_rows(section(readme(), "Commands"))
    named = [code_in(r[0])[0].split()[1] for r in rows if code_in(r[0])]
    assert sorted(named) == sorted(COMMAND_MODULES), "one README row per command, no other"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(REPO / t.split("#")[0]).resolve() for t in links(readme()) if "://" not in t}
    unlinked = [p.name for p in DOCS.glob("*.md") if p.resolve() not in linked]
    assert not unlinked, f"link these from the README: {unlinked}"


# --- every page ------------------------------------------------------------------------


def test_fences_are_closed() -> None:
    """An unclosed ``` swallows the rest of a page (and hides it from these checks)."""
    for page in pages():
        fences = re.findall(r"^```", page.read_text(encoding="utf-8"), re.M)
        assert len(fences) % 2 == 0, page.name


def broken_links(page: Path, text: str) -> list[str]:
    out = []
    for target in links(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            out.append(f"{page.name}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text("utf-8")):
            out.append(f"{page.name}: {target}: no such heading")
    return out


def test_every_relative_link_resolves() -> None:
    wrong = [b for page in pages() for b in broken_links(page, page.read_text("utf-8"))]
    assert not wrong, "\n".join(wrong)


def test_a_broken_link_is_seen() -> None:
    text = "[a](docs/nope.md) [b](docs/viewer.md#no-such-heading) [c](#quick-start) [d](https://x)"
    assert broken_links(README, text) == [
        "README.md: docs/nope.md: no such file",
        "README.md: docs/viewer.md#no-such-heading: no such heading",
    ]


def test_anchors_follow_github() -> None:
    assert slug("Nsight Compute readers (`ncu_report`)") == "nsight-compute-readers-ncu_report"
    assert slug("The libstdc++ workaround") == "the-libstdc-workaround"
    assert slug("Opening a `.nsys-rep`") == "opening-a-nsys-rep"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_embedded_images_exist() -> None:
    images = []
    for page in pages():
        found = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", prose(page.read_text(encoding="utf-8")))
        images += [(page.parent / p).resolve() for p in found]
    assert images and all(p.parent == REPO / "screenshots" for p in images)
    missing = [str(p) for p in images if not p.is_file()]
    assert not missing, missing
