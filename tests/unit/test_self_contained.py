"""The test tree reads only what the checkout holds: a fresh clone with nothing beside it runs
every test. This guard greps the tests for paths that leave the repository."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

#: the folder a developer's machine has beside the checkout (named once, so that this file
#: itself names no path into it)
BESIDE = "shared"
#: text that names a place outside the checkout
OUTSIDE = [
    (re.compile(r"""["'/]\.\./"""), "a relative path that climbs out of the checkout"),
    (
        re.compile(
            rf"""(?i:\b{BESIDE}\b)["']?\s*/|["']{BESIDE}["']|{BESIDE}[/\\](?:fixtures|tools)"""
        ),
        f"the {BESIDE} folder beside the checkout",
    ),
    (re.compile(r"\bREPO\.parent\b|\bROOT\.parent\b"), "the folder that holds the checkout"),
    (
        re.compile(r"""["']/(?:work|opt|root|home|mnt|data)(?:/|["'])"""),
        "an absolute path on one machine",
    ),
]
#: a line that names a machine path as a value (a frame's file, an install's module), not
#: as a file to read, says so with this mark
AS_DATA = "# a path as data"
PARENTS = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?\.parents\[(\d+)\]")


def problems(text: str, depth: int) -> list[str]:
    """What in `text` (a test module `depth` folders below the repository root) leaves it."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for pattern, why in OUTSIDE:
            if pattern.search(line) and not (why.startswith("an absolute") and AS_DATA in line):
                found.append(f"line {n}: {why}: {line.strip()}")
        for m in PARENTS.finditer(line):
            if int(m.group(1)) > depth:
                found.append(f"line {n}: parents[{m.group(1)}] of this file is above the checkout")
    return found


def test_no_test_reads_outside_the_checkout() -> None:
    me = Path(__file__).resolve()
    bad = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path.resolve() == me:
            continue
        depth = len(path.relative_to(REPO).parts) - 1
        if found := problems(path.read_text(encoding="utf-8"), depth):
            bad[str(path.relative_to(REPO))] = found
    assert not bad, bad


def _planted(template: str, *parts: str) -> str:
    """A line of test code naming the path `parts` joined by "/" (built here, so that this
    file itself names no place outside the checkout)."""
    return template.format("/".join(parts))


def test_the_guard_sees_each_kind_of_escape() -> None:
    # tests/unit/x.py is 2 folders down: parents[2] is the checkout, parents[3] its parent
    assert problems('DATA = Path(__file__).resolve().parents[1] / "data"', 2) == []
    assert problems("REPO = Path(__file__).resolve().parents[2]", 2) == []
    assert problems("OUT = Path(__file__).resolve().parents[3]", 2)
    beside = BESIDE
    assert problems(f'{beside.upper()} = REPO.{"parent"} / "{beside}" / "fixtures"', 2)
    assert problems(f'p = ROOT / "{beside}" / "tools"', 2)
    assert problems(f'REF = {beside.upper()} / "nsys" / "reference"', 2)
    assert problems(_planted('open("{}")', "..", beside, "fixtures", "nsys", "x.sqlite"), 2)
    assert problems(_planted('open("{}")', "", "work", beside, "fixtures", "x"), 2)
    assert problems(_planted('x = "{}"', "..", "data", "x.csv"), 2)
    assert problems(f'assert occ.limiters >= {{"registers", "{beside} memory"}}', 2) == []
    frame = _planted('is_user("{}")', "", "opt", "torch", "module.py")
    assert problems(frame, 2)
    assert problems(f"{frame}  {AS_DATA}", 2) == []  # a value, marked as such
    assert problems(_planted('open("{}")  ', "..", "x") + AS_DATA, 2)  # the mark excuses no ..


_TEST_IMPORT = re.compile(r"^\s*(?:from|import)\s+tests\.(?:unit|tui|e2e)\.test_\w+", re.M)


def test_no_test_module_imports_another() -> None:
    """Shared helpers live in tests/support/ or tests/tui/pilot_helpers.py: a test module
    imported by another runs its module-level code twice and ties the two together."""
    bad = [
        str(p.relative_to(REPO))
        for p in sorted((REPO / "tests").rglob("*.py"))
        if _TEST_IMPORT.search(p.read_text(encoding="utf-8"))
    ]
    assert bad == [], bad
    assert _TEST_IMPORT.search("from tests.unit.test_bad_input import run_cli")
    assert not _TEST_IMPORT.search("from tests.support.cli import run_cli")
