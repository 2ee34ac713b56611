"""Kineto trace events -> compact typed columns (array.array), one event at a time.

Nothing here keeps an event dict: each one is read into a few typed arrays and
dropped, so memory grows with 8 bytes per kept field, not with the JSON.
Integers that are missing become `NULL`; names are interned (`Names`).
`ext` is Kineto's `External id` (FORMATS.md §7): the id of a cpu_op, shared by the
CUDA calls made inside it and by the GPU work they launched.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

NULL = -(2**63)
#: |ts| and dur beyond this many µs (NaN, infinities, junk) are not times
_FAR = 1e17

#: Kineto categories kept as ranges, in the order of their `domain` code
RANGE_CATS = ("cpu_op", "user_annotation", "gpu_user_annotation")
API_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
EXTERNAL_ID = "External id"


def as_int(v: Any) -> int:
    """An integer field, or NULL (bools, floats with fractions and junk, such as an integer
    beyond int64, are not ids)."""
    if type(v) is int:
        return v if NULL < v < -NULL else NULL
    if type(v) is str and v.isdigit() and len(v) < 19:
        return int(v)
    if type(v) is float and v.is_integer() and abs(v) < 2**62:
        return int(v)
    return NULL


class Names:
    """Strings interned to int32 codes."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.values: list[str] = []

    def code(self, name: Any) -> int:
        if type(name) is not str:
            name = "" if name is None else str(name)
        c = self.codes.get(name)
        if c is None:
            c = self.codes[name] = len(self.values)
            self.values.append(name)
        return c


class Columns:
    """Typed append-only columns; every row appends one value to each."""

    def __init__(self, spec: dict[str, str]) -> None:
        self.cols: dict[str, array[Any]] = {k: array(t) for k, t in spec.items()}
        self.names = Names()

    def __len__(self) -> int:
        return len(next(iter(self.cols.values())))


_TIMED = {"ts": "d", "dur": "d", "pid": "q", "tid": "q"}
_GPU = {**_TIMED, "context": "q", "corr": "q", "ext": "q", "name": "i"}
_XYZ = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
SPECS = {
    "kernel": {**_GPU, **{k: "q" for k in _XYZ}, "registers": "q", "smem": "q"},
    "gpu_memcpy": {**_GPU, "bytes": "q"},
    "gpu_memset": {**_GPU, "bytes": "q"},
    "api": {**_TIMED, "corr": "q", "ext": "q", "name": "i", "kind": "b"},
    "ranges": {**_TIMED, "ext": "q", "name": "i", "domain": "b"},
    #: `python_function` events (with_stack=True): the Python calls, a tree by their ids
    "python": {**_TIMED, "pyid": "q", "parent": "q", "name": "i"},
}
PYTHON_CAT = "python_function"


@dataclass
class Collected:
    """Everything kept from one trace."""

    tables: dict[str, Columns] = field(
        default_factory=lambda: {k: Columns(s) for k, s in SPECS.items()}
    )
    t0: float = float("inf")  # earliest ts (µs) of any event
    t1: float = float("-inf")  # latest ts + dur (µs)
    process_names: dict[int, str] = field(default_factory=dict)
    process_labels: dict[int, str] = field(default_factory=dict)
    thread_names: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    categories: Counter[Any] = field(default_factory=Counter)
    events: int = 0


class Collector:
    """Feed it events with `add`; read `out` when done."""

    def __init__(self) -> None:
        self.out = Collected()
        t = self.out.tables
        self._ranges, self._api, self._python = t["ranges"], t["api"], t["python"]
        self._gpu = {c: t[c] for c in GPU_CATS}

    def add(self, ev: dict[str, Any]) -> None:
        out = self.out
        out.events += 1
        ph = ev.get("ph")
        ts = ev.get("ts")
        if (type(ts) is not float and type(ts) is not int) or not -_FAR < ts < _FAR:
            if ph == "X" or ph == "i":
                out.skipped["no numeric ts"] += 1
            return
        if ts < out.t0:
            out.t0 = ts
        if ph == "X":
            self._complete(ev, ts)
        elif ph == "M":
            self._metadata(ev)

    def _complete(self, ev: dict[str, Any], ts: float) -> None:
        out = self.out
        cat = ev.get("cat")
        if type(cat) is not str:
            cat = None  # junk (a list, a number) is no category, like a missing one
        dur = ev.get("dur")
        if (type(dur) is not float and type(dur) is not int) or not 0 <= dur < _FAR:
            out.skipped["X event without a valid dur"] += 1
            return
        if ts + dur > out.t1:
            out.t1 = ts + dur
        pid, tid = as_int(ev.get("pid")), as_int(ev.get("tid"))
        if pid == NULL or tid == NULL:
            return  # "Spans"/"Traces" rows: the profiler's own bookkeeping
        out.categories[cat] += 1
        args = ev.get("args")
        if type(args) is not dict:
            args = {}
        if cat in RANGE_CATS:
            self._range(ev, ts, dur, pid, tid, args, RANGE_CATS.index(cat))
        elif cat in API_CATS:
            self._api_call(ev, ts, dur, pid, tid, args, API_CATS.index(cat))
        elif cat in self._gpu:
            self._gpu_op(self._gpu[cat], cat, ev, ts, dur, pid, tid, args)
        elif cat == PYTHON_CAT:
            self._python_call(ev, ts, dur, pid, tid, args)

    def _range(
        self,
        ev: dict[str, Any],
        ts: float,
        dur: float,
        pid: int,
        tid: int,
        args: dict[str, Any],
        domain: int,
    ) -> None:
        t = self._ranges
        c = t.cols
        c["ts"].append(ts)
        c["dur"].append(dur)
        c["pid"].append(pid)
        c["tid"].append(tid)
        c["ext"].append(as_int(args.get(EXTERNAL_ID)))
        c["name"].append(t.names.code(ev.get("name")))
        c["domain"].append(domain)

    def _api_call(
        self,
        ev: dict[str, Any],
        ts: float,
        dur: float,
        pid: int,
        tid: int,
        args: dict[str, Any],
        kind: int,
    ) -> None:
        t = self._api
        c = t.cols
        c["ts"].append(ts)
        c["dur"].append(dur)
        c["pid"].append(pid)
        c["tid"].append(tid)
        c["corr"].append(as_int(args.get("correlation")))
        c["ext"].append(as_int(args.get(EXTERNAL_ID)))
        c["name"].append(t.names.code(ev.get("name")))
        c["kind"].append(kind)

    def _python_call(
        self, ev: dict[str, Any], ts: float, dur: float, pid: int, tid: int, args: dict[str, Any]
    ) -> None:
        t = self._python
        c = t.cols
        c["ts"].append(ts)
        c["dur"].append(dur)
        c["pid"].append(pid)
        c["tid"].append(tid)
        c["pyid"].append(as_int(args.get("Python id")))
        c["parent"].append(as_int(args.get("Python parent id")))
        c["name"].append(t.names.code(ev.get("name")))

    def _gpu_op(
        self,
        t: Columns,
        cat: str,
        ev: dict[str, Any],
        ts: float,
        dur: float,
        pid: int,
        tid: int,
        args: dict[str, Any],
    ) -> None:
        c = t.cols
        c["ts"].append(ts)
        c["dur"].append(dur)
        dev, stream = as_int(args.get("device")), as_int(args.get("stream"))
        c["pid"].append(pid if dev == NULL else dev)
        c["tid"].append(tid if stream == NULL else stream)
        c["context"].append(as_int(args.get("context")))
        c["corr"].append(as_int(args.get("correlation")))
        c["ext"].append(as_int(args.get(EXTERNAL_ID)))
        c["name"].append(t.names.code(ev.get("name")))
        if cat == "kernel":
            _kernel_args(c, args)
        else:
            c["bytes"].append(as_int(args.get("bytes")))

    def _metadata(self, ev: dict[str, Any]) -> None:
        pid, tid = as_int(ev.get("pid")), as_int(ev.get("tid"))
        args = ev.get("args")
        if pid == NULL or type(args) is not dict:
            return
        kind = ev.get("name")
        if kind == "process_name" and type(args.get("name")) is str:
            self.out.process_names[pid] = args["name"]
        elif kind == "process_labels" and type(args.get("labels")) is str:
            self.out.process_labels[pid] = args["labels"]
        elif kind == "thread_name" and tid != NULL and type(args.get("name")) is str:
            self.out.thread_names.setdefault((pid, tid), []).append(args["name"])


def _kernel_args(c: dict[str, array[Any]], args: dict[str, Any]) -> None:
    for key, names in (("grid", _XYZ[:3]), ("block", _XYZ[3:])):
        v = args.get(key)
        ok = type(v) is list and len(v) == 3
        for i, name in enumerate(names):
            c[name].append(as_int(v[i]) if ok else NULL)  # type: ignore[index]
    c["registers"].append(as_int(args.get("registers per thread")))
    c["smem"].append(as_int(args.get("shared memory")))
