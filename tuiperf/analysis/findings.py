"""What a rule produces: a Finding with its scope, evidence rows, fix and estimated saving."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
import pyarrow as pa

from tuiperf.model import fmt
from tuiperf.model.arrays import from_numpy, from_strings

#: where a finding's logic comes from
SOURCE_TUIPERF = "tuiperf"
SOURCE_NSYS = "nsys-analyze"
SOURCE_NCU = "ncu"
SOURCE_LABELS = {
    SOURCE_TUIPERF: "tuiperf rule",
    SOURCE_NSYS: "nsys analyze rule",
    SOURCE_NCU: "ncu rule",
}


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def word(self) -> str:
        return self.name.lower()

    def glyph(self, ascii_only: bool = False) -> str:
        """A mark that carries the severity without colour."""
        if ascii_only:
            return {1: "i", 2: "!", 3: "x"}[self.value]
        return {1: "ℹ", 2: "⚠", 3: "✖"}[self.value]

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}; use info, warning or error") from None


SCOPE_REPORT = "report"
SCOPE_RANGE = "range"
SCOPE_KERNEL = "kernel"
SCOPE_EVENTS = "events"


@dataclass(frozen=True)
class Scope:
    """What a finding is about: the whole report, NVTX range(s), one kernel name, or events."""

    kind: str
    label: str = ""
    start_ns: int | None = None
    end_ns: int | None = None

    def text(self) -> str:
        return f"{self.kind}: {self.label}" if self.label else self.kind


@dataclass
class Evidence:
    """The rows behind a finding, all of them, as an Arrow table.

    Always has `table` (the canonical table the row indexes, or "" for derived regions such
    as gaps), `row` (index into `trace.table(table)`, null for regions), `start_ns` and
    `duration_ns`; rule-specific columns follow. `headers` maps column -> display label.
    """

    rows: pa.Table
    headers: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.rows.num_rows

    @classmethod
    def empty(cls) -> Evidence:
        return cls.build("", None, np.zeros(0, np.int64), np.zeros(0, np.int64))

    @classmethod
    def build(
        cls,
        table: str,
        row: np.ndarray | None,
        start_ns: np.ndarray | None,
        duration_ns: np.ndarray,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Evidence:
        n = len(duration_ns)
        # built on buffers where it can: `pa.array` imports pandas (model/arrays.py), which
        # the viewer's background analysis would otherwise do while the user starts to move
        cols: dict[str, Any] = {
            "table": from_strings([table] * n),
            "row": _ints(row) if row is not None else pa.nulls(n, pa.int64()),
            "start_ns": pa.nulls(n, pa.int64()) if start_ns is None else _ints(start_ns),
            "duration_ns": _ints(duration_ns),
        }
        for k, v in (extra or {}).items():
            cols[k] = v if isinstance(v, pa.Array | pa.ChunkedArray) else _arrow(v)
        base = {"start_ns": "Start (ns)", "duration_ns": "Duration (ns)"}
        return cls(pa.table(cols), {**base, **(headers or {})})

    def head(self, n: int) -> list[dict[str, Any]]:
        return self.rows.slice(0, n).to_pylist()


def _ints(values: Any) -> pa.Array:
    return from_numpy(np.asarray(values, np.int64))


def _arrow(v: Any) -> pa.Array:
    """An evidence column: numbers and strings on buffers, anything else as `pa.array`
    infers it."""
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
        return from_numpy(v)
    values = v.tolist() if isinstance(v, np.ndarray) else list(v)
    if all(x is None for x in values):
        return pa.nulls(len(values))  # (what `pa.array` makes of them)
    if all(x is None or isinstance(x, str) for x in values):
        return from_strings(values)
    return pa.array(values)


@dataclass
class Fix:
    text: str
    snippet: str = ""


@dataclass
class Finding:
    rule: str
    title: str
    severity: Severity
    message: str
    fix: Fix
    scope: Scope
    source: str
    count: int
    evidence: Evidence
    est_saving_ns: int | None = None
    #: for kernel-scoped findings, the kernel: the one name when the scope is one kernel,
    #: the one taking the most GPU time when it is several (all of them are in `kernels`).
    #: Not a joined list: kernel names have ", " in their template arguments.
    kernel: str | None = None
    #: the numbers that made the rule fire (name -> value), shown with the finding
    metrics: dict[str, Any] = field(default_factory=dict)
    #: filled by ranking: est_saving_ns as % of the profiled time
    est_saving_pct: float | None = None
    #: every kernel name a kernel-scoped finding is about, most GPU time first
    kernels: tuple[str, ...] = ()
    #: the rule's own estimate, before ranking took the saving from the step budget
    own_saving_ns: int | None = None
    #: the step-budget part the finding explains (step_budget.PARTS), set by ranking
    budget_part: str | None = None
    #: how the saving is modelled: what the named change removes, from which evidence
    saving_model: str = ""
    #: the estimate is already what the step saves (ranking caps it at its budget part but
    #: does not weight it by the share of the step the GPU is busy)
    modelled: bool = False
    #: with `modelled`: step time outside its budget part that the change also removes (the
    #: batch hand-over a pin-memory thread takes over): ranking caps at part + this
    beyond_part_ns: int = 0

    def __post_init__(self) -> None:
        if self.kernel and not self.kernels:
            self.kernels = (self.kernel,)
        elif self.kernels and not self.kernel:
            self.kernel = self.kernels[0]

    def to_json(self, max_rows: int | None = None, evidence: bool = True) -> dict[str, Any]:
        """The finding as JSON-able data; `evidence=False` leaves the rows out (an empty
        list), for a caller that writes them itself (report.findings, row by row)."""
        ev = self.evidence.rows
        if max_rows is not None:
            ev = ev.slice(0, max_rows)
        return {
            "rule": self.rule,
            "severity": self.severity.word,
            "title": self.title,
            "message": self.message,
            "fix": self.fix.text,
            "snippet": self.fix.snippet,
            "scope": self.scope.text(),
            "scope_kind": self.scope.kind,
            "kernel": self.kernel,
            "kernels": list(self.kernels),
            "count": self.count,
            "evidence": ev.to_pylist() if evidence else [],
            "est_saving_ns": self.est_saving_ns,
            "est_saving_pct": self.est_saving_pct,
            "own_saving_ns": self.own_saving_ns,
            "budget_part": self.budget_part,
            "saving_model": self.saving_model,
            "source": self.source,
            "metrics": self.metrics,
        }


@dataclass(frozen=True)
class RuleCheck:
    """That a rule ran, and how it ended: `found`, `clean`, or `skipped` with the reason."""

    rule: str
    source: str
    status: str
    note: str = ""


@dataclass
class AnalysisResult:
    findings: list[Finding]
    checks: list[RuleCheck]
    profiled_ns: int
    source: str = ""
    #: the steady-state step budget (step_budget.Budget) when the report has steps
    budget: Any = None
    #: with a timeline: ncu findings about kernels that have no launch in it. They cannot
    #: save any of its time, so they are not ranked with its findings but listed after.
    unlinked: list[Finding] = field(default_factory=list)
    #: an Nsight Compute report alone: savings are shares of its kernels' summed duration
    ncu_only: bool = False
    #: a huge report is analysed over a sample of its run (analysis.sample.Sample)
    sample: Any = None

    @property
    def saving_basis(self) -> str:
        """What est_saving_pct is a share of."""
        where = f", in {self.sample.text()}" if self.sample is not None else ""
        if self.budget is not None:
            return f"steady-state step time ({fmt.plural(self.budget.n_steady, 'step')}{where})"
        if self.ncu_only:
            return "the profiled kernels' summed duration"
        if self.sample is not None:
            return f"profiled time (no training steps found{where})"
        return "profiled time (no training steps found: the whole capture)"

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)


class Skip(Exception):
    """Raised by a rule that cannot run on this report (missing tables); the text says why."""
