"""Two timeline reports side by side: did the change make the steady step faster?

What is compared, each side measured on its own and then matched:

* the steady-state step: median wall time, the steps' spread (median absolute deviation,
  interquartile range) and the step budget part by part, as a mean per step (the parts'
  means add up to the mean step, so their changes add up to its change);
* kernels by demangled name (`ncu_names.normalize`: casts and `at::native::` spelled one
  way); names left unmatched on both sides that share a template base
  (`ncu_names.base_name`, `kernel<…>`) are matched as one row; the rest appear or vanish;
* memcpy by copy kind and size class, memset by size class;
* CUDA API calls by name;
* findings (`engine.analyze`) by rule and kernel: gone, new, or changed in saving.

Kernels, copies and calls are counted inside the steady steps when both reports have
steps (per-step figures), else over the whole report (totals). Pure data: no printing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tuiperf.analysis import sample
from tuiperf.analysis.budget.comm import COMM_KERNEL
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.step_budget import PARTS, SHORT, Budget
from tuiperf.analysis.engine import AnalyzeOptions, analyze
from tuiperf.model import arrays as A
from tuiperf.model import fmt
from tuiperf.model.ncu.names import base_name, normalize
from tuiperf.model.trace import Trace

FASTER, SLOWER, SAME, UNKNOWN = "faster", "slower", "same", "unknown"
#: upper bounds (bytes, inclusive) of the copy size classes; larger falls in the last
SIZE_CLASSES = ((4 << 10, "≤4 KiB"), (1 << 20, "≤1 MiB"), (64 << 20, "≤64 MiB"))
BIG = ">64 MiB"
#: a finding's saving changed when it moved by more than this share of the step
FINDING_STEP_PCT = 1.0
#: a by-name row whose time per launch moved by no more than this share is the same per
#: launch: its per-step change is launches (or a fraction of one, from window totals)
LAUNCH_SAME = 0.02
WITHIN_NOISE, SAME_PER_LAUNCH = "within noise", "same per launch"


@dataclass(frozen=True)
class Agg:
    """One row of a by-name table on one side: total time and count over the scope."""

    total_ns: int = 0
    count: int = 0
    bytes: int = 0


@dataclass
class Side:
    """One report, measured."""

    path: str
    budget: Budget | None
    steps_ns: list[int]
    gpus: list[str]
    kernels: dict[str, Agg]
    kernel_names: dict[str, str]  # key -> a display name
    copies: dict[str, Agg]
    api: dict[str, Agg]
    findings: dict[str, tuple[str, float, int]]  # key -> (title, % of step, saving ns)
    events: int
    tool: str = ""  # what captured it: "Nsight Systems", "torch.profiler (Kineto)"
    #: the stretch of a huge report its budget and findings are of (analysis.sample)
    sample: sample.Sample | None = None

    @property
    def n_steps(self) -> int:
        return len(self.steps_ns)

    @property
    def median_ns(self) -> float:
        return float(np.median(self.steps_ns)) if self.steps_ns else 0.0

    @property
    def mad_ns(self) -> float:
        if not self.steps_ns:
            return 0.0
        a = np.asarray(self.steps_ns, np.float64)
        return float(np.median(np.abs(a - np.median(a))))

    @property
    def iqr_ns(self) -> float:
        if not self.steps_ns:
            return 0.0
        q1, q3 = np.percentile(np.asarray(self.steps_ns, np.float64), [25, 75])
        return float(q3 - q1)

    @property
    def method(self) -> str:
        return self.budget.method_text if self.budget is not None else "no steps found"

    def part_per_step(self, part: str) -> float:
        if self.budget is None or not self.n_steps:
            return 0.0
        return self.budget.steady.ns[part] / self.n_steps


@dataclass(frozen=True)
class Row:
    """One compared name: before/after values (per step or totals), and its status."""

    section: str
    name: str
    before: float | None
    after: float | None
    unit: str  # ns, count, bytes, pct
    detail: str = ""
    before_count: float | None = None
    after_count: float | None = None
    #: a budget row's noise (ns): the step noise the verdict is judged against
    noise: float = 0.0

    @property
    def change(self) -> float:
        return (self.after or 0.0) - (self.before or 0.0)

    @property
    def change_pct(self) -> float | None:
        if not self.before or self.after is None:
            return None
        return 100.0 * self.change / self.before

    @property
    def status(self) -> str:
        if self.section in ("step", "budget") and (self.before is None or self.after is None):
            return "not comparable"
        if self.before is None:
            return "appeared"
        if self.after is None:
            return "vanished"
        if not self.change:
            return "same"
        if self.section == "budget" and abs(self.change) <= self.noise:
            return WITHIN_NOISE
        return self._per_launch() or "changed"

    def _per_launch(self) -> str:
        """For a timed by-name row: "within noise" when its time per launch stayed within
        LAUNCH_SAME and its launches per step moved by less than one (a fraction of a launch
        is the window's total over its steps), "same per launch" when they moved by more."""
        if self.unit != "ns" or self.section not in ("kernels", "copies", "api"):
            return ""
        nb, na = self.before_count, self.after_count
        if not nb or not na or self.before is None or self.after is None:
            return ""
        mb, ma = self.before / nb, self.after / na
        if abs(ma - mb) > LAUNCH_SAME * mb:
            return ""
        return WITHIN_NOISE if abs(na - nb) < 1 else SAME_PER_LAUNCH

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "name": self.name,
            "detail": self.detail,
            "unit": self.unit,
            "before": self.before,
            "after": self.after,
            "change": self.change,
            "change_pct": _round(self.change_pct),
            "before_count": self.before_count,
            "after_count": self.after_count,
            "status": self.status,
            "noise": self.noise,
        }


@dataclass
class Diff:
    before: Side
    after: Side
    verdict: str
    change_ns: float  # median step, after - before
    noise_ns: float
    #: (part, change per step in ns, supporting detail), the largest changes first
    reasons: list[tuple[str, float, str]]
    per_step: bool  # kernels/copies/api counted inside steady steps, per step
    notes: list[str] = field(default_factory=list)
    budget: list[Row] = field(default_factory=list)
    kernels: list[Row] = field(default_factory=list)
    copies: list[Row] = field(default_factory=list)
    api: list[Row] = field(default_factory=list)
    findings: list[Row] = field(default_factory=list)

    @property
    def change_pct(self) -> float | None:
        b = self.before.median_ns
        return 100.0 * self.change_ns / b if b and self.verdict != UNKNOWN else None

    def slower_than(self, pct: float) -> bool:
        """Slower beyond the noise and by more than `pct` % of the before step."""
        cp = self.change_pct
        return self.verdict == SLOWER and cp is not None and cp > pct

    def rows(self) -> list[Row]:
        return [*self.budget, *self.kernels, *self.copies, *self.api, *self.findings]


def measure(trace: Trace, path: str, findings: bool = True) -> Side:
    """One side of a diff: its budget and findings over the report's sample when it is
    huge (analysis.sample; the per-step distribution is compared, not totals)."""
    part = sample.sampled(trace, sample.DEFAULT_MAX_EVENTS)
    steady = part[2] if part is not None else trace
    budget = _budget(Ctx(steady))
    if part is not None:
        budget = sample.without_startup(budget)
    steps = [s.parts.wall_ns for s in budget.main.steps] if budget is not None else []
    found: dict[str, tuple[str, float, int]] = {}
    if findings:
        for f in analyze(steady, options=AnalyzeOptions(max_events=0)).findings:
            key = f.rule if not f.kernel else f"{f.rule}: {base_name(f.kernel)}"
            found.setdefault(key, (f.title, f.est_saving_pct or 0.0, f.est_saving_ns or 0))
    return Side(
        path=path,
        budget=budget,
        steps_ns=steps,
        gpus=_gpus(trace),
        kernels={},
        kernel_names={},
        copies={},
        api={},
        findings=found,
        events=sum(trace.table(t).num_rows for t in ("kernels", "memcpy", "memset", "api")),
        tool=trace.meta.tool,
        sample=part[0] if part is not None else None,
    )


def diff_traces(
    before: Trace, after: Trace, before_path: str, after_path: str, findings: bool = True
) -> Diff:
    """Measure both reports and compare them."""
    b = measure(before, before_path, findings)
    a = measure(after, after_path, findings)
    return compare(b, a, before, after)


def compare(before: Side, after: Side, tb: Trace, ta: Trace) -> Diff:
    """The comparison of two measured sides (tb, ta: their traces, for the by-name tables)."""
    per_step = bool(before.n_steps and after.n_steps)
    for side, trace in ((before, tb), (after, ta)):
        windows = _windows(side) if per_step else None
        side.kernels, side.kernel_names = _kernels(trace, windows)
        side.copies = _copies(trace, windows)
        side.api = _api(trace, windows)
    verdict, change, noise = _verdict(before, after)
    d = Diff(before, after, verdict, change, noise, [], per_step)
    d.budget = _budget_rows(before, after, noise)
    d.kernels = _kernel_rows(before, after, per_step)
    d.copies = _by_name_rows("copies", before.copies, after.copies, before, after, per_step)
    d.api = _by_name_rows("api", before.api, after.api, before, after, per_step)
    d.findings = _finding_rows(before, after)
    d.reasons = _reasons(d)
    d.notes = _notes(before, after)
    return d


# -- measuring one side ----------------------------------------------------------------


def _budget(ctx: Ctx) -> Budget | None:
    """The budget when the report has steady steps (a bug in it is a bug, not "no steps")."""
    b = ctx.budget
    return b if b is not None and b.n_steady else None


def _gpus(trace: Trace) -> list[str]:
    t = trace.table("devices")
    if not t.num_rows or "name" not in t.column_names:
        return []
    return sorted({str(n) for n in t.column("name").to_pylist() if n})


def _windows(side: Side) -> tuple[np.ndarray, np.ndarray]:
    assert side.budget is not None
    steps = side.budget.main.steps
    return (
        np.array([s.start_ns for s in steps], np.int64),
        np.array([s.end_ns for s in steps], np.int64),
    )


def _inside(start: np.ndarray, windows: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    if windows is None:
        return np.ones(len(start), bool)
    lo, hi = windows
    i = np.searchsorted(lo, start, side="right") - 1
    ok = i >= 0
    ok[ok] = start[ok] < hi[i[ok]]
    return ok


def _group(keys: list[str], dur: np.ndarray, nbytes: np.ndarray | None = None) -> dict[str, Agg]:
    out: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        acc = out.setdefault(k, [0, 0, 0])
        acc[0] += int(dur[i])
        acc[1] += 1
        if nbytes is not None:
            acc[2] += int(nbytes[i])
    return {k: Agg(v[0], v[1], v[2]) for k, v in out.items()}


def _names(table: Any, col: str, mask: np.ndarray, fix: Callable[[str], str]) -> list[str]:
    if col not in table.column_names:
        return ["?"] * int(mask.sum())
    col_arr = table.column(col).combine_chunks()
    idx = np.nonzero(mask)[0]
    # (indices on buffers: `take` of an ndarray goes through `pa.array`, importing pandas)
    vals = col_arr.take(A.from_numpy(idx.astype(np.int64))).to_pylist() if len(idx) else []
    cache: dict[Any, str] = {}
    return [cache.setdefault(v, fix(str(v or "?"))) for v in vals]


def _durations(t: Any) -> np.ndarray:
    return A.ints(t, "end") - A.ints(t, "start")


def _kernels(
    trace: Trace, windows: tuple[np.ndarray, np.ndarray] | None
) -> tuple[dict[str, Agg], dict[str, str]]:
    t = trace.table("kernels")
    mask = _inside(A.ints(t, "start"), windows)
    keys = _names(t, "name", mask, normalize)
    return _group(keys, _durations(t)[mask]), {k: k for k in keys}


def size_class(n: int) -> str:
    for top, label in SIZE_CLASSES:
        if n <= top:
            return label
    return BIG


def _copies(trace: Trace, windows: tuple[np.ndarray, np.ndarray] | None) -> dict[str, Agg]:
    out: dict[str, Agg] = {}
    for table, col in (("memcpy", "copy_kind"), ("memset", None)):
        t = trace.table(table)
        if not t.num_rows:
            continue
        mask = _inside(A.ints(t, "start"), windows)
        nbytes = A.ints(t, "bytes", 0)[mask]
        kinds = _names(t, col, mask, str) if col else ["memset"] * int(mask.sum())
        keys = [f"{k} {size_class(int(b))}" for k, b in zip(kinds, nbytes)]
        out.update(_group(keys, _durations(t)[mask], nbytes))
    return out


def _api(trace: Trace, windows: tuple[np.ndarray, np.ndarray] | None) -> dict[str, Agg]:
    t = trace.table("api")
    if not t.num_rows:
        return {}
    mask = _inside(A.ints(t, "start"), windows)
    return _group(_names(t, "name", mask, api_name), _durations(t)[mask])


_API_VERSION = re.compile(r"_v\d+$")


def api_name(name: str) -> str:
    """`cudaLaunchKernel_v7000` (nsys) and `cudaLaunchKernel` (Kineto) are one call."""
    return _API_VERSION.sub("", name)


# -- comparing -----------------------------------------------------------------------


def _verdict(before: Side, after: Side) -> tuple[str, float, float]:
    """faster/slower/same, the median step's change, and the noise it is judged against:
    the larger of the two reports' median absolute deviation of step time."""
    if not before.n_steps or not after.n_steps:
        return UNKNOWN, 0.0, 0.0
    change = after.median_ns - before.median_ns
    noise = max(before.mad_ns, after.mad_ns)
    if abs(change) <= noise:
        return SAME, change, noise
    return (SLOWER if change > 0 else FASTER), change, noise


def _budget_rows(before: Side, after: Side, noise: float = 0.0) -> list[Row]:
    rows = [
        Row("step", "median step", _or_none(before), _or_none(after), "ns"),
    ]
    if before.budget is None or after.budget is None:
        return rows
    rows += [
        Row("step", "step MAD", before.mad_ns, after.mad_ns, "ns"),
        Row("step", "step IQR", before.iqr_ns, after.iqr_ns, "ns"),
        Row("step", "steady steps", before.n_steps, after.n_steps, "count"),
    ]
    for p in PARTS:
        rows.append(
            Row(
                "budget", SHORT[p], before.part_per_step(p), after.part_per_step(p), "ns", p,
                noise=noise,
            )
        )  # fmt: skip
    return rows


def _or_none(side: Side) -> float | None:
    return side.median_ns if side.n_steps else None


def _scale(side: Side, per_step: bool) -> float:
    return 1.0 / side.n_steps if per_step and side.n_steps else 1.0


def _by_name_rows(
    section: str,
    b: dict[str, Agg],
    a: dict[str, Agg],
    before: Side,
    after: Side,
    per_step: bool,
    detail: dict[str, str] | None = None,
) -> list[Row]:
    sb, sa = _scale(before, per_step), _scale(after, per_step)
    rows = []
    for k in set(b) | set(a):
        x, y = b.get(k), a.get(k)
        rows.append(
            Row(
                section,
                k,
                None if x is None else x.total_ns * sb,
                None if y is None else y.total_ns * sa,
                "ns",
                (detail or {}).get(k, ""),
                None if x is None else x.count * sb,
                None if y is None else y.count * sa,
            )
        )
    rows.sort(key=lambda r: (-abs(r.change), r.name))
    return rows


def _kernel_rows(before: Side, after: Side, per_step: bool) -> list[Row]:
    """Exact (normalized) names first; then names unmatched on both sides are matched by
    `loose_name` (one kernel spelled by two demanglers), then by template base
    (`kernel<…>`: instantiations that differ only in their arguments, merged into one row
    on each side). What is still unmatched appears or vanishes."""
    b, a = dict(before.kernels), dict(after.kernels)
    detail: dict[str, str] = {}
    _merge(b, a, loose_name, "spelled differently (demangler)", detail)
    _merge(b, a, template_base, "matched by template base (arguments differ)", detail)
    return _by_name_rows("kernels", b, a, before, after, per_step, detail)


def template_base(name: str) -> str:
    base = base_name(loose_name(name))
    return base if base.endswith("<…>") else ""


def _merge(
    b: dict[str, Agg],
    a: dict[str, Agg],
    key: Callable[[str], str],
    why: str,
    detail: dict[str, str],
) -> None:
    """Rows unmatched on both sides with the same non-empty key become one row `key`."""
    only_b = {k: key(k) for k in b if k not in a}
    only_a = {k: key(k) for k in a if k not in b}
    for common in (set(only_b.values()) & set(only_a.values())) - {""}:
        for src, only in ((b, only_b), (a, only_a)):
            merged = [src.pop(k) for k, v in sorted(only.items()) if v == common]
            old = src.pop(common, Agg())
            src[common] = Agg(
                sum(m.total_ns for m in merged) + old.total_ns,
                sum(m.count for m in merged) + old.count,
            )
        detail[common] = why


_TRUE_FALSE = re.compile(r"\b(true|false)\b")
_UNSIGNED = re.compile(r"\b(\d+)(?:u|ul|ull|l|ll)\b", re.IGNORECASE)


def loose_name(name: str) -> str:
    """A kernel's name as two demanglers agree on it: no return type or parameter list,
    `(anonymous namespace)` and `<unnamed>` as `anon`, `true`/`false` as 1/0, `32u` as
    32."""
    s = normalize(name).replace("(anonymous namespace)", "anon").replace("<unnamed>", "anon")
    s = _TRUE_FALSE.sub(lambda m: "1" if m.group(1) == "true" else "0", s)
    s = _UNSIGNED.sub(r"\1", s)
    s = s.removeprefix("void ")
    if s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    return s.strip()


def _finding_rows(before: Side, after: Side) -> list[Row]:
    rows = []
    for k in sorted(set(before.findings) | set(after.findings)):
        x, y = before.findings.get(k), after.findings.get(k)
        title = (y or x or ("", 0.0, 0))[0]
        rows.append(
            Row("findings", k, None if x is None else x[1], None if y is None else y[1], "pct",
                title)
        )  # fmt: skip
    return rows


def finding_status(r: Row) -> str:
    """gone / new / changed (saving moved more than FINDING_STEP_PCT of the step) / same."""
    if r.before is None:
        return "new"
    if r.after is None:
        return "gone"
    return "changed" if abs(r.change) > FINDING_STEP_PCT else "same"


def _reasons(d: Diff) -> list[tuple[str, float, str]]:
    """The (up to three) budget parts whose per-step change is largest either way and
    beyond the step noise (the largest alone when none is), each with the by-name change
    that shows it. None when the step did not change beyond the noise."""
    if d.verdict in (UNKNOWN, SAME):
        return []
    parts = [r for r in d.budget if r.section == "budget" and r.change]
    parts.sort(key=lambda r: -abs(r.change))
    beyond = [r for r in parts if r.status != WITHIN_NOISE]
    parts = beyond or parts[:1]  # parts within the noise explain nothing (the largest stays)
    return [(r.detail, r.change, _with_devices(d, r.detail, _evidence(d, r.detail)))
            for r in parts[:3]]  # fmt: skip


def _with_devices(d: Diff, part: str, evidence: str) -> str:
    """With several GPUs on both sides: the part's per-step change on each GPU, so a
    change that rose on one and fell on another is not read as one number."""
    per = _device_changes(d, part)
    if len(per) < 2:
        return evidence
    text = ", ".join(f"GPU {dev} {_signed_ms(c)}" for dev, c in per)
    return f"{evidence}; per GPU: {text}" if evidence else f"per GPU: {text}"


def _device_changes(d: Diff, part: str) -> list[tuple[int, float]]:
    b, a = d.before.budget, d.after.budget
    if b is None or a is None or len(b.devices) < 2 or len(a.devices) < 2:
        return []
    after = {x.device: x for x in a.devices}
    out = []
    for x in b.devices:
        y = after.get(x.device)
        if y is not None and x.steps and y.steps:
            out.append(
                (x.device, y.steady.ns[part] / len(y.steps) - x.steady.ns[part] / len(x.steps))
            )
    return out


def _signed_ms(ns: float) -> str:
    return f"{'+' if ns >= 0 else '−'}{fmt.duration(abs(ns))}"


def _evidence(d: Diff, part: str) -> str:
    b, a = d.before, d.after
    if part in ("cpu_bound", "other"):
        kb = sum(x.count for x in b.kernels.values()) / max(b.n_steps, 1)
        ka = sum(x.count for x in a.kernels.values()) / max(a.n_steps, 1)
        return f"kernels per step {kb:,.0f} → {ka:,.0f}"
    if part in ("compute", "comm"):  # compute by compute kernels, comm by NCCL-type ones
        comm = part == "comm"
        rows = [r for r in d.kernels if bool(COMM_KERNEL.search(r.name)) == comm]
        return _most("kernel", rows[:1])
    if part == "copy":
        return _most("copies", d.copies[:1])
    if part == "sync":
        calls = [r for r in d.api if "ynchronize" in r.name or r.name.startswith("cudaMemcpy")]
        return _most("sync call", calls[:1])
    if part == "data":
        return f"data wait per step {_ms(b.part_per_step('data'))} → {_ms(a.part_per_step('data'))}"
    return ""


def _most(what: str, rows: list[Row]) -> str:
    if not rows:
        return ""
    r = rows[0]
    b = "none" if r.before is None else _ms(r.before)
    a = "none" if r.after is None else _ms(r.after)
    return f"most changed {what}: {fmt.clean(base_name(r.name), 80)} {b} → {a}"


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.2f} ms"


def _notes(before: Side, after: Side) -> list[str]:
    """What can and cannot be compared, one sentence each."""
    notes = []
    for name, side in (("before", before), ("after", after)):
        if not side.events:
            notes.append(f"{name} ({side.path}) holds no GPU work or CUDA calls: nothing "
                         "of it can be compared")  # fmt: skip
        elif not side.n_steps:
            notes.append(f"{name} has no steady steps (no step ranges and no repeating "
                         "kernel pattern): step time and the budget cannot be compared; "
                         "kernels, copies and calls are whole-report totals")  # fmt: skip
    if before.tool and after.tool and before.tool != after.tool:
        notes.append(f"captured by different tools ({before.tool} vs {after.tool}): "
                     "kernels, copies and the GPU parts of the budget compare; "
                     "host-side time (CPU-bound, CUDA API calls, so step time too) carries "
                     "each profiler's own overhead (torch.profiler records every operator), "
                     "and calls that only one tool records appear or vanish")  # fmt: skip
    unnamed = [n for n, s in (("before", before), ("after", after)) if s.events and not s.gpus]
    if unnamed:
        notes.append(f"the GPU model of {' and '.join(unnamed)} is not recorded: whether "
                     "the two ran on the same GPU cannot be told")  # fmt: skip
    if before.gpus and after.gpus and before.gpus != after.gpus:
        notes.append(f"different GPUs ({', '.join(before.gpus)} vs {', '.join(after.gpus)}): "
                     "kernel times compare the hardware as well as the change")  # fmt: skip
    if before.n_steps and after.n_steps:
        if before.n_steps != after.n_steps:
            notes.append(f"different step counts ({before.n_steps} vs {after.n_steps} steady "
                         "steps): figures are per step")  # fmt: skip
        if before.budget and after.budget and before.budget.method != after.budget.method:
            notes.append(f"steps found differently (before: {before.method}; after: "
                         f"{after.method}): step time compares; where a step begins may "
                         "differ, and a data wait is only seen with a data range")  # fmt: skip
    return notes


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


def to_json(d: Diff) -> dict[str, Any]:
    def side(s: Side) -> dict[str, Any]:
        return {
            "path": s.path,
            "gpus": s.gpus,
            "steps_method": s.budget.method if s.budget is not None else None,
            "steady_steps": s.n_steps,
            "median_step_ns": s.median_ns if s.n_steps else None,
            "mad_ns": s.mad_ns,
            "iqr_ns": s.iqr_ns,
        }

    rows = []
    for r in d.rows():
        j = r.to_json()
        if r.section == "findings":
            j["status"] = finding_status(r)
        rows.append(j)
    return {
        "verdict": d.verdict,
        "change_ns": d.change_ns,
        "change_pct": _round(d.change_pct),
        "noise_ns": d.noise_ns,
        "per_step": d.per_step,
        "reasons": [{"part": p, "change_ns": c, "evidence": e} for p, c, e in d.reasons],
        "notes": d.notes,
        "before": side(d.before),
        "after": side(d.after),
        "rows": rows,
    }
