"""A kernel of one Nsight Compute report against the same kernel in another (the baseline),
metric by metric, as the Nsight Compute GUI's baseline view compares them.

Kernels are matched in three passes, each in launch order among the kernels still
unmatched: the same demangled name (as ncu's CSV spells it), then the same function base
name (`vectorized_elementwise_kernel` for two template instances), then the position in
launch order (noted: a matmul that changed libraries, `sm80_xmma_gemm…` -> `nvjet…`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tuiperf.model.ncu.metrics import Kernel, KernelMetrics, Metric

#: how two kernels were matched
BY_NAME, BY_BASE_NAME, BY_ORDER = "same name", "same function name", "launch order"


@dataclass(frozen=True)
class KernelPair:
    kernel_id: int  # in the current report
    baseline_id: int | None  # in the baseline report; None: no kernel left to pair with
    match: str  # BY_NAME, BY_BASE_NAME, BY_ORDER or "" when unmatched

    @property
    def note(self) -> str:
        if self.baseline_id is None:
            return "no kernel of the baseline report is left to compare with"
        if self.match == BY_ORDER:
            return "names differ: matched by launch order"
        return ""


@dataclass(frozen=True)
class MetricDelta:
    section_id: str
    section_name: str
    name: str | None  # ncu's metric name (None from a details CSV)
    label: str
    unit: str  # base unit
    baseline: Metric | None
    current: Metric | None

    @property
    def difference(self) -> float | None:
        b, c = _num(self.baseline), _num(self.current)
        return None if b is None or c is None else c - b

    @property
    def percent(self) -> float | None:
        """The difference relative to the baseline, in percent (None for a zero baseline)."""
        b, d = _num(self.baseline), self.difference
        return None if b is None or d is None or b == 0 else 100.0 * d / abs(b)


def _num(m: Metric | None) -> float | None:
    return None if m is None else m.value


def match_kernels(current: KernelMetrics, baseline: KernelMetrics) -> list[KernelPair]:
    """Each kernel of `current` with its kernel in `baseline`, in `current`'s order."""
    cur = [current.kernel(k) for k in current.kernel_ids()]
    base = [baseline.kernel(k) for k in baseline.kernel_ids()]
    found: dict[int, tuple[int, str]] = {}
    used: set[int] = set()
    keys: tuple[tuple[str, Callable[[Kernel], str]], ...] = (
        (BY_NAME, lambda k: k.ncu_name),
        (BY_BASE_NAME, lambda k: k.name or k.display_name),
    )
    for how, key in keys:
        for k in cur:
            if k.id in found:
                continue
            for b in base:
                if b.id not in used and key(b) == key(k):
                    found[k.id] = (b.id, how)
                    used.add(b.id)
                    break
    left = iter(b.id for b in base if b.id not in used)
    out = []
    for k in cur:
        if k.id in found:
            bid, how = found[k.id]
            out.append(KernelPair(k.id, bid, how))
            continue
        nxt = next(left, None)
        out.append(KernelPair(k.id, nxt, BY_ORDER if nxt is not None else ""))
    return out


def compare(
    current: KernelMetrics,
    kid: int,
    baseline: KernelMetrics,
    bid: int,
    details: str = "header",
) -> list[MetricDelta]:
    """Section by section (the current kernel's order, then sections only the baseline
    has), each metric of either kernel with both values; `details` as `sections()`."""
    cur = {s.id: s for s in current.sections(kid, details)}
    base = {s.id: s for s in baseline.sections(bid, details)}
    out: list[MetricDelta] = []
    for sid in list(cur) + [s for s in base if s not in cur]:
        cs, bs = cur.get(sid), base.get(sid)
        name = (cs or bs).name  # type: ignore[union-attr]  # one of them is there
        cm = {_key(m): m for m in (cs.metrics if cs else ())}
        bm = {_key(m): m for m in (bs.metrics if bs else ())}
        for key in list(cm) + [k for k in bm if k not in cm]:
            c, b = cm.get(key), bm.get(key)
            m = c or b
            assert m is not None
            out.append(MetricDelta(sid, name, m.name, m.title, m.unit, b, c))
    return out


def _key(m: Metric) -> str:
    return m.name or m.title
