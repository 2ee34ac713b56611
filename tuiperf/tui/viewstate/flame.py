"""The CPU samples as a tree for the viewer's flame view (issue 34): headless, no Textual.

Top-down: the outermost frame first, each node's children the functions it called, a
node's count the samples whose stack passes through it. Bottom-up: the sampled function
first, its children the functions that called it. Nodes of the same function under the
same parent are one. Native samples without a call stack (nsys keeps one sample in four
with its stack) sit under `[no call stack]` top-down; bottom-up they count for their
sampled function only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from tuiperf.model import fmt
from tuiperf.model.cpu_samples import Samples, Stacks, short_function
from tuiperf.model.trace import Trace

NO_STACK = "[no call stack]"
_NO_STACK_KEY = -1


@dataclass
class FlameNode:
    name: str
    module: str
    count: int = 0
    children: dict[int, FlameNode] = field(default_factory=dict)

    def ordered(self) -> list[FlameNode]:
        """Children, most samples first (then by name)."""
        return sorted(self.children.values(), key=lambda n: (-n.count, n.name))

    @property
    def label(self) -> str:
        if not self.module:  # the thread, `[no call stack]`: not a function's signature
            return fmt.clean(self.name, 160)
        return fmt.clean(f"{short_function(self.name)} ({os.path.basename(self.module)})", 160)


@dataclass
class Flame:
    root: FlameNode  # name: the thread; count: its samples
    total: int
    top_down: bool


def threads(trace: Trace) -> list[tuple[int, int, int]]:
    """(pid, tid, samples) of each sampled thread, most samples first (then by pid, tid)."""
    s = Samples(trace)
    if not len(s):
        return []
    pairs, n = np.unique(np.stack([s.pid, s.tid]), axis=1, return_counts=True)
    rows = [(int(p), int(t), int(c)) for (p, t), c in zip(pairs.T.tolist(), n.tolist())]
    return sorted(rows, key=lambda r: (-r[2], r[0], r[1]))


#: [starts, ends) windows (sorted, disjoint) the samples are taken from
Windows = tuple[np.ndarray, np.ndarray]


def build(
    trace: Trace, pid: int, tid: int, top_down: bool, name: str = "", within: Windows | None = None
) -> Flame:
    """The flame tree of one thread's samples (those inside `within`, when given)."""
    s = Samples(trace)
    mask = (s.pid == pid) & (s.tid == tid)
    if within is not None:
        mask &= s.within(*within)
    root = FlameNode(name or f"thread {tid}", "", int(mask.sum()))
    leaf = s.leaf[mask]
    stacked = s.stacked[mask]
    st = s.stacks
    for nodes, weights, has_stack in _grouped(leaf, stacked):
        for node, w in zip(nodes.tolist(), weights.tolist(), strict=True):
            keys = _path(st, node)
            if top_down:
                keys = keys[::-1] if has_stack else [_NO_STACK_KEY, *keys]
            _add(root, st, keys, w)
    return Flame(root, root.count, top_down)


def _grouped(leaf: np.ndarray, stacked: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, bool]]:
    """(distinct leaf nodes, samples at each) for the stacked and the unstacked samples."""
    out = []
    for flag in (True, False):
        sel = leaf[(stacked == flag) & (leaf >= 0)]
        nodes, n = np.unique(sel, return_counts=True)
        out.append((nodes, n, flag))
    return out


def _path(st: Stacks, node: int) -> list[int]:
    """Function keys from the sampled frame out to the outermost."""
    keys = []
    while node >= 0:
        keys.append(int(st.key[node]))
        node = int(st.parent[node])
    return keys


def _add(root: FlameNode, st: Stacks, keys: list[int], weight: int) -> None:
    at = root
    for k in keys:
        child = at.children.get(k)
        if child is None:
            name, module = (
                (NO_STACK, "") if k == _NO_STACK_KEY else (st.functions[k], st.modules[k])
            )
            child = at.children[k] = FlameNode(name, module)
        child.count += weight
        at = child


def hot_path(node: FlameNode, share: float = 0.5) -> list[FlameNode]:
    """From `node`, the chain of biggest children while each holds `share` of its parent
    (`[no call stack]` left shut): the nodes the view opens at first."""
    out = []
    while node.children:
        kids = [c for c in node.ordered() if c.name != NO_STACK or c.module]
        if not kids:
            break
        big = kids[0]
        if big.count < share * node.count:
            break
        out.append(big)
        node = big
    return out


def bar(count: int, total: int, width: int, ascii_only: bool = False) -> str:
    """A bar of `width` cells filled by count/total (eighths with Unicode, # in ASCII)."""
    frac = count / total if total else 0.0
    if ascii_only:
        n = round(frac * width)
        return "#" * n + "." * (width - n)
    eighths = round(frac * width * 8)
    full, part = divmod(eighths, 8)
    cells = "█" * full + ("" if not part else " ▏▎▍▌▋▊▉"[part])
    return cells + " " * (width - len(cells))
