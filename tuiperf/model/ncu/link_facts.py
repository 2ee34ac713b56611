"""The ncu <-> nsys link as plain facts, for the headless commands (info, summary, ncu).

Headless: numpy and Arrow only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tuiperf.model import fmt
from tuiperf.model.ncu.link import LEVEL_SHORT, LEVEL_TEXT, NcuLink
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.model.trace import Trace


@dataclass(frozen=True)
class KernelLink:
    """What the trace holds of one ncu result."""

    ncu_id: int
    launches: int  # nsys kernel rows it may describe
    profiled_rows: tuple[int, ...]  # the launch(es) most likely profiled
    profiled_start_ns: int | None  # the first of them
    match: str  # how closely (LEVEL_TEXT)
    match_short: str  # the same in a few words (LEVEL_SHORT)

    def profiled_at(self, unknown: str = "") -> str:
        """The profiled launch's start, in ms from the trace start (`unknown` without one)."""
        ns = self.profiled_start_ns
        return unknown if ns is None else fmt.millis(ns)

    def as_json(self) -> dict[str, Any]:
        return {
            "ncu_id": self.ncu_id,
            "nsys_launches": self.launches,
            "nsys_profiled_rows": list(self.profiled_rows),
            "nsys_profiled_start_ns": self.profiled_start_ns,
            "match": self.match,
        }


@dataclass(frozen=True)
class LinkFacts:
    trace_source: str
    ncu_source: str
    matched_on: str
    kernels: dict[int, KernelLink] = field(default_factory=dict)
    unmatched_ncu: tuple[int, ...] = ()
    unmatched_nsys: tuple[str, ...] = ()
    nsys_kernel_rows: int = 0
    linked_rows: int = 0
    #: ncu id -> launches of the trace that are similar but not linked
    similar: dict[int, int] = field(default_factory=dict)
    #: the sentence the viewer shows too (NcuLink.count_line)
    count_line: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "timeline": self.trace_source,
            "ncu": self.ncu_source,
            "matched_on": self.matched_on,
            "kernels": [k.as_json() for k in self.kernels.values()],
            "unmatched_ncu": list(self.unmatched_ncu),
            "unmatched_nsys": list(self.unmatched_nsys),
            "nsys_kernel_rows": self.nsys_kernel_rows,
            "nsys_rows_with_ncu_result": self.linked_rows,
            "similar_not_linked": {str(k): v for k, v in self.similar.items()},
        }

    def summary_line(self) -> str:
        return self.count_line


def link_facts(trace: Trace, km: KernelMetrics, link: NcuLink | None = None) -> LinkFacts:
    from tuiperf.model.ncu.link import build_link

    link = link or build_link(trace, km)
    starts = trace.table("kernels", ["start"])["start"]
    kernels = {}
    for kid in km.kernel_ids():
        rows = link.rows_for(kid)
        if len(rows) == 0:
            continue
        exact = tuple(int(r) for r in link.exact_rows_for(kid).tolist())
        kernels[kid] = KernelLink(
            ncu_id=kid,
            launches=len(rows),
            profiled_rows=exact,
            profiled_start_ns=int(starts[exact[0]].as_py()) if exact else None,
            match=LEVEL_TEXT[link.level(exact[0]) if exact else 0],
            match_short=LEVEL_SHORT[link.level(exact[0]) if exact else 0],
        )
    return LinkFacts(
        trace_source=str(trace.meta.source),
        ncu_source=str(km.meta.get("source", "")),
        matched_on=link.matched_on,
        kernels=kernels,
        unmatched_ncu=tuple(link.unmatched_ncu),
        unmatched_nsys=tuple(link.unmatched_nsys),
        nsys_kernel_rows=len(link.choice_of_row),
        linked_rows=int(link.mask.sum()),
        similar={k: len(v) for k, v in link.similar_of.items() if k not in link.rows_of},
        count_line=link.count_line(len(km)),
    )
