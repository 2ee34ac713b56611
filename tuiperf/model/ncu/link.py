"""Which Nsight Compute result belongs to which kernel launch of an nsys trace.

A launch links to an ncu result only when both name the same kernel exactly (nsys
`mangledName` = ncu's NameBase_MANGLED; by the normalized demangled name when the trace has
no mangled names, as torch.profiler's) and launch it with the same grid and block. Weaker
matches (the same short name only, or the same name with another launch configuration)
are `similar_of`: shown as "similar, not linked", never linked. Where several ncu results
share the name, each launch is narrowed step by step, as long as a step leaves a candidate:

1. launch configuration: the ncu results with the same grid and block (required);
2. NVTX context: the push/pop ranges open on the launching thread at the launch (the CUDA
   API call), compared first exactly, then with numbers ignored (`step 3` ~ `step 7`).
   ncu records the stack per thread, so a launch from PyTorch's autograd thread has an
   empty stack on both sides. When some launches match the context, the others (another
   call site, such as the backward launches of a forward kernel) stay unlinked;
3. order: ncu numbers the launches it profiled in launch order, and a capture usually takes
   the first N launches of a range (`--launch-count`, `--nvtx-include`); so within one
   instance of the innermost range, the k-th launch of the kernel goes to the k-th of the
   remaining candidates, for the first len(candidates) launches (for one candidate, in its
   exact range instance only: the launch that was profiled). Where there is no NVTX context
   to compare (ncu recorded none, or neither the result nor the launch has a range open),
   the whole run is that instance: consecutive results of a kernel take its consecutive
   launches (LAUNCH_ORDER, or ORDER for empty stacks on both sides). A launch whose context
   matches no result's (ncu recorded one, and it differs) is never ordered: ncu did not
   profile there.

Headless: numpy and Arrow only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model import arrays as A
from tuiperf.model.ncu.groups import KernelGroup, groups, has_mangled
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.model.ncu.names import normalize
from tuiperf.model.trace import Trace

#: how closely a launch was matched (higher is closer)
NONE, NAME, MANGLED, LAUNCH, LAUNCH_ORDER, NVTX_LOOSE, NVTX, ORDER = range(8)
LEVEL_TEXT = {
    NONE: "no ncu result",
    NAME: "same demangled name",
    MANGLED: "same mangled name",
    LAUNCH: "same name and launch configuration",
    LAUNCH_ORDER: "same name and launch configuration, and launch order (no NVTX context)",
    NVTX_LOOSE: "same launch configuration and NVTX ranges (numbers ignored)",
    NVTX: "same launch configuration and NVTX ranges",
    ORDER: "same NVTX range instance and launch order",
}
#: the same, in a few words (narrow tables)
LEVEL_SHORT = {
    NONE: "none",
    NAME: "name",
    MANGLED: "mangled name",
    LAUNCH: "name + grid/block",
    LAUNCH_ORDER: "+ launch order",
    NVTX_LOOSE: "+ NVTX (loose)",
    NVTX: "+ NVTX ranges",
    ORDER: "+ NVTX + order",
}
#: the instance of launches with no NVTX context to compare: the whole run (ordered)
_RUN = -1
#: the instance of launches whose context matches no result's: none (never ordered)
_NO_INSTANCE = -2
_DIMS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
_NUMBER = re.compile(r"\d+")


@dataclass
class NcuLink:
    """The links between the kernels table of a trace and the kernels of an ncu report."""

    #: per nsys kernel row: index into `choices` (-1: no ncu result)
    choice_of_row: np.ndarray
    #: distinct tuples of ncu kernel ids, best match first
    choices: list[tuple[int, ...]]
    #: per nsys kernel row: the match level (NONE … ORDER)
    level_of_row: np.ndarray
    #: ncu kernel id -> the nsys kernel rows it may describe (sorted)
    rows_of: dict[int, np.ndarray] = field(default_factory=dict)
    #: nsys kernel name -> the ncu kernel ids of its launches
    by_name: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: ncu kernels that match no launch in the trace
    unmatched_ncu: list[int] = field(default_factory=list)
    #: nsys kernel names that have no ncu result
    unmatched_nsys: list[str] = field(default_factory=list)
    #: "mangled name" or "kernel name": what step 0 matched on
    matched_on: str = "mangled name"
    #: ncu kernel id -> launches that are like it but not linked (same short name only, or
    #: the same name with another grid/block)
    similar_of: dict[int, np.ndarray] = field(default_factory=dict)

    def similar_for(self, kernel_id: int) -> np.ndarray:
        return self.similar_of.get(kernel_id, np.zeros(0, np.int64))

    @property
    def linked_ids(self) -> list[int]:
        """ncu results linked to at least one launch (the count every view shows)."""
        return sorted(self.rows_of)

    def count_line(self, total: int) -> str:
        """`3 of 30 ncu results linked to 760 of 11,775 launches (same mangled name and
        grid/block); 5 more similar, not linked`: the sentence the viewer and `info` show."""
        how = "same mangled name" if self.matched_on == "mangled name" else "same name"
        launches = len(self.choice_of_row)
        line = (
            f"{len(self.linked_ids):,} of {total:,} ncu results linked to "
            f"{int(self.mask.sum()):,} of {launches:,} launches ({how} and grid/block)"
        )
        alike = [k for k in self.similar_of if k not in self.rows_of]
        if alike:
            line += f"; {len(alike):,} more similar, not linked"
        return line

    def note_for(self, kernel_id: int) -> str:
        """What the trace holds of one ncu result, in a sentence."""
        n, alike = len(self.rows_for(kernel_id)), len(self.similar_for(kernel_id))
        if n:
            return f"{n:,} launches in the nsys report; Enter jumps to them"
        if alike:
            return (
                f"not linked: {alike:,} launches in the nsys report are similar (the same short "
                "name, or the same kernel with another grid/block), not this launch"
            )
        return "no launch of this kernel in the nsys report (unmatched)"

    def ids_for_row(self, row: int) -> tuple[int, ...]:
        if not 0 <= row < len(self.choice_of_row):
            return ()
        c = int(self.choice_of_row[row])
        return self.choices[c] if c >= 0 else ()

    def best_for_row(self, row: int) -> int | None:
        ids = self.ids_for_row(row)
        return ids[0] if ids else None

    def level(self, row: int) -> int:
        if not 0 <= row < len(self.level_of_row):
            return NONE
        return int(self.level_of_row[row])

    def has(self, row: int) -> bool:
        return bool(self.ids_for_row(row))

    @property
    def mask(self) -> np.ndarray:
        """Per nsys kernel row: True where an ncu result matches."""
        return self.choice_of_row >= 0

    def rows_for(self, kernel_id: int) -> np.ndarray:
        return self.rows_of.get(kernel_id, np.zeros(0, np.int64))

    def exact_rows_for(self, kernel_id: int) -> np.ndarray:
        """The launches most likely profiled: matched to this result alone by launch
        order (in its range instance, or in the run without NVTX contexts), else those in
        the same NVTX ranges, else all."""
        rows = self.rows_for(kernel_id)
        for levels in ((ORDER, LAUNCH_ORDER), (NVTX,)):
            one = [
                r
                for r in rows.tolist()
                if self.level(r) in levels and self.ids_for_row(r) == (kernel_id,)
            ]
            if one:
                return np.array(one, np.int64)
        return rows

    def jump_rows_for(self, kernel_id: int) -> np.ndarray:
        """The launches to step through from an ncu result: the profiled one(s) first,
        then its other launches in the trace, in row (start) order."""
        exact = self.exact_rows_for(kernel_id)
        rest = np.setdiff1d(self.rows_for(kernel_id), exact)
        return np.concatenate((exact, rest)).astype(np.int64)

    def describe(self, row: int) -> str:
        ids = self.ids_for_row(row)
        if not ids:
            return LEVEL_TEXT[NONE]
        what = LEVEL_TEXT[self.level(row)]
        if len(ids) == 1:
            return f"ncu ID {ids[0]} ({what})"
        return f"{len(ids)} ncu results: IDs {', '.join(map(str, ids))} ({what})"


# --- building ------------------------------------------------------------------------------


@dataclass
class _Launches:
    """The columns of the trace's kernels table that matching reads, as numpy."""

    n: int
    config: np.ndarray  # code of (grid, block) per row
    configs: list[tuple[int, ...]]
    start: np.ndarray
    launch: np.ndarray  # launch time: the API call's start, else the kernel's
    pid: np.ndarray
    tid: np.ndarray
    thread: np.ndarray  # pid and tid both known (a null id is no thread: no NVTX context)


def _launches(trace: Trace) -> _Launches:
    k = trace.table("kernels")
    n = k.num_rows
    dims = np.stack([A.ints(k, c, -1) for c in _DIMS], axis=1) if n else np.zeros((0, 6))
    uniq, inv = np.unique(dims, axis=0, return_inverse=True)
    start, pid = A.ints(k, "start"), A.ints(k, "pid")
    launch = start.copy()
    api = trace.table("api")
    if n and api.num_rows:  # the launching call: same pid and correlation id, both known
        key = A.pid_corr_key(pid, A.ints(k, "correlation_id"))
        calls = np.flatnonzero(A.known(api, "pid", "correlation_id"))
        akey = A.pid_corr_key(A.ints(api, "pid"), A.ints(api, "correlation_id"))[calls]
        hit = A.first_match(key, akey)
        ok = (hit >= 0) & A.known(k, "pid", "correlation_id")
        launch[ok] = A.ints(api, "start")[calls[hit[ok]]]
    configs = [tuple(int(v) for v in u) for u in uniq]
    thread = A.known(k, "pid", "tid")
    return _Launches(n, inv.reshape(-1), configs, start, launch, pid, A.ints(k, "tid"), thread)


class _Nvtx:
    """Push/pop ranges per (pid, tid), for 'which ranges were open at t'."""

    def __init__(self, trace: Trace) -> None:
        t = trace.table("nvtx")
        self.by_thread: dict[tuple[int, int], tuple[np.ndarray, ...]] = {}
        if t.num_rows == 0:
            return
        style = pc.cast(t["style"], pa.string())
        t = t.filter(pc.fill_null(pc.equal(style, "PushPop"), False))
        t = t.filter(A.known(t, "pid", "tid"))  # a range on no known thread is no context
        start, pid, tid = A.ints(t, "start"), A.ints(t, "pid"), A.ints(t, "tid")
        end = np.where(A.ints(t, "end", -1) < 0, start, A.ints(t, "end"))
        depth = A.ints(t, "depth")
        text = np.array(A.strings(t, "text"), dtype=object) if t.num_rows else np.zeros(0, object)
        for key in set(zip(pid.tolist(), tid.tolist(), strict=True)):
            m = (pid == key[0]) & (tid == key[1])
            self.by_thread[key] = (start[m], end[m], depth[m], text[m])

    def at(self, pid: int, tid: int, t: int) -> tuple[tuple[str, ...], int]:
        """The open ranges (outermost first) and the start of the innermost one (-1: none)."""
        arrays = self.by_thread.get((pid, tid))
        if arrays is None:
            return (), -1
        start, end, depth, text = arrays
        hit = np.flatnonzero((start <= t) & (end > t))
        if len(hit) == 0:
            return (), -1
        hit = hit[np.lexsort((start[hit], depth[hit]))]
        return tuple(text[hit].tolist()), int(start[hit[-1]])


def _loose(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_NUMBER.sub("#", p) for p in path)


def build_link(trace: Trace, km: KernelMetrics) -> NcuLink:
    """Match every kernel launch of `trace` to the ncu results that describe it."""
    kt = trace.table("kernels")
    n = kt.num_rows
    choice = np.full(n, -1, np.int64)
    level = np.zeros(n, np.int8)
    choices: list[tuple[int, ...]] = []
    index: dict[tuple[int, ...], int] = {}
    gs = groups(km, trace) if n and len(km) else []  # weighed once, used twice below
    matched_on, pairs = _name_groups(trace, km, gs)

    def assign(rows: np.ndarray, ids: tuple[int, ...], lv: int) -> None:
        if len(rows) == 0:
            return
        c = index.get(ids)
        if c is None:
            c = index[ids] = len(choices)
            choices.append(ids)
        choice[rows], level[rows] = c, lv

    similar: dict[int, list[np.ndarray]] = {}

    def alike(rows: np.ndarray, ids: list[int]) -> None:
        for kid in ids:
            similar.setdefault(kid, []).append(np.asarray(rows, np.int64))

    if pairs and n:
        launches, nvtx = _launches(trace), _Nvtx(trace)
        for ids, rows in pairs:
            _narrow(km, ids, rows, launches, nvtx, assign, alike)
    for g in gs:  # the same kernel with another launch configuration, or a short name only
        if g.similar_rows is not None:
            alike(g.similar_rows, g.ids)
    link = _finish(km, kt, choice, level, choices, matched_on)
    for kid, parts in similar.items():
        rows = np.setdiff1d(np.concatenate(parts), link.rows_for(kid))
        if len(rows):
            link.similar_of[kid] = rows
    return link


def _name_groups(
    trace: Trace, km: KernelMetrics, gs: list[KernelGroup]
) -> tuple[str, list[tuple[list[int], Any]]]:
    """(what matched, [(ncu ids sorted, nsys rows)]) by mangled name (the groups `gs`
    already hold those rows), else by name."""
    kt = trace.table("kernels")
    if kt.num_rows == 0 or len(km) == 0:
        return "mangled name", []
    if has_mangled(kt) and any(km.kernels.column("mangled").to_pylist()):
        return "mangled name", [(sorted(g.ids), g.nsys_rows) for g in gs if g.nsys_rows is not None]
    codes, values = A.codes(kt, "name")
    by_key: dict[str, list[int]] = {}
    for c, v in enumerate(values):
        by_key.setdefault(normalize(v), []).append(c)
    ncu: dict[str, list[int]] = {}
    for kid, dem, name in zip(
        km.kernel_ids(),
        km.kernels.column("demangled").to_pylist(),
        km.kernels.column("name").to_pylist(),
        strict=True,
    ):
        ncu.setdefault(normalize(dem or name or ""), []).append(kid)
    out = []
    for key, ids in ncu.items():
        cs = by_key.get(key)
        if cs:
            out.append((sorted(ids), np.flatnonzero(np.isin(codes, cs))))
    return "kernel name", out


def _config_of(km: KernelMetrics, kid: int) -> tuple[int, ...] | None:
    k = km.kernel(kid)
    if k.grid is None or k.block is None:
        return None
    return (*k.grid, *k.block)


def _narrow(
    km: KernelMetrics,
    ids: list[int],
    rows: np.ndarray,
    la: _Launches,
    nvtx: _Nvtx,
    assign: Any,
    alike: Any,
) -> None:
    """Link the launches of one kernel name to its ncu results, closest match first.

    A launch whose launch configuration and NVTX context match an ncu result takes it; the
    other launches of the name stay unlinked (another call site: ncu did not profile
    them, e.g. the backward launches of a forward kernel). Only when no launch matches the
    context does the configuration alone decide. Launches with another grid or block are
    never linked: they go to `alike` (similar, not linked).
    """
    rows = np.asarray(rows, np.int64)
    configs = {kid: _config_of(km, kid) for kid in ids}
    # one dict over all configurations: a result without a grid (any configuration) is
    # ordered once over all its launches, not once per configuration
    buckets: dict[tuple[tuple[int, ...], int, int], list[int]] = {}
    for code in np.unique(la.config[rows]).tolist():
        sub = rows[la.config[rows] == code]
        cands = [kid for kid in ids if configs[kid] in (None, la.configs[code])]
        if cands:
            for key, rs in _contexts(km, cands, sub, la, nvtx).items():
                buckets.setdefault(key, []).extend(rs)
        else:
            alike(sub, ids)
    by_context = any(lv > LAUNCH for (_, lv, _) in buckets)
    for (bids, lv, inner), rs in buckets.items():
        if by_context and lv <= LAUNCH:
            continue
        _assign_in_order(np.array(rs, np.int64), bids, lv, inner, la, assign)


def _contexts(
    km: KernelMetrics, cands: list[int], rows: np.ndarray, la: _Launches, nvtx: _Nvtx
) -> dict[tuple[tuple[int, ...], int, int], list[int]]:
    """Launches grouped by (the candidates their NVTX context matches, level, instance).
    The context is the push/pop stack open on the launching thread, as ncu records it per
    thread: a launch from PyTorch's autograd thread has none there, as its ncu result has
    none (the main thread's `backward` range is not on that thread). The instance is the
    innermost range's start; `_RUN` where there is no context to compare (empty stacks on
    both sides, or a capture without NVTX); `_NO_INSTANCE` where ncu recorded contexts and
    this launch's matches none of the candidates' (a launch from an unknown thread, with a
    null pid or tid, has an unknown context: it matches none)."""
    paths = {kid: tuple(km.kernel(kid).nvtx) for kid in cands}
    recorded = km.has_nvtx()  # an ncu capture without --nvtx has no contexts to compare
    buckets: dict[tuple[tuple[int, ...], int, int], list[int]] = {}
    for r in rows.tolist():
        path: tuple[str, ...] | None = None  # launched from no known thread: unknown,
        inner = _RUN  # which equals no recorded context, not even an empty one
        if la.thread[r]:
            path, inner = nvtx.at(int(la.pid[r]), int(la.tid[r]), int(la.launch[r]))
        exact = tuple(k for k in cands if recorded and paths[k] == path)
        loose = tuple(k for k in cands if path and _loose(paths[k]) == _loose(path))
        if exact:
            ids, lv = exact, NVTX
        elif loose:
            ids, lv = loose, NVTX_LOOSE
        else:
            ids, lv = tuple(cands), LAUNCH
        if lv == LAUNCH:
            inner = _NO_INSTANCE if recorded else _RUN
        buckets.setdefault((ids, lv, inner), []).append(r)
    return buckets


def _assign_in_order(
    arr: np.ndarray, ids: tuple[int, ...], lv: int, inner: int, la: _Launches, assign: Any
) -> None:
    """Within one range instance (or the run, `_RUN`), the k-th launch goes to the k-th
    of the results."""
    # one result: ordered only in its own context (exact, or none on either side); in a
    # loosely matched range instance none of its launches was the profiled one
    by_order = len(ids) > 1 or lv != NVTX_LOOSE
    if inner != _NO_INSTANCE and by_order and len(arr) >= len(ids):
        arr = arr[np.argsort(la.start[arr], kind="stable")]
        first = ORDER if lv > LAUNCH else LAUNCH_ORDER
        for r, kid in zip(arr[: len(ids)].tolist(), ids, strict=True):
            assign(np.array([r], np.int64), (kid,), first)
        arr = arr[len(ids) :]
    assign(arr, ids, lv)


def _finish(
    km: KernelMetrics,
    kt: pa.Table,
    choice: np.ndarray,
    level: np.ndarray,
    choices: list[tuple[int, ...]],
    matched_on: str,
) -> NcuLink:
    rows_of: dict[int, list[np.ndarray]] = {}
    for c, ids in enumerate(choices):
        rows = np.flatnonzero(choice == c)
        for kid in ids:
            rows_of.setdefault(kid, []).append(rows)
    merged = {kid: np.sort(np.concatenate(parts)) for kid, parts in rows_of.items()}
    by_name: dict[str, set[int]] = {}
    unmatched: list[str] = []
    if kt.num_rows:
        codes, values = A.codes(kt, "name")
        for c, name in enumerate(values):
            sel = choice[codes == c]
            found = {kid for x in np.unique(sel[sel >= 0]).tolist() for kid in choices[x]}
            if found:
                by_name[name] = found
            elif len(sel):
                unmatched.append(name)
    return NcuLink(
        choice_of_row=choice,
        choices=choices,
        level_of_row=level,
        rows_of=merged,
        by_name={k: tuple(sorted(v)) for k, v in by_name.items()},
        unmatched_ncu=[kid for kid in km.kernel_ids() if kid not in merged],
        unmatched_nsys=sorted(unmatched),
        matched_on=matched_on,
    )


class LaneMarks:
    """Which timeline columns hold the start of a launch with an ncu result.

    Per lane, the starts of its matched launches are found once (cached); a frame then
    costs one binary search per column edge."""

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = mask
        self._starts: dict[int, np.ndarray] = {}

    def starts(self, key: int, starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
        hit = self._starts.get(key)
        if hit is None:
            ok = rows < len(self.mask)
            keep = np.zeros(len(rows), bool)
            keep[ok] = self.mask[rows[ok]]
            hit = self._starts[key] = starts[keep]
        return hit

    def columns(
        self, key: int, starts: np.ndarray, rows: np.ndarray, edges: np.ndarray
    ) -> np.ndarray:
        """Booleans, one per column between consecutive `edges` (int64 ns)."""
        s = self.starts(key, starts, rows)
        if len(s) == 0:
            return np.zeros(max(len(edges) - 1, 0), bool)
        idx = np.searchsorted(s, edges, "left")
        return np.diff(idx) > 0
