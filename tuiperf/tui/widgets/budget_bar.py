"""The step budget as the fixes panel shows it: one stacked bar and its legend."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text

from tuiperf.analysis.budget.step_budget import Budget
from tuiperf.model import fmt
from tuiperf.report.budget import bar, legend


def budget_bar(b: Budget, width: int, ascii_only: bool = False) -> Group:
    """'Step budget · 22 steady steps · median 28.2 ms', the bar, then the legend."""
    med = int(np.median([s.parts.wall_ns for s in b.main.steps]))
    dot = "-" if ascii_only else "·"
    head = Text(
        f"Step budget {dot} {b.n_steady} steady steps {dot} median "
        f"{fmt.duration(med, ascii_only)} {dot} GPU busy {b.steady.pct('busy'):.0f}%",
        style="bold",
    )
    return Group(head, bar(b.steady, max(width, 10), ascii_only), legend(b.steady, ascii_only))
