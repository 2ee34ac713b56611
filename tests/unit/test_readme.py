"""README.md: the keys section is what scripts/readme_keys.py renders from the binding
registry now (a changed binding without `make readme` fails here), and every image the
README embeds exists."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from tuiperf.tui.actions import REGISTRY

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"


@pytest.fixture(scope="module")
def keys() -> ModuleType:
    path = REPO / "scripts" / "readme_keys.py"
    spec = importlib.util.spec_from_file_location("readme_keys", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def section(keys: ModuleType) -> str:
    return str(keys.current(README.read_text(encoding="utf-8")))


def test_keys_section_is_rendered_from_the_registry(keys: ModuleType) -> None:
    assert section(keys) == keys.render(), "README.md's keys are out of date: run `make readme`"


def test_a_changed_binding_no_longer_matches(keys: ModuleType) -> None:
    """The comparison above sees a key that moved, and one that was added."""
    moved = [replace(k, keys="F") if k.id == "timeline.fit_all" else k for k in REGISTRY]
    assert keys.render(moved) != section(keys)
    added = [*REGISTRY, replace(REGISTRY[0], id="x.new", keys="Z", description="New thing")]
    assert "| `Z` | New thing |" in keys.render(added)
    assert keys.render(added) != section(keys)


def test_every_entry_has_a_row(keys: ModuleType) -> None:
    body = section(keys)
    for k in REGISTRY:
        if k.help:
            assert f"| {keys.key_cell(k)} | {k.description} |" in body, k.id
        else:  # a key that a listed entry's display names (`1-9 0` for the sections)
            siblings = [o for o in REGISTRY if o.help and o.scope == k.scope and o.display]
            assert any(k.keys in o.display.split() or "-" in o.display for o in siblings), k.id


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


def test_embedded_images_exist() -> None:
    text = README.read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    links = re.findall(r"\]\((screenshots/[^)]+)\)", text)
    assert images and all(p.startswith("screenshots/") for p in images)
    missing = [p for p in {*images, *links} if not (REPO / p).is_file()]
    assert not missing, missing
