"""Source hot spots of an Nsight Compute report (the Source Counters section's data, what
ncu's `--page source` prints): per SASS instruction the warp-stall samples and executed
instructions, the CUDA/Python line it came from where the report has line info (Triton
kernels, `-lineinfo` builds), and the instructions the source rules point at.

Read through `ncu_report`'s per-PC metrics (instanced metrics whose correlation ids are
instruction addresses), `IAction.sass_by_pc`, `source_info` and `source_files`; the
report is opened with `tuiperf.load.ncu.rep`'s public functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuiperf.errors import BadReportError

SAMPLES = "smsp__pcsamp_sample_count"
EXECUTED = "inst_executed"
STALL = "smsp__pcsamp_warps_issue_stalled_"


@dataclass
class SassLine:
    address: int
    sass: str
    samples: int = 0  # warp-stall samples, all (ncu: "Warp Stall Sampling (All Samples)")
    not_issued: int = 0  # samples of warps that were not issued
    executed: int | None = None  # warp-level instructions executed
    file: str | None = None
    line: int | None = None
    stalls: dict[str, int] = field(default_factory=dict)  # reason -> samples

    @property
    def top_stall(self) -> tuple[str, int] | None:
        if not self.stalls:
            return None
        reason = max(self.stalls, key=lambda r: self.stalls[r])
        return (reason, self.stalls[reason]) if self.stalls[reason] else None


@dataclass
class SourceLine:
    file: str
    line: int
    text: str
    samples: int = 0
    not_issued: int = 0
    instructions: int = 0  # SASS instructions of this line


@dataclass
class RuleLink:
    """A rule result and the instructions its per-instruction focus metric points at."""

    rule_id: str
    code_type: str  # the rule's type (optimization, warning, …)
    metric: str
    message: str
    addresses: list[tuple[int, float]]  # (address, value), largest first


@dataclass
class SourceHotSpots:
    kernel_id: int
    name: str
    sass: list[SassLine]  # by address
    lines: list[SourceLine]  # by file, line
    links: list[RuleLink]

    @property
    def samples(self) -> int:
        return sum(s.samples for s in self.sass)

    @property
    def start(self) -> int:
        return min((s.address for s in self.sass), default=0)

    def at(self, address: int) -> SassLine | None:
        return next((s for s in self.sass if s.address == address), None)


def _per_pc(action: Any, name: str) -> dict[int, float]:
    """An instanced metric by instruction address; empty when the report lacks it."""
    m = action.metric_by_name(name)
    if m is None or not m.has_correlation_ids():
        return {}
    ids = m.correlation_ids()
    return {int(ids.as_uint64(i)): m.as_double(i) for i in range(m.num_instances())}


def _stall_names(action: Any) -> list[str]:
    return sorted(n for n in action.metric_names() if n.startswith(STALL))


def hot_spots(action: Any, kernel_id: int) -> SourceHotSpots:
    """The source view of one profiled kernel (an `ncu_report` IAction)."""
    samples, executed = _per_pc(action, SAMPLES), _per_pc(action, EXECUTED)
    stalls: dict[str, dict[int, float]] = {}
    not_issued: dict[int, float] = {}
    for name in _stall_names(action):
        values = _per_pc(action, name)
        if name.endswith("_not_issued"):
            for pc, v in values.items():
                not_issued[pc] = not_issued.get(pc, 0.0) + v
        else:
            stalls[name[len(STALL) :]] = values
    sass = []
    for pc in sorted(set(samples) | set(executed)):
        info = action.source_info(pc)
        line = SassLine(
            pc,
            (action.sass_by_pc(pc) or "").strip(),
            int(samples.get(pc, 0)),
            int(not_issued.get(pc, 0)),
            int(executed[pc]) if pc in executed else None,
            info.file_name() if info is not None else None,
            info.line() if info is not None else None,
            {r: int(v[pc]) for r, v in stalls.items() if v.get(pc)},
        )
        sass.append(line)
    pcs = {s.address for s in sass}
    return SourceHotSpots(kernel_id, action.name(), sass, _lines(action, sass), _links(action, pcs))


def _lines(action: Any, sass: list[SassLine]) -> list[SourceLine]:
    files = dict(action.source_files() or {})
    texts = {f: str(body).splitlines() for f, body in files.items()}
    out: dict[tuple[str, int], SourceLine] = {}
    for s in sass:
        if s.file is None or s.line is None:
            continue
        key = (s.file, s.line)
        if key not in out:
            body = texts.get(s.file, [])
            text = body[s.line - 1].strip() if 0 < s.line <= len(body) else ""
            out[key] = SourceLine(s.file, s.line, text)
        row = out[key]
        row.samples += s.samples
        row.not_issued += s.not_issued
        row.instructions += 1
    return [out[k] for k in sorted(out)]


_TYPES = {1: "ok", 2: "optimization", 3: "warning", 4: "error"}


def _links(action: Any, pcs: set[int]) -> list[RuleLink]:
    """Rule results whose focus metrics are per-instruction metrics of this kernel (their
    correlation ids are instruction addresses: not opcodes, not a single launch value)."""
    from tuiperf.model.ncu.metrics import render_message

    out = []
    for d in action.rule_results_as_dicts():
        msg = d.get("rule_message") or {}
        for f in d.get("focus_metrics") or ():
            values = _per_pc(action, str(f.get("name") or ""))
            if not values or not set(values) <= pcs:
                continue
            hot = sorted(((pc, v) for pc, v in values.items() if v > 0), key=lambda t: -t[1])
            if hot:
                kind = _TYPES.get(int(msg.get("type") or 0), "ok")
                text = render_message(str(msg.get("message") or ""))
                out.append(RuleLink(str(d.get("rule_identifier") or ""), kind,
                                    str(f.get("name")), text, hot))  # fmt: skip
    return out


def read_hot_spots(path: Path, kernel_ids: list[int]) -> dict[int, SourceHotSpots]:
    """Source hot spots of the given kernels (ncu IDs) of an `.ncu-rep`."""
    from tuiperf.load.ncu.open import ncu_kind
    from tuiperf.load.ncu.rep import actions, open_context

    if ncu_kind(path) != "ncu-rep":
        raise BadReportError(f"{path}: source counters are read from the .ncu-rep itself, "
                             "not from a CSV export")  # fmt: skip
    acts = actions(open_context(path))
    out = {}
    for kid in kernel_ids:
        if not 0 <= kid < len(acts):
            raise BadReportError(f"{path}: no kernel with ID {kid}")
        out[kid] = hot_spots(acts[kid], kid)
    return out
