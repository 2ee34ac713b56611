"""A set of per-rank results put together: rank numbers, a common clock, the ranks table and
the straggler (the reduce step of `tuiperf ranks`).

* Ranks: from the file names (`rank3`, `rank_3`) when every report has a distinct one, else
  from the reports (torch.profiler's distributedInfo) when every one has it, else the order
  of the paths. nsys exports keep no per-process environment (no RANK/LOCAL_RANK).
* Clock: each report counts from its own start. A blocking collective ends at the same moment
  on every rank, so the clocks are aligned on the end of each steady step's first collective
  (per rank, the median offset to the lowest rank); without collectives each report keeps its
  own zero (the session start) and the table says so.
* Straggler: the rank the others wait for. Its work between two collectives is the longest
  while its own time inside them is the shortest: the others sit in the collective until it
  arrives. It is named only when both hold, with the numbers and how often it arrived last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tuiperf.analysis.ranks.summary import STEP_COLUMNS, RankResult
from tuiperf.analysis.ranks.waits import Wait, waits
from tuiperf.model import fmt

#: the straggler's work between collectives must exceed the others' median by this factor
STRAGGLER_WORK = 1.10
#: the clock alignment
CLOCK_COLLECTIVE = "the end of each steady step's first collective"
CLOCK_SESSION = "each report's own start (no collective to align on)"
CLOCK_ONE = "the report's own clock (every rank is in one report)"


@dataclass(frozen=True)
class Straggler:
    rank: int
    work_ns: int  # its median work between collectives
    others_work_ns: int
    inside_ns: int  # its median time inside a collective
    others_inside_ns: int
    last_arrivals: int  # steps in which it reached the collective last (aligned clocks)
    steps: int

    @property
    def evidence(self) -> str:
        return (
            f"rank {self.rank} works {fmt.duration(self.work_ns)} between collectives "
            f"(others {fmt.duration(self.others_work_ns)}) and spends "
            f"{fmt.duration(self.inside_ns)} inside each (others "
            f"{fmt.duration(self.others_inside_ns)}: waiting for it); it reaches the "
            f"collective last in {self.last_arrivals} of {self.steps} steps"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "work_between_collectives_ns": self.work_ns,
            "others_work_between_collectives_ns": self.others_work_ns,
            "inside_collective_ns": self.inside_ns,
            "others_inside_collective_ns": self.others_inside_ns,
            "last_arrivals": self.last_arrivals,
            "steps": self.steps,
            "evidence": self.evidence,
        }


@dataclass
class RankSet:
    ranks: list[RankResult]  # by rank
    rank_from: str  # "file name", "report (distributedInfo)" or "order"
    clock: str
    offsets: dict[int, int]  # rank -> ns to subtract from its times to reach rank 0's clock
    straggler: Straggler | None
    verdict: str  # the straggler's evidence, or why none is named
    #: ranks that wait in one collective of the step, step after step
    waits: list[Wait] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        """The ranks table: one row per rank, ns. Its step is the median step (RankResult.
        median_step), step_ns = compute_ns + exposed_comm_ns + copy_ns + idle_ns exactly;
        comm_ns is all its communication, hidden or not; the collective times are medians
        over every collective of the steady steps."""
        out = []
        for r in self.ranks:
            work, inside = r.work_before(), r.inside()
            med = r.median_step()
            out.append({
                "rank": r.rank,
                "report": r.path,
                "pid": r.pid,
                "steps": len(r.labels),
                "step_ns": med["wall_ns"],
                "compute_ns": med["compute_ns"],
                "exposed_comm_ns": med["exposed_ns"],
                "copy_ns": med["copy_ns"],
                "idle_ns": med["idle_ns"],
                "comm_ns": med["comm_ns"],
                "work_before_collective_ns": int(np.median(work)) if len(work) else None,
                "inside_collective_ns": int(np.median(inside)) if len(inside) else None,
                "comm_source": r.comm_source or "none",
                "collectives": " ".join(
                    f"{k}:{n}" for k, (n, _) in sorted(r.collectives.items())
                ),
                "clock_offset_ns": self.offsets.get(r.rank, 0),
                "straggler": self.straggler is not None and self.straggler.rank == r.rank,
            })  # fmt: skip
        return out

    def step_rows(self, r: RankResult) -> dict[str, Any]:
        """One rank's steady steps as columns (aligned start times)."""
        off = self.offsets.get(r.rank, 0)
        return {
            "rank": [r.rank] * len(r.labels),
            "label": list(r.labels),
            "start_ns": r.starts.tolist(),
            "aligned_start_ns": (r.starts - off).tolist(),
            **{c: r.steps[c].tolist() for c in STEP_COLUMNS},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "ranks": self.rows(),
            "rank_from": self.rank_from,
            "clock": self.clock,
            "straggler": None if self.straggler is None else self.straggler.to_json(),
            "verdict": self.verdict,
            "waits": [w.to_json() for w in self.waits],
            "comm_kernels": {str(r.rank): r.comm_kernels for r in self.ranks},
        }


def assemble(results: list[RankResult], paths_order: list[str]) -> RankSet:
    """Number the ranks, align their clocks, name the straggler."""
    rank_from = _number(results, paths_order)
    results = sorted(results, key=lambda r: r.rank)
    offsets, clock = _align(results)
    straggler, verdict = _straggler(results, offsets)
    found = waits(results)
    if straggler is None and found:  # "the others do not wait" must not hide these
        verdict = verdict.split(" but the others do not wait for it")[0]
        verdict += "; but " + "; ".join(w.text for w in found)
    apart = different_runs(results)
    if apart:
        verdict = f"{apart} {verdict}"
    return RankSet(results, rank_from, clock, offsets, straggler, verdict, found)


#: ranks of one job step together: median step times this far apart are different runs
SAME_RUN_STEP_RATIO = 2.0


def different_runs(results: list[RankResult]) -> str:
    """A warning when the reports do not look like ranks of one job ("" when they do):
    different collectives, different step markers, or step times over 2x apart."""
    if len(results) < 2:
        return ""
    why = []
    kinds = {frozenset(r.collectives) for r in results}
    if len(kinds) > 1:
        why.append("their collectives differ")
    if len({r.step_source for r in results}) > 1:
        why.append("their steps come from different markers")
    med = [r.median("wall_ns") for r in results if len(r.labels)]
    if med and min(med) > 0 and max(med) > SAME_RUN_STEP_RATIO * min(med):
        why.append(f"their median steps differ {max(med) / min(med):.1f}x")
    if not why:
        return ""
    return (
        f"These reports may not be ranks of one run ({'; '.join(why)}): compare them with "
        "tuiperf diff instead."
    )


def _number(results: list[RankResult], order: list[str]) -> str:
    for attr, said in (("name_rank", "file name"), ("meta_rank", "report (distributedInfo)")):
        got = [getattr(r, attr) for r in results]
        if None not in got and len(set(got)) == len(got):
            for r, n in zip(results, got, strict=True):
                r.rank, r.rank_from = int(n), said
            return said
    pos = {p: i for i, p in enumerate(order)}
    split = any(r.proc_index is not None for r in results)
    said = "process order in the report (by GPU, then pid)" if split else "order"
    ranked = sorted(results, key=lambda r: (pos[r.path], r.proc_index or 0))
    for i, r in enumerate(ranked):
        r.rank, r.rank_from = i, said
    return said


def _align(results: list[RankResult]) -> tuple[dict[int, int], str]:
    ends = {}
    for r in results:
        _, e = r.step_collectives()
        ends[r.rank] = (r.labels, e)
    base_labels, base = ends[results[0].rank]
    if len({r.path for r in results}) == 1:
        return {r.rank: 0 for r in results}, CLOCK_ONE
    if len(results) < 2 or not (base >= 0).any():
        return {r.rank: 0 for r in results}, CLOCK_SESSION
    offsets = {}
    for r in results:
        labels, e = ends[r.rank]
        a, b = _matched(base_labels, base, labels, e)
        if len(a) == 0:
            return {x.rank: 0 for x in results}, CLOCK_SESSION
        offsets[r.rank] = int(np.median(b - a))
    return offsets, CLOCK_COLLECTIVE


def _matched(
    la: list[str], a: np.ndarray, lb: list[str], b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The two ranks' per-step values for the same steps (by label when they share labels,
    else by position), where both have one."""
    if set(la) & set(lb):
        ib = {lab: i for i, lab in enumerate(lb)}
        pairs = [(i, ib[lab]) for i, lab in enumerate(la) if lab in ib]
    else:
        pairs = [(i, i) for i in range(min(len(la), len(lb)))]
    x = np.array([a[i] for i, _ in pairs], np.int64)
    y = np.array([b[j] for _, j in pairs], np.int64)
    ok = (x >= 0) & (y >= 0)
    return x[ok], y[ok]


def _straggler(results: list[RankResult], offsets: dict[int, int]) -> tuple[Straggler | None, str]:
    if len(results) < 2:
        return None, "one rank: nothing to compare"
    have = [r for r in results if len(r.coll_starts) >= 2]
    if len(have) < 2:
        return None, "no straggler named: fewer than two ranks show collectives"
    work = {r.rank: float(np.median(r.work_before())) for r in have}
    inside = {r.rank: float(np.median(r.inside())) for r in have}
    cand = max(work, key=lambda k: work[k])
    others = [k for k in work if k != cand]
    o_work = float(np.median([work[k] for k in others]))
    o_inside = float(np.median([inside[k] for k in others]))
    if work[cand] < STRAGGLER_WORK * o_work or inside[cand] >= o_inside:
        return None, (
            f"no straggler: rank {cand} works longest between collectives "
            f"({fmt.duration(work[cand])}, others {fmt.duration(o_work)}) but the others "
            "do not wait for it"
        )
    last, n = _last_arrivals(have, offsets, cand)
    s = Straggler(cand, int(work[cand]), int(o_work), int(inside[cand]), int(o_inside), last, n)
    return s, s.evidence


def _last_arrivals(have: list[RankResult], offsets: dict[int, int], cand: int) -> tuple[int, int]:
    """In how many steps `cand` reached the step's first collective last (aligned)."""
    base = next(r for r in have if r.rank == cand)
    s0, _ = base.step_collectives()
    latest_other = np.full(len(s0), np.iinfo(np.int64).min, np.int64)
    for r in have:
        if r.rank == cand:
            continue
        s, _ = r.step_collectives()
        a, b = _matched(base.labels, np.arange(len(s0)), r.labels, s)
        # a: indices into cand's steps; b: the other's start (its clock)
        aligned = b - offsets.get(r.rank, 0)
        latest_other[a] = np.maximum(latest_other[a], aligned)
    mine = s0 - offsets.get(cand, 0)
    ok = (s0 >= 0) & (latest_other > np.iinfo(np.int64).min)
    return int((mine[ok] > latest_other[ok]).sum()), int(ok.sum())
