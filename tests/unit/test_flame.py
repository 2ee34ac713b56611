"""The flame tree of the CPU samples screen (tui/viewstate/flame.py), headless, against
SQL over callsites_gpu (tests/data/callsites) and hand arithmetic for the bars."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.support.data import unxz
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace
from tuiperf.tui.viewstate import flame as F

PATH = Path(__file__).resolve().parents[2] / "tests/data/callsites/callsites_gpu.sqlite.xz"
MAIN = 281487911944963  # pid 771, tid 771


@pytest.fixture(scope="module")
def path() -> Path:
    return unxz(PATH)


@pytest.fixture(scope="module")
def trace(path: Path) -> Trace:
    return open_trace(path, OpenOptions(use_cache=False))


def _chains(path: Path) -> list[list[tuple[str, str]]]:
    """Each sample of the main thread: its (function, module) names, sampled frame first."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT c.id, f.value, m.value FROM COMPOSITE_EVENTS c JOIN SAMPLING_CALLCHAINS s "
            "ON s.id = c.id JOIN StringIds f ON f.id = s.symbol JOIN StringIds m ON "
            f"m.id = s.module WHERE c.globalTid = {MAIN} ORDER BY c.id, s.stackDepth"
        ).fetchall()
    out: dict[int, list[tuple[str, str]]] = {}
    for sid, name, module in rows:
        out.setdefault(sid, []).append((name, module))
    return list(out.values())


def _kids(node: F.FlameNode) -> dict[tuple[str, str], int]:
    return {(c.name, c.module): c.count for c in node.children.values()}


def test_threads_by_samples(path: Path, trace: Trace) -> None:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        want = db.execute(
            "SELECT globalTid, count(*) FROM COMPOSITE_EVENTS GROUP BY 1 ORDER BY 2 DESC, 1"
        ).fetchall()
    got = F.threads(trace)
    assert [(p << 24 | t, n) for p, t, n in got] == [(g & 0xFFFFFFFFFFFF, n) for g, n in want]
    assert got[0][:2] == (771, 771)


def test_top_down_roots_and_the_no_stack_group(path: Path, trace: Trace) -> None:
    chains = _chains(path)
    fl = F.build(trace, 771, 771, top_down=True)
    assert fl.total == len(chains) == fl.root.count
    kids = _kids(fl.root)
    outer = Counter(c[-1] for c in chains if len(c) > 1)
    assert kids.pop((F.NO_STACK, "")) == sum(1 for c in chains if len(c) == 1)
    assert kids == dict(outer)
    assert sum(c.count for c in fl.root.children.values()) == fl.total


def test_bottom_up_roots_are_the_sampled_functions(path: Path, trace: Trace) -> None:
    chains = _chains(path)
    fl = F.build(trace, 771, 771, top_down=False)
    assert _kids(fl.root) == dict(Counter(c[0] for c in chains))
    # under the busiest sampled function, its callers as the stacked samples say
    top = fl.root.ordered()[0]
    callers = Counter(c[1] for c in chains if len(c) > 1 and c[0] == (top.name, top.module))
    assert _kids(top) == dict(callers)


def test_hot_path_opens_the_biggest_child_while_it_holds_half() -> None:
    leaf = F.FlameNode("c", "", 3)
    mid = F.FlameNode("b", "", 6, {2: leaf, 3: F.FlameNode("d", "", 3)})
    root = F.FlameNode("t", "", 10, {1: mid, 4: F.FlameNode("e", "", 4)})
    # b holds 6 of 10 (>= half): opened; c and d hold 3 of 6 each: c (by name) at exactly
    # half is opened too
    assert [n.name for n in F.hot_path(root)] == ["b", "c"]
    assert F.hot_path(root, share=0.61) == []
    root.children[9] = F.FlameNode(F.NO_STACK, "", 30)
    assert F.hot_path(root, share=0.1)[0].name == "b"  # the group without stacks stays shut
    assert root.children[9].label == F.NO_STACK and root.label == "t"
    assert F.FlameNode("void f(int)", "/lib/libx.so").label == "f (libx.so)"


@pytest.mark.parametrize(
    ("count", "total", "ascii_only", "want"),
    [
        (10, 10, False, "█" * 4),
        (1, 8, False, "▌   "),  # 4 cells x 1/8 = half a cell
        (0, 10, False, "    "),
        (5, 10, True, "##.."),
        (3, 0, True, "...."),
    ],
)
def test_bar(count: int, total: int, ascii_only: bool, want: str) -> None:
    assert F.bar(count, total, 4, ascii_only) == want
