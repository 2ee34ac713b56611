"""Python call sites (issue 22): which line of the user's program made each host call.

The loaders keep the stacks as a tree of frames (`frames`) and the host calls that carry
one (`callsites`, see schema.py). Here: the *user frame* of a stack, its innermost frame
outside torch and the other frameworks, site-/dist-packages, the Python standard library,
built-in functions and tuiperf itself; and, for the rows of the api, kernels, memcpy,
memset and nvtx tables, the user frame of the call that issued them (nsys: the API call
with the same pid and correlation id; Kineto: the cpu_op with the same External id).
Everything is empty, and costs nothing, when the report has no stacks.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace

#: top-level packages that are not the user's code, as Kineto writes paths (relative to
#: their sys.path entry: `torch/nn/modules/module.py`)
FRAMEWORKS = frozenset(
    {"torch", "torchvision", "torchaudio", "torchgen", "functorch", "triton", "tuiperf"}
)
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
#: an interpreter's own library folder (`/usr/lib/python3.12/…`, `…/lib64/python3.11/…`)
_STDLIB_DIR = re.compile(r"/lib(64)?/python\d+(\.\d+)?t?/")
_OWN_DIR = str(Path(__file__).resolve().parents[2]) + "/"

#: value of a frame or row that has no user frame
NONE = -1


def is_user_file(path: str) -> bool:
    """Whether a frame in `path` is the user's code (not a framework, library or built-in)."""
    if not path or path.startswith(("<built-in", "<frozen", "<method")):
        return False
    p = path.replace("\\", "/")
    if p.startswith("<"):
        return True  # <string>, <stdin>, <ipython-input-…>: code the user typed
    parts = p.split("/")
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    if p.startswith("/"):
        return not (_STDLIB_DIR.search(p) or p.startswith(_OWN_DIR))
    top = parts[0].removesuffix(".py")
    return top not in FRAMEWORKS and top not in _STDLIB


@dataclass(frozen=True)
class Site:
    """A user frame: file, line and function."""

    file: str
    line: int
    function: str

    def text(self, full_path: bool = False) -> str:
        """`programs.py:140 (pybt)`: the file's name, unless `full_path`."""
        name = self.file if full_path else self.file.rsplit("/", 1)[-1]
        return f"{name}:{self.line} ({self.function})"


@dataclass
class Frames:
    """The frame tree as arrays: row i is frame `ids[i]`; `user[i]` the row of its user
    frame (itself or its nearest user caller), NONE when no frame of its stack is user code."""

    ids: np.ndarray
    parent: np.ndarray  # row of the caller, NONE at the root
    file: np.ndarray  # object arrays of str
    line: np.ndarray
    function: np.ndarray
    user: np.ndarray

    def row_of(self, frame_ids: np.ndarray) -> np.ndarray:
        """Rows of the given frame ids (NONE where unknown or null)."""
        if len(self.ids) == 0:
            return np.full(len(frame_ids), NONE, np.int64)
        order = np.argsort(self.ids, kind="stable")
        pos = np.minimum(np.searchsorted(self.ids[order], frame_ids), len(order) - 1)
        found = self.ids[order][pos] == frame_ids
        return np.where(found, order[pos], NONE)

    def site(self, row: int) -> Site | None:
        if row < 0:
            return None
        return Site(str(self.file[row]), int(self.line[row]), str(self.function[row]))

    def stack(self, row: int, limit: int = 64) -> list[Site]:
        """The frames from `row` out to the root, innermost first."""
        out: list[Site] = []
        while row >= 0 and len(out) < limit:
            out.append(Site(str(self.file[row]), int(self.line[row]), str(self.function[row])))
            row = int(self.parent[row])
        return out

    def module(self, row: int) -> str | None:
        """The innermost `nn.Module: X` mark around a frame (Kineto with_stack), if any."""
        for _ in range(len(self.ids)):  # a bounded walk, even over a damaged tree
            if row < 0:
                break
            fn = str(self.function[row])
            if fn.startswith("nn.Module: "):
                return fn.removeprefix("nn.Module: ")
            row = int(self.parent[row])
        return None


def frames_of(trace: Trace) -> Frames:
    """The report's frames with each one's user frame (cached on the trace)."""
    cached = trace.__dict__.get("_callsite_frames")
    if cached is None:
        cached = build_frames(trace.table("frames"))
        trace.__dict__["_callsite_frames"] = cached
    return cached


def build_frames(t: pa.Table) -> Frames:
    ids = A.ints(t, "frame_id", NONE)
    codes, paths = A.codes(t, "file")
    lut = np.array([*paths, ""], dtype=object)
    f = Frames(ids, np.zeros(0, np.int64), lut[codes], A.ints(t, "line", 0),
               A.strings(t, "function"), np.zeros(0, np.int64))  # fmt: skip
    f.parent = f.row_of(A.ints(t, "parent_id", NONE))
    is_user = np.array([is_user_file(p) for p in paths] + [False], dtype=bool)[codes]
    f.user = _user_rows(f.parent, is_user)
    return f


def _user_rows(parent: np.ndarray, is_user: np.ndarray) -> np.ndarray:
    """For each frame, the row of the nearest frame at or above it that is user code."""
    n = len(parent)
    user = np.where(is_user, np.arange(n), NONE)
    todo = ~is_user & (parent >= 0)
    up = parent.copy()
    for _ in range(n):  # one pass per stack level; stacks are a few dozen deep
        if not todo.any():
            break
        idx = np.flatnonzero(todo)
        p = up[idx]
        hit = is_user[p]
        user[idx[hit]] = p[hit]
        up[idx] = parent[p]
        todo[idx] = ~hit & (parent[p] >= 0)
    return user


# -- rows of the event tables -> their call site --------------------------------------------
def site_rows(trace: Trace, table: str) -> np.ndarray:
    """For each row of `table`, the frame row (Frames) of its call site's user frame;
    NONE where the report has no stack for it."""
    cache = trace.__dict__.setdefault("_callsite_rows", {})
    if table not in cache:
        cache[table] = _site_rows(trace, table)
    return cache[table]


def _site_rows(trace: Trace, table: str) -> np.ndarray:
    calls = trace.table("callsites")
    if calls.num_rows == 0:  # no stacks: nothing is read (not even deferred columns)
        return np.full(trace.table(table, ["start"]).num_rows, NONE, np.int64)
    t = trace.table(table)
    n = t.num_rows
    if n == 0:
        return np.zeros(0, np.int64)
    frames = frames_of(trace)
    frame_row = frames.row_of(A.ints(calls, "frame_id", NONE))
    user = np.where(frame_row >= 0, frames.user[np.maximum(frame_row, 0)], NONE)
    out = np.full(n, NONE, np.int64)
    if table == "callsites":
        return user
    if table == "api":
        # nsys: the backtrace is the API row's own (same start and thread); the driver call
        # nsys records inside a runtime call shares its correlation id but is not it
        cstart = np.where(A.ints(calls, "correlation_id", -1) >= 0, A.ints(calls, "start"), -2)
        hit = A.first_match(A.ints(t, "start"), cstart)
        at = np.maximum(hit, 0)
        same = (hit >= 0) & (A.ints(t, "tid", -1) == A.ints(calls, "tid", -1)[at])
        out = np.where(same, user[at], NONE)
    elif "correlation_id" in t.column_names:
        keys = A.pid_corr_key(A.ints(t, "pid", -1), A.ints(t, "correlation_id", -1))
        ckeys = A.pid_corr_key(A.ints(calls, "pid", -1), A.ints(calls, "correlation_id", -1))
        ckeys = np.where(A.ints(calls, "correlation_id", -1) >= 0, ckeys, -2)
        hit = A.first_match(keys, ckeys)
        out = np.where(hit >= 0, user[np.maximum(hit, 0)], NONE)
    if "external_id" in t.column_names:
        ext = A.ints(t, "external_id", -1)
        cext = A.ints(calls, "external_id", -1)
        hit = A.first_match(ext, np.where(cext >= 0, cext, -2))
        by_ext = np.where((hit >= 0) & (ext >= 0), user[np.maximum(hit, 0)], NONE)
        out = np.where(out >= 0, out, by_ext)
    return out


def sites_of(trace: Trace, table: str, rows: np.ndarray) -> list[tuple[Site, int]]:
    """The user frames of `rows` of `table`, each with how many of the rows it issued,
    most first (rows with no stack are left out)."""
    sr = site_rows(trace, table)[rows]
    sr = sr[sr >= 0]
    if len(sr) == 0:
        return []
    frames = frames_of(trace)
    uniq, counts = np.unique(sr, return_counts=True)
    order = np.lexsort((uniq, -counts))
    out = []
    for i in order:
        site = frames.site(int(uniq[i]))
        if site is not None:
            out.append((site, int(counts[i])))
    return _merge_same(out)


def site_texts(trace: Trace, table: str, rows: np.ndarray) -> list[str]:
    """`programs.py:140 (pybt)` for each row ('' where it has no stack; row -1 too)."""
    sr = site_rows(trace, table)
    frames = frames_of(trace)
    out = []
    for r in rows.tolist():
        site = frames.site(int(sr[r])) if 0 <= r < len(sr) else None
        out.append(site.text() if site is not None else "")
    return out


def modules_of(trace: Trace, table: str, rows: np.ndarray) -> list[tuple[str, int]]:
    """The innermost `nn.Module` around the call that issued each row, with counts, most
    first (Kineto with_stack only: nsys backtraces have no module marks)."""
    calls = trace.table("callsites")
    if calls.num_rows == 0 or len(rows) == 0:
        return []
    frames = frames_of(trace)
    leaf = frames.row_of(A.ints(calls, "frame_id", NONE))
    hit = _call_rows(trace, table)[rows]
    counts: dict[str, int] = {}
    memo: dict[int, str | None] = {}
    for h in hit[hit >= 0].tolist():
        fr = int(leaf[h])
        if fr not in memo:
            memo[fr] = frames.module(fr)
        m = memo[fr]
        if m is not None:
            counts[m] = counts.get(m, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _call_rows(trace: Trace, table: str) -> np.ndarray:
    """For each row of `table`, its callsites row by External id (Kineto), or -1."""
    t = trace.table(table)
    if "external_id" not in t.column_names:
        return np.full(t.num_rows, -1, np.int64)
    ext = A.ints(t, "external_id", -1)
    cext = A.ints(trace.table("callsites"), "external_id", -1)
    hit = A.first_match(ext, np.where(cext >= 0, cext, -2))
    return np.where(ext >= 0, hit, -1)


def _merge_same(items: list[tuple[Site, int]]) -> list[tuple[Site, int]]:
    """Frames of different stacks can be the same line: one entry each."""
    merged: dict[Site, int] = {}
    for site, n in items:
        merged[site] = merged.get(site, 0) + n
    return sorted(merged.items(), key=lambda kv: (-kv[1], kv[0].file, kv[0].line))


def sites_text(sites: list[tuple[Site, int]], limit: int = 3) -> str:
    """`programs.py:140 (pybt) 4x, programs.py:139 (pybt) 4x`."""
    parts = [f"{s.text()} {n:,}x" for s, n in sites[:limit]]
    if len(sites) > limit:
        parts.append(f"{len(sites) - limit} more")
    return ", ".join(parts)


def has_stacks(trace: Trace) -> bool:
    return trace.has("callsites")


def detail_fields(trace: Trace, table: str, row: int) -> list[tuple[str, str]]:
    """Label/value lines for the details pane: the source line of the call that made event
    `row` of `table`, and the user frames that called it ([] without a stack)."""
    if not has_stacks(trace) or table in ("frames", "callsites"):
        return []
    rows = site_rows(trace, table)
    if not 0 <= row < len(rows) or rows[row] < 0:
        return []
    frames = frames_of(trace)
    at = int(rows[row])
    site = frames.site(at)
    assert site is not None
    where = f"{site.file}:{site.line} in {site.function}"
    if trace.meta.format == "kineto":
        where += " (its def line: Kineto records no call lines)"
    out = [("Source", where)]
    callers = [s for s in frames.stack(int(frames.parent[at])) if is_user_file(s.file)]
    if callers:
        shown = " <- ".join(s.text() for s in callers[:4])
        out.append(("Called by", shown + (" <- ..." if len(callers) > 4 else "")))
    return out
