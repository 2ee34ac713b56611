"""A kernel's sections, rule results and labels from any `ncu_report` reader, by capability.

Readers differ (tests/data/ncu_api/ncu_versions.md): only the PyPI `ncu-report` 2026.3 and
later have `IAction.sections()` and `IMetric.label()`; the 2025.3.1 and 2026.2.0 packages and
an Nsight Compute 2025.x install's `extras/python` module give a kernel's metrics by name
only. For those, the sections are built from a bundled layout (ncu/sections.json, written by
scripts/ncu_sections.py with a 2026.3 reader from real `--set full` and `--set basic`
reports): each section's id, name, order, parent, and header and body metrics with their
labels, filled with the kernel's own metric values. What a reader has decides, never its
version string.

Which sections a kernel has is not in what old readers give: a section is taken when the
kernel has every metric it lists, or when one of its rule results names it (a rule ran on
it: every reader gives rule results with their section), and the sections without metrics
(charts, tables) with a recorded set whose other sections are all there. Equal to the
2026.3 reader on the full and basic reports of tests/data; a report of another set or of
hand-picked `--section`s keeps every section its rules name (issue 35 item 18: the memory
workload charts' rule results were lost with the 2025.3 reader), and may show, besides
them, a section whose metrics ncu collects anyway.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from tuiperf.load.ncu.api import NcuAction, NcuMetric, NcuSection

#: what tuiperf reads through and no reader can do without (IAction methods)
NEEDED = ("name", "metric_names", "metric_by_name")
#: one of these gives the rule results
RULES = ("rule_results_as_dicts", "rule_results")


def missing(action_class: Any) -> list[str]:
    """The IAction methods tuiperf needs that this reader's class lacks (empty: it reads)."""
    gaps = [f"IAction.{m}()" for m in NEEDED if not hasattr(action_class, m)]
    if not any(hasattr(action_class, m) for m in RULES):
        gaps.append("IAction.rule_results()")
    return gaps


@dataclass(frozen=True)
class SectionLayout:
    identifier: str
    name: str
    order: int
    parent: str
    header: tuple[tuple[str, str], ...]  # (metric, label) in ncu's order
    body: tuple[tuple[str, str], ...]

    @property
    def metrics(self) -> list[str]:
        return [m for m, _ in (*self.header, *self.body)]


@dataclass(frozen=True)
class Layout:
    reader: str
    sections: dict[str, SectionLayout]
    sets: tuple[frozenset[str], ...]  # the section lists seen together (one per --set)

    def shown(self, names: set[str], ruled: Iterable[str] = ()) -> list[str]:
        """The sections a kernel with these metrics has: those whose metrics it has every
        one of, those its rule results name (`ruled`), and the metric-less ones (charts,
        tables) of a set it has in full."""
        complete = {
            sid
            for sid, s in self.sections.items()
            if s.metrics and all(m in names for m in s.metrics)
        }
        out = complete | {sid for sid in ruled if sid in self.sections}
        for group in self.sets:
            if all(sid in complete for sid in group if self.sections[sid].metrics):
                out |= group
        return sorted(out)


@functools.cache
def layout() -> Layout:
    raw = json.loads(resources.files("tuiperf.load.ncu").joinpath("sections.json").read_text())
    sections = {
        sid: SectionLayout(
            sid,
            s["name"],
            int(s["order"]),
            s["parent"],
            tuple((m, label) for m, label in s["header"]),
            tuple((m, label) for m, label in s["body"]),
        )
        for sid, s in raw["sections"].items()
    }
    return Layout(raw["reader"], sections, tuple(frozenset(g) for g in raw["sets"]))


class LabelledMetric:
    """A reader's metric with the label its section gives it (readers without label())."""

    def __init__(self, metric: NcuMetric, label: str) -> None:
        self._metric, self._label = metric, label

    def name(self) -> str:
        return self._metric.name()

    def label(self) -> str:
        return self._label

    def unit(self) -> str:
        return self._metric.unit()

    def value(self) -> Any:
        return self._metric.value()


class LayoutSection:
    """One section of the bundled layout, filled from a kernel's metrics by name."""

    def __init__(self, s: SectionLayout, action: NcuAction) -> None:
        self._s, self._action = s, action

    def identifier(self) -> str:
        return self._s.identifier

    def name(self) -> str:
        return self._s.name

    def order(self) -> int:
        return self._s.order

    def parent_identifier(self) -> str:
        return self._s.parent

    def _items(self, items: Iterable[tuple[str, str]]) -> list[NcuMetric | None]:
        out: list[NcuMetric | None] = []
        for name, label in items:
            m = self._action.metric_by_name(name)
            out.append(None if m is None else LabelledMetric(m, label))
        return out

    def header_metrics(self) -> list[NcuMetric | None]:
        return self._items(self._s.header)

    def body_metrics(self) -> list[NcuMetric | None]:
        return self._items(self._s.body)


def sections(a: NcuAction, ruled: Iterable[str] = ()) -> list[NcuSection]:
    """The kernel's sections: the reader's own where it has them, else the layout's;
    `ruled`: the section ids its rule results name."""
    own = getattr(a, "sections", None)
    if callable(own):
        return list(own())
    known = layout()
    shown = known.shown(set(a.metric_names()), ruled)
    return [LayoutSection(known.sections[sid], a) for sid in shown]


class BareSection:
    """A section a rule result names that neither the reader nor the layout knows (a newer
    Nsight Compute's): its id as its name, no metrics, after every known section."""

    ORDER = 1 << 30

    def __init__(self, sid: str) -> None:
        self._sid = sid

    def identifier(self) -> str:
        return self._sid

    def name(self) -> str:
        return self._sid

    def order(self) -> int:
        return self.ORDER

    def parent_identifier(self) -> str:
        return ""

    def header_metrics(self) -> list[NcuMetric | None]:
        return []

    def body_metrics(self) -> list[NcuMetric | None]:
        return []


def label(m: NcuMetric) -> str:
    """The metric's label; '' from a reader without IMetric.label() (a section's items
    carry theirs: LabelledMetric)."""
    own = getattr(m, "label", None)
    return own() if callable(own) else ""


def rule_dicts(a: NcuAction) -> list[dict[str, Any]]:
    """The kernel's rule results as dicts (the keys of rule_results_as_dicts())."""
    as_dicts = getattr(a, "rule_results_as_dicts", None)
    if callable(as_dicts):
        return list(as_dicts())
    out = []
    for r in a.rule_results():
        d: dict[str, Any] = {
            "rule_identifier": r.rule_identifier(),
            "name": r.name(),
            "section_identifier": r.section_identifier(),
            "focus_metrics": list(r.focus_metrics()),
        }
        if r.has_rule_message():
            d["rule_message"] = r.rule_message()
        if r.has_speedup_estimation():
            d["speedup_estimation"] = r.speedup_estimation()
        out.append(d)
    return out
