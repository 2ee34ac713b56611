"""The CPU samples screen (issue 34): a terminal flame view of one thread's samples.

One line per frame, a bar as wide as the frame's share of the thread's samples, the count
and the share; top-down (callers first) or bottom-up (sampled functions first, `t`
switches), one thread at a time (`[` `]`), over the whole report or only inside the steady
steps (`s`: the step budget's CPU ranges, computed in a worker). The tree itself is built
headlessly (tui/viewstate/flame.py); the screen only renders it and opens the hot path.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode

from tuiperf.model import fmt
from tuiperf.model.trace import Trace
from tuiperf.tui.actions import bindings
from tuiperf.tui.viewstate import flame as F

BAR = 20
#: children shown under a node: the rest are summed in one `… N more` line
MAX_CHILDREN = 50


class SamplesScreen(Screen[None]):
    SCOPED_CSS = False
    DEFAULT_CSS = """
    SamplesScreen > #samples-title { height: 1; background: $panel; padding: 0 1; }
    SamplesScreen > #samples-tree { height: 1fr; }
    """
    BINDINGS = bindings("samples")

    def __init__(self, trace: Trace, names: dict[tuple[int, int], str], ascii_only: bool) -> None:
        super().__init__()
        self.trace, self.names, self.ascii_only = trace, names, ascii_only
        self.threads = F.threads(trace)
        self.thread = 0
        self.top_down = True
        self.flame: F.Flame | None = None
        #: the steady steps' CPU ranges and their labels, once asked for (`s`)
        self.steps: tuple[F.Windows, str] | None = None
        self.only_steps = False

    def compose(self) -> ComposeResult:
        yield Static(id="samples-title")
        yield Tree("samples", id="samples-tree")
        yield Footer()

    def on_mount(self) -> None:
        self._show()
        self.query_one(Tree).focus()

    def _show(self) -> None:
        pid, tid, _ = self.threads[self.thread]
        name = self.names.get((pid, tid), "")
        label = f"{fmt.clean(name)} ({tid})" if name else f"thread {tid}"
        within = self.steps[0] if self.only_steps and self.steps else None
        self.flame = F.build(self.trace, pid, tid, self.top_down, label, within)
        tree: Tree[F.FlameNode] = self.query_one(Tree)
        tree.clear()
        tree.root.set_label(self._label(self.flame.root))
        tree.root.data = self.flame.root
        self._fill(tree.root)
        opened = tree.root
        for node in F.hot_path(self.flame.root):
            opened = next(c for c in opened.children if c.data is node)
            self._fill(opened)
            opened.expand()
        tree.root.expand()
        tree.move_cursor(opened)
        self.query_one("#samples-title", Static).update(self._title(label))

    def _title(self, label: str) -> Text:
        mode = "top-down (callers first)" if self.top_down else "bottom-up (sampled first)"
        t = Text("CPU samples", "bold")
        t.append(f"  {label}: {self.flame.total if self.flame else 0:,} samples · {mode}")
        if self.only_steps and self.steps:
            t.append(f" · steady steps only ({self.steps[1]})")
        t.append(f" · thread {self.thread + 1} of {len(self.threads)}", "dim")
        return t

    def _label(self, node: F.FlameNode) -> Text:
        total = self.flame.total if self.flame else 0
        pct = 100.0 * node.count / total if total else 0.0
        t = Text(F.bar(node.count, total, BAR, self.ascii_only), "green")
        t.append(f" {node.count:>7,} {pct:5.1f}%  ")
        t.append(node.label)  # report data: plain text, never markup
        return t

    def _fill(self, parent: TreeNode[F.FlameNode]) -> None:
        """Add the children of `parent` (once: a tree line is made when first opened)."""
        node = parent.data
        if node is None or parent.children or not node.children:
            return
        kids = node.ordered()
        for child in kids[:MAX_CHILDREN]:
            parent.add(self._label(child), data=child, allow_expand=bool(child.children))
        rest = sum(c.count for c in kids[MAX_CHILDREN:])
        if rest:
            more = F.FlameNode(f"… {len(kids) - MAX_CHILDREN} more", "", rest)
            parent.add_leaf(self._label(more), data=more)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[F.FlameNode]) -> None:
        self._fill(event.node)

    def action_mode(self) -> None:
        self.top_down = not self.top_down
        self._show()

    def action_thread(self, step: int) -> None:
        self.thread = (self.thread + step) % len(self.threads)
        self._show()

    def action_steps(self) -> None:
        if self.only_steps or self.steps is not None:
            self.only_steps = not self.only_steps
            self._show()
            return
        self.notify("finding the steady steps…")
        self._find_steps()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _find_steps(self) -> None:
        from tuiperf.analysis.budget.context import Ctx

        budget = Ctx(self.trace).budget
        steps = budget.main.steps if budget is not None else []
        a = np.array([x.cpu_start_ns for x in steps], np.int64)
        e = np.array([x.cpu_end_ns for x in steps], np.int64)
        found = ((a, e), budget.steady_labels) if budget is not None and steps else None
        self.app.call_from_thread(self._steps_found, found)

    def _steps_found(self, found: tuple[F.Windows, str] | None) -> None:
        if found is None:
            self.notify("no training steps found in this report", severity="warning")
            return
        self.steps, self.only_steps = found, True
        self._show()

    def action_back(self) -> None:
        self.app.pop_screen()


def open_samples(app: object, trace: Trace | None, ascii_only: bool) -> None:
    """Push the screen, or say why there is nothing to show."""
    from textual.app import App

    assert isinstance(app, App)
    if trace is None or not trace.has("cpu_samples"):
        app.notify(
            "no CPU samples in this report: capture with nsys --sample=process-tree "
            "(tuiperf profile does)",
            severity="warning",
        )
        return
    t = trace.table("threads")
    names = {
        (int(p), int(x)): str(n)
        for p, x, n in zip(t["pid"].to_pylist(), t["tid"].to_pylist(), t["name"].to_pylist())
        if n and p is not None and x is not None
    }
    app.push_screen(SamplesScreen(trace, names, ascii_only))
