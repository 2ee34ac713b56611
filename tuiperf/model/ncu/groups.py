"""Nsight Compute launches grouped by kernel, and each group's weight in a timeline report.

A group is the profiled launches of one kernel: same mangled name, else the same normalised
name. With a trace (nsys or torch.profiler), each group also gets its rows in the trace's
kernel table and their total GPU time: the launches of the same kernel (by mangled name
where the trace has them, as nsys does; else by demangled name as ncu and the Itanium
demangler both write it, `signature_key`) with the grid and block of a profiled launch.
Nothing weaker counts: the same kernel with another launch configuration (ncu's figures
describe one), or a kernel whose short name alone matches one of the trace's (another
template instance, another program), is only `similar`. The ncu rules rank by that
weight; the ncu link starts from the same match.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tuiperf.model import arrays as A
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.model.ncu.names import normalize, short_name
from tuiperf.model.trace import Trace


@dataclass
class KernelGroup:
    """The profiled launches of one kernel, and its weight in the nsys report."""

    key: str
    name: str  # demangled where known: it tells apart launches that share a short name
    ids: list[int]
    ncu_ns: float  # summed ncu duration of the profiled launches
    nsys_ns: int | None  # total GPU time of this kernel in the nsys report
    nsys_rows: np.ndarray | None
    #: launches of the trace with the same short name but another full name: shown as
    #: "similar, not linked", never weighed
    similar_rows: np.ndarray | None = None

    @property
    def rep(self) -> int:
        return self.ids[0]

    def weight_ns(self) -> float:
        """The time a speedup applies to: all of the kernel's time in nsys, else ncu's."""
        return float(self.nsys_ns) if self.nsys_ns is not None else self.ncu_ns


def groups(km: KernelMetrics, trace: Trace | None) -> list[KernelGroup]:
    """The profiled launches of `km` by kernel (`by_keys`), each weighed in `trace` when
    there is one."""
    k = km.kernels
    ids = k.column("id").to_pylist()
    names = k.column("name").to_pylist()
    demangled = k.column("demangled").to_pylist()
    dur = [d or 0.0 for d in k.column("duration_ns").to_pylist()]
    by: dict[str, KernelGroup] = {}
    keys = by_keys(km)
    for i, (kid, key) in enumerate(zip(ids, keys, strict=True)):
        g = by.get(key)
        if g is None:
            label = demangled[i] or names[i] or key
            g = by[key] = KernelGroup(key, label, [], 0.0, None, None)
        g.ids.append(kid)
        g.ncu_ns += dur[i]
    if trace is not None and trace.has("kernels"):
        _weigh(by, keys, km, trace)
    for g in by.values():  # the longest launch speaks for the group
        g.ids.sort(key=lambda kid: -(km.value(kid, "gpu__time_duration.sum") or 0.0))
    return list(by.values())


def signature_key(name: str) -> str:
    """A demangled kernel name as ncu and the Itanium demangler (nsys, Kineto) both write it.

    ncu writes parameters with placeholders (`const T1 &`) where the others write the types,
    lambdas as `[lambda(int) (instance 1)]` not `{lambda(int)#1}`, casts in template
    arguments (`(int)4`, `(unsigned long)1` for `4`, `1ul`), `void` before nested
    functions and other spaces. So: casts and integer suffixes go, lambdas become
    `{lambda#N}`, every parenthesised group (parameter lists) goes, `void` and spaces go."""
    s = normalize(name)
    s = _LAMBDA.sub(lambda m: "{lambda#" + (m.group(1) or m.group(2)) + "}", s)
    while True:
        s, n = _PARENS.subn("", s)
        if not n:
            break
    s = _INT_SUFFIX.sub(r"\1", _VOID.sub("", s))
    return _SPACE.sub("", s)


_LAMBDA = re.compile(r"\[lambda\([^()]*\) \(instance (\d+)\)\]|\{lambda\([^()]*\)#(\d+)\}")
_PARENS = re.compile(r"\([^()]*\)")
_VOID = re.compile(r"\bvoid\b")
_INT_SUFFIX = re.compile(r"\b(\d+)(?:ull|ul|ll|u|l)\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def _name_index(t: pa.Table, col: str, key: Callable[[str], str]) -> tuple[np.ndarray, dict]:
    """(row codes, key -> codes) over one name column of the trace's kernels."""
    if col not in t.column_names:
        return np.zeros(0, np.int64), {}
    codes, values = A.codes(t, col)
    index: dict[str, list[int]] = {}
    for c, v in enumerate(values):
        if v:
            index.setdefault(key(v), []).append(c)
    index.pop("", None)
    return codes, index


def _weigh(by: dict[str, KernelGroup], keys: list[str], km: KernelMetrics, trace: Trace) -> None:
    """Each group's rows and total time in the trace: by mangled name where the trace and
    the ncu report both have them, else by demangled name; a short name that only one
    demangled name of the trace has gives `similar_rows` only.
    `keys`: the group key of each ncu kernel row (`by_keys`)."""
    t = trace.table("kernels")
    k = km.kernels
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    mangled, demangled = k.column("mangled").to_pylist(), k.column("demangled").to_pylist()
    names = k.column("name").to_pylist()
    if has_mangled(t) and any(mangled):
        exact = (_name_index(t, "mangled_name", str), lambda i: mangled[i] or "")
    else:
        exact = (
            _name_index(t, "name", signature_key),
            lambda i: signature_key(demangled[i] or names[i] or ""),
        )
    (codes, index), key_of = exact
    (s_codes, s_index) = _short_index(t)
    dur = A.ints(t, "duration")
    launch = _launch_configs(trace)
    for key, i in first.items():
        g = by[key]
        cs = index.get(key_of(i))
        if cs:
            rows = np.flatnonzero(np.isin(codes, cs))
            same = _same_config(rows, launch, [_config(km, kid) for kid in g.ids])
            if len(same):
                g.nsys_rows, g.nsys_ns = same, int(dur[same].sum())
            other = np.setdiff1d(rows, same)
            g.similar_rows = other if len(other) else None
            continue
        cs = s_index.get(names[i] or short_name(demangled[i] or ""))
        if cs:
            g.similar_rows = np.flatnonzero(np.isin(s_codes, cs))


_DIMS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")


def _launch_configs(trace: Trace) -> np.ndarray | None:
    """Per kernel row: grid and block, (rows, 6); None when the trace lacks them."""
    t = trace.table("kernels", list(_DIMS)) if trace.has("kernels") else None
    if t is None or any(d not in t.column_names for d in _DIMS):
        return None
    return np.stack([A.ints(t, d, -1) for d in _DIMS], axis=1)


def _config(km: KernelMetrics, kid: int) -> tuple[int, ...] | None:
    k = km.kernel(kid)
    return None if k.grid is None or k.block is None else (*k.grid, *k.block)


def _same_config(
    rows: np.ndarray, launch: np.ndarray | None, configs: list[tuple[int, ...] | None]
) -> np.ndarray:
    """The rows launched with the grid and block of one of the profiled launches (all of
    them when either side does not know its launch configurations)."""
    if launch is None or any(c is None for c in configs):
        return rows
    want = np.array(configs, np.int64)
    hit = (launch[rows][:, None, :] == want[None, :, :]).all(axis=2).any(axis=1)
    return rows[hit]


def has_mangled(kernels: pa.Table) -> bool:
    """The trace's kernels carry mangled names (nsys does; torch.profiler does not)."""
    col = "mangled_name"
    return col in kernels.column_names and kernels[col].null_count < kernels.num_rows


def _short_index(t: pa.Table) -> tuple[np.ndarray, dict]:
    """Short name -> codes of the `short_name` column, for short names that one demangled
    name only has in the trace (`Kernel2` is many CUTLASS kernels: no match)."""
    codes, index = _name_index(t, "short_name", str)
    if not index or "name" not in t.column_names:
        return codes, index
    pairs = pa.table({"s": t["short_name"], "n": t["name"]}).group_by(["s", "n"]).aggregate([])
    per = Counter(pairs["s"].to_pylist())
    return codes, {s: cs for s, cs in index.items() if per.get(s, 0) == 1}


def by_keys(km: KernelMetrics) -> list[str]:
    """The group key of each ncu kernel row (mangled name, else the normalised name)."""
    k = km.kernels
    mangled = k.column("mangled").to_pylist()
    demangled = k.column("demangled").to_pylist()
    names = k.column("name").to_pylist()
    return [mangled[i] or normalize(demangled[i] or names[i] or "") for i in range(len(mangled))]
