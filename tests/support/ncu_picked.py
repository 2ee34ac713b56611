"""A report of fewer sections, made from a real `--set full` report, for any `ncu_report`.

Nsight Compute writes only the sections asked for (`--section`, `--set`), so a report of
another set holds fewer sections, their metrics and rule results. No such capture is kept
here; this stand-in module wraps the real reader (whichever one Python imports: the dev
venv's, or a wheel of another version on PYTHONPATH) and hides some sections of a full
report: their metrics (those no other section lists), their rule results, and, from a
reader with `IAction.sections()`, the sections themselves. `--old-shape` hides what readers
before 2026.3 lack (`IAction.sections`, `IMetric.label`, tests/data/ncu_api/ncu_versions.md),
so the venv's reader stands in for them. Everything else is the real reader's.

Which metrics a section lists comes from the recorded section layout
(tuiperf/load/ncu/sections.json: what the 2026.3 reader's sections() gave on these reports).

usage (repository root):
    python -m tests.support.ncu_picked [--old-shape] HIDDEN_IDS TUIPERF_ARGS...
    e.g. python -m tests.support.ncu_picked WarpStateStats,SchedulerStats ncu R --format csv
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path
from typing import Any

LAYOUT = Path(__file__).resolve().parents[2] / "tuiperf" / "load" / "ncu" / "sections.json"
#: what readers before 2026.3 lack
OLD_SHAPE = ("sections", "label")


def hidden_metrics(hidden: set[str]) -> set[str]:
    """The metrics only the hidden sections list."""
    sections = json.loads(LAYOUT.read_text())["sections"]
    names: dict[str, set[str]] = {
        sid: {m for m, _ in (*s["header"], *s["body"])} for sid, s in sections.items()
    }
    kept = set().union(*(v for sid, v in names.items() if sid not in hidden))
    return set().union(*(names.get(sid, set()) for sid in hidden)) - kept


class _Wrap:
    """Forwards every attribute to the real object, except those hidden."""

    _gone: tuple[str, ...] = ()

    def __init__(self, real: Any, spec: _Spec) -> None:
        self._real, self._spec = real, spec

    def __getattr__(self, name: str) -> Any:
        if name in self._gone and self._spec.old_shape:
            raise AttributeError(name)
        return getattr(self._real, name)


class _Spec:
    def __init__(self, hidden: set[str], old_shape: bool) -> None:
        self.hidden, self.old_shape = hidden, old_shape
        self.metrics = hidden_metrics(hidden)


class Metric(_Wrap):
    _gone = ("label",)


class Action(_Wrap):
    _gone = ("sections",)

    def metric_names(self) -> tuple[str, ...]:
        return tuple(n for n in self._real.metric_names() if n not in self._spec.metrics)

    def metric_by_name(self, name: str) -> Any:
        if name in self._spec.metrics:
            return None
        m = self._real.metric_by_name(name)
        return None if m is None else Metric(m, self._spec)

    def rule_results(self) -> list[Any]:
        hidden = self._spec.hidden
        return [r for r in self._real.rule_results() if r.section_identifier() not in hidden]

    def rule_results_as_dicts(self) -> list[dict[str, Any]]:
        hidden = self._spec.hidden
        return [
            d
            for d in self._real.rule_results_as_dicts()
            if d.get("section_identifier") not in hidden
        ]

    def __getattr__(self, name: str) -> Any:
        if name == "sections" and not self._spec.old_shape:
            real = self._real.sections  # AttributeError from a reader without sections
            return lambda: [s for s in real() if s.identifier() not in self._spec.hidden]
        return super().__getattr__(name)


class Range(_Wrap):
    def action_by_idx(self, i: int) -> Action:
        return Action(self._real.action_by_idx(i), self._spec)


class Context(_Wrap):
    def range_by_idx(self, i: int) -> Range:
        return Range(self._real.range_by_idx(i), self._spec)


def stand_in(real: types.ModuleType, hidden: set[str], old_shape: bool) -> types.ModuleType:
    """A module like `real` whose reports lack the `hidden` sections."""
    spec = _Spec(hidden, old_shape)
    mod = types.ModuleType("ncu_report")
    mod.__file__ = real.__file__  # tuiperf tells the reader's version from where it lives
    action_cls = real.IAction
    if old_shape:  # tuiperf checks the reader's capabilities on the class
        gone = {m: None for m in OLD_SHAPE}
        action_cls = type("IAction", (), {k: getattr(real.IAction, k) for k in dir(real.IAction)
                                          if not k.startswith("__") and k not in gone})  # fmt: skip
    mod.IAction = action_cls  # type: ignore[attr-defined]
    mod.load_report = lambda path: Context(real.load_report(path), spec)  # type: ignore[attr-defined]
    mod.__getattr__ = lambda name: getattr(real, name)  # type: ignore[method-assign]
    return mod


def main(argv: list[str]) -> int:
    old_shape = argv[:1] == ["--old-shape"]
    argv = argv[1:] if old_shape else argv
    hidden = {s for s in argv[0].split(",") if s}
    real = importlib.import_module("ncu_report")  # before pyarrow (ncu_versions.md)
    sys.modules["ncu_report"] = stand_in(real, hidden, old_shape)
    from tuiperf.cli import main as tuiperf

    return tuiperf(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
