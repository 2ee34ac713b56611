"""CPU samples counted by function: self (the sampled function) and total (on the stack).

A sample's *self* function is its innermost frame; its *total* functions are the distinct
(function, module) pairs on its call stack, each counted once per sample however often it
recurs. Native samples without a backtrace (`stacked` false) count their sampled function
only. Python samples (nsys `--python-sampling`) are other events than the native ones and
are counted apart (`kind`).

Everything here is numpy over the trace's `cpu_samples` and `sample_stacks` tables; the
`cpu_samples` summary, the CPU-bound finding and the viewer's flame tree all read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays as A
from tuiperf.model.trace import Trace

#: the Python interpreter's own module (`/usr/bin/python3.12`, `libpython3.12.so.1.0`)
INTERPRETER = re.compile(r"(^|/)(lib)?python\d[\d.]*[mdu]?(\.so[\d.]*)?$")


@dataclass
class Stacks:
    """sample_stacks as arrays indexed by node id: caller, and the (function, module) key."""

    parent: np.ndarray  # node -> caller node, -1 at the outermost frame
    key: np.ndarray  # node -> index into `functions` / `modules`
    functions: list[str]
    modules: list[str]
    python: np.ndarray  # per key: a Python frame

    @classmethod
    def of(cls, trace: Trace) -> Stacks:
        t = trace.table("sample_stacks")
        n = t.num_rows
        ids = A.ints(t, "node_id", -1)
        parent = np.full(int(ids.max()) + 1 if n else 0, -1, np.int64)
        parent[ids] = A.ints(t, "parent_id", -1)
        fc, fv = A.codes(t, "function")
        mc, mv = A.codes(t, "module")
        py = np.asarray(t["python"].fill_null(False).to_numpy(zero_copy_only=False), bool)
        uniq, inv = np.unique((fc + 1) * (len(mv) + 1) + (mc + 1), return_inverse=True)
        f_at, m_at = uniq // (len(mv) + 1) - 1, uniq % (len(mv) + 1) - 1
        key = np.full(len(parent), -1, np.int64)
        key[ids] = inv.reshape(-1)
        is_py = np.zeros(len(uniq), bool)
        is_py[inv.reshape(-1)] = py
        fns = [fv[i] if i >= 0 else "" for i in f_at.tolist()]
        mods = [mv[i] if i >= 0 else "" for i in m_at.tolist()]
        return cls(parent, key, fns, mods, is_py)

    def chain_keys(self, leaf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sample index, function key) for every frame of each sample's stack, each
        distinct pair once; samples with leaf -1 have none."""
        idx = np.flatnonzero(leaf >= 0)
        cur = leaf[idx]
        rows, keys = [], []
        while len(cur):
            rows.append(idx)
            keys.append(self.key[cur])
            up = self.parent[cur]
            keep = up >= 0
            idx, cur = idx[keep], up[keep]
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        nk = max(len(self.functions), 1)
        pair = np.sort(np.concatenate(rows) * nk + np.concatenate(keys))  # one int per pair
        pair = pair[np.r_[True, pair[1:] != pair[:-1]]]  # distinct (a sort: np.unique hashes)
        return pair // nk, pair % nk

    def entries(self, leaf: np.ndarray) -> np.ndarray:
        """Per sample, the key of the native frame the Python interpreter called (the
        torch binding such as `THPVariable_randn`): going out from the sampled frame, the
        last frame before the first interpreter frame; -1 where the sampled frame is the
        interpreter's or the stack never reaches it."""
        interp = np.array([bool(INTERPRETER.search(m)) for m in self.modules], bool)
        out = np.full(len(leaf), -1, np.int64)
        cur = leaf.copy()
        below = np.full(len(leaf), -1, np.int64)  # the last non-interpreter frame seen
        live = cur >= 0
        while live.any():
            k = self.key[cur[live]]
            hit = interp[k]
            idx = np.flatnonzero(live)
            out[idx[hit]] = below[idx[hit]]
            below[idx[~hit]] = k[~hit]
            live[idx[hit]] = False
            nxt = np.where(live, self.parent[np.maximum(cur, 0)], -1)
            cur = nxt
            live &= cur >= 0
        return out


@dataclass
class Counts:
    """Self and total samples of each function key over some samples."""

    stacks: Stacks
    samples: int
    self_n: np.ndarray  # per key
    total_n: np.ndarray  # per key

    def top(self, by: str = "self", n: int = 10) -> list[int]:
        v = self.self_n if by == "self" else self.total_n
        order = np.lexsort((-self.total_n, -self.self_n) if by == "self" else (-self.self_n, -v))
        return [int(k) for k in order[:n] if v[k] > 0]


class Samples:
    """A trace's CPU samples with their stacks, and counts over any selection of them."""

    def __init__(self, trace: Trace) -> None:
        t = trace.table("cpu_samples")
        self.table: pa.Table = t
        self.start = A.ints(t, "start")
        self.pid = A.ints(t, "pid", -1)
        self.tid = A.ints(t, "tid", -1)
        self.leaf = A.ints(t, "stack_id", -1)
        self.kind = A.strings(t, "kind").astype(str)
        self.stacked = np.asarray(t["stacked"].fill_null(False).to_numpy(zero_copy_only=False))
        self._trace = trace

    def __len__(self) -> int:
        return len(self.start)

    @cached_property
    def stacks(self) -> Stacks:
        return Stacks.of(self._trace)

    def counts(self, mask: np.ndarray) -> Counts:
        s = self.stacks
        nk = len(s.functions)
        leaf = self.leaf[mask]
        have = leaf >= 0
        self_n = np.bincount(s.key[leaf[have]], minlength=nk)
        _, keys = s.chain_keys(leaf)
        total_n = np.bincount(keys, minlength=nk)
        return Counts(s, int(mask.sum()), self_n, total_n)

    def within(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Samples inside any of the windows [starts, ends) (sorted, disjoint)."""
        i = np.searchsorted(starts, self.start, "right") - 1
        return (i >= 0) & (self.start < ends[np.maximum(i, 0)])


def short_function(name: str) -> str:
    """A C++ signature without its return type and parameters:
    `void at::native::normal_kernel<T>(at::TensorBase const&)` -> `at::native::normal_kernel<T>`."""
    s = name.strip()
    if s.startswith("["):  # nsys's own entries: `[Broken backtraces]`, `[Unknown]`
        return s
    if s.endswith(")") and "(" in s:
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i] if i else s
                break
    depth = 0
    for i, ch in enumerate(s):
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(ch, 0)
        if ch == " " and depth == 0 and not s[i + 1 :].startswith(("const", "&", "*")):
            cut = s[i + 1 :]
            return short_function(cut) if cut else s
    return s
