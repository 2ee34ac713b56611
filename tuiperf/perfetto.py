"""A report as a Chrome JSON trace: what ui.perfetto.dev and chrome://tracing open.

The lanes tuiperf draws, one track each:

- CPU threads (pid, tid as in the report): CUDA API calls (`cat` "cuda_api"); each thread's
  NVTX ranges on a track of their own (tid + NVTX_TID, "… · NVTX") and its OS runtime calls
  on another (tid + OSRT_TID), so that slices on a track always nest; NVTX ranges without a
  process (torch.profiler's GPU annotations: tid = the stream) on a track of that stream's
  GPU (tid NVTX_TID + stream, "stream S · NVTX"); other rows without a process or thread
  are left out and counted (`dropped_no_process`): a null id names nothing;
- GPUs (pid GPU_PID + device, "GPU 0: NVIDIA H200"; with several processes on GPUs, as in
  `ranks --merge`, one per process and device: GPU_PID + (process index << 8) + device),
  one track per stream (tid = stream):
  kernels (`ph` "X", `cat` "kernel"), memcpy, memset and CUDA graph executions;
- flows from each launch to its GPU work (`ph` "s" on the API call, "f" with `bp` "e" on
  the kernel/copy, matched by process and correlation id, both known, `cat` "launch");
- counters: each GPU's device memory (`gpu_memory` rows of the memory lane's kinds:
  Device, Managed, Array) and, when the report has training
  steps, the step budget: one counter track per device with each steady step's parts (ms),
  and the steps as slices on a "Steps" process (pid STEPS_PID, tid = device).

Times are µs with three decimals (exact ns). Written batch by batch (BATCH rows of a table
at a time, the text flushed every FLUSH characters), so memory stays bounded by the report's
own tables; the command writes it through `open_output` (atomically).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model import arrays as A

if TYPE_CHECKING:
    from tuiperf.model.trace import Trace

GPU_PID = 0x40000000  # + device (+ the process's index << 8 with several processes)
STEPS_PID = 0x50000000
NVTX_TID = 0x40000000  # + tid
OSRT_TID = 0x20000000  # + tid
BATCH = 50_000
FLUSH = 1 << 20

#: GPU tables: (table, cat)
GPU_TABLES = (("kernels", "kernel"), ("memcpy", "memcpy"), ("memset", "memset"),
              ("graphs", "cuda_graph"))  # fmt: skip
#: CPU tables: (table, cat, tid offset)
CPU_TABLES = (("api", "cuda_api", 0), ("nvtx", "nvtx", NVTX_TID), ("osrt", "osrt", OSRT_TID))


@dataclass
class _Out:
    """Events joined by commas, flushed to the stream in pieces of about FLUSH characters."""

    out: TextIO
    parts: list[str] = field(default_factory=list)
    size: int = 0
    count: int = 0

    def add(self, event: str) -> None:
        self.parts.append(event if self.count == 0 else ",\n" + event)
        self.count += 1
        self.size += len(event) + 2
        if self.size >= FLUSH:
            self.flush()

    def flush(self) -> None:
        self.out.write("".join(self.parts))
        self.parts, self.size = [], 0


def us(ns: int) -> str:
    """ns as µs with three decimals, exactly (the trace format's unit is the µs)."""
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    return f"{sign}{ns // 1000}.{ns % 1000:03d}"


def write_trace(out: TextIO, trace: Trace, steps: bool = True) -> dict[str, int]:
    """The whole trace to `out`; returns the number of events written by kind."""
    w = _Out(out)
    counts: dict[str, int] = {}
    out.write('{"displayTimeUnit":"ns","otherData":{"producer":"tuiperf"},"traceEvents":[\n')
    launches = _Launches(trace.table("api", ["pid", "correlation_id"]))
    gpus = _Gpus(trace)
    for table, cat in GPU_TABLES:
        counts[cat] = _gpu_events(w, trace, table, cat, launches, gpus)
    counts["flow_end"] = launches.ends
    placed = _Placed(_stream_gpus(trace, gpus))
    for table, cat, offset in CPU_TABLES:
        cols = ["start", "duration", "pid", "tid", "text" if table == "nvtx" else "name"]
        t = trace.table(table, cols)
        counts[cat] = _cpu_events(w, t, table, cat, offset, launches, placed)
    counts["flow_start"] = launches.starts
    counts["dropped_no_process"] = placed.dropped
    counts["memory_counter"] = _memory(w, trace.table("gpu_memory"), gpus)
    if steps:
        counts["step"], counts["budget_counter"] = _budget(w, trace)
    _metadata(w, trace, gpus, placed)
    w.flush()
    out.write("\n]}\n")
    return counts


# -- the events ----------------------------------------------------------------------------


class _Gpus:
    """A GPU process per (process, device): GPU_PID + device when one process has GPU
    work (any single report), else GPU_PID + (the process's index << 8) + device."""

    def __init__(self, trace: Trace) -> None:
        # known pids only: a row without one goes to the first process's GPU (with one
        # process, its own), never to a made-up process 0
        tables = [trace.table(t, ["pid"]) for t, _ in GPU_TABLES]
        tables.append(trace.table("gpu_memory", ["pid"]))
        found = [_ints(t["pid"])[A.known(t, "pid")] for t in tables]
        self.pids = np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)

    def pid(self, pid: np.ndarray, device: np.ndarray) -> np.ndarray:
        return GPU_PID + (np.searchsorted(self.pids, pid).astype(np.int64) << 8) + device


class _Launches:
    """The API calls by (pid, correlation id), and which ones launched GPU work."""

    def __init__(self, api: pa.Table) -> None:
        # a call with no process or no correlation id launched nothing we can name
        rows = np.flatnonzero(A.known(api, "pid", "correlation_id"))
        keys = _keys(api)[rows] if api.num_rows else np.zeros(0, np.int64)
        self.order = rows[np.argsort(keys, kind="stable")]
        self.sorted = np.sort(keys, kind="stable")
        self.launched = np.zeros(api.num_rows, bool)
        self.starts = self.ends = 0

    def match(self, keys: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """For each key, the API row with it (-1: none); marks those rows as launches."""
        if not len(self.sorted):
            return np.full(len(keys), -1, np.int64)
        pos = np.minimum(np.searchsorted(self.sorted, keys), len(self.sorted) - 1)
        hit = valid & (self.sorted[pos] == keys)
        rows = np.where(hit, self.order[pos], -1)
        self.launched[rows[hit]] = True
        return rows


def _keys(t: pa.Table) -> np.ndarray:
    pid = _ints(t["pid"])
    corr = _ints(t["correlation_id"])
    return (pid << 32) | (corr & 0xFFFFFFFF)


def _ints(col: pa.ChunkedArray | pa.Array, fill: int = 0) -> np.ndarray:
    return np.asarray(col.fill_null(fill).to_numpy(zero_copy_only=False), np.int64)


def _valid(b: pa.RecordBatch, *names: str) -> np.ndarray:
    """Rows of batch `b` where none of columns `names` is null (model.arrays.known)."""
    ok = np.ones(b.num_rows, bool)
    for name in names:
        col = b[name]
        if col.null_count:
            ok &= col.is_valid().to_numpy(zero_copy_only=False)
    return ok


def _batches(t: pa.Table) -> Iterator[pa.RecordBatch]:
    yield from t.unify_dictionaries().to_batches(max_chunksize=BATCH)


def _names(col: pa.Array, cache: dict[int, list[str]], label: str = "{}") -> list[str]:
    """Each row's name as a JSON string (`label` filled with its value), the dictionary
    encoded once per column; a missing value fills `label` with ''."""
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    labels = cache.get(len(col.dictionary))
    if labels is None:
        values = [*col.dictionary.to_pylist(), ""]
        labels = [json.dumps(label.format(s or ""), ensure_ascii=False) for s in values]
        cache[len(col.dictionary)] = labels
    idx = _ints(col.indices, -1)
    return [labels[i] for i in idx.tolist()]


def _gpu_events(
    w: _Out, trace: Trace, table: str, cat: str, launches: _Launches, gpus: _Gpus
) -> int:
    # named as nsys stats names them (and the events table): copies by kind, memsets as one
    col, label = {"memcpy": ("copy_kind", "[CUDA memcpy {}]"),
                  "memset": ("mem_kind", "[CUDA memset]")}.get(table, ("name", "{}"))  # fmt: skip
    # only the columns written: a table's detail columns are not converted for this
    sized = ["bytes"] if table in ("memcpy", "memset") else []
    t = trace.table(table, ["start", "duration", "device", "stream", "correlation_id", "pid",
                            col, *sized])  # fmt: skip
    cache: dict[int, list[str]] = {}
    n = 0
    for b in _batches(t):
        names = _names(b.column(b.schema.get_field_index(col)), cache, label)
        start, dur = _ints(b["start"]), _ints(b["duration"])
        pid = gpus.pid(_ints(b["pid"]), _ints(b["device"]))
        tid, corr = _ints(b["stream"]), _ints(b["correlation_id"], -1)
        keys = (_ints(b["pid"]) << 32) | (corr & 0xFFFFFFFF)
        valid = _valid(b, "pid", "correlation_id")
        api_rows = launches.match(keys, valid)
        size = _ints(b["bytes"]).tolist() if "bytes" in b.schema.names else None
        has_corr = _valid(b, "correlation_id").tolist()
        for i, (s, d, p, th, c, a) in enumerate(zip(start.tolist(), dur.tolist(), pid.tolist(),
                                                    tid.tolist(), corr.tolist(),
                                                    api_rows.tolist())):  # fmt: skip
            extra = f',"bytes":{size[i]}' if size is not None else ""
            args = f'{{"correlation_id":{c if has_corr[i] else "null"}{extra}}}'
            w.add(f'{{"ph":"X","cat":"{cat}","name":{names[i]},"pid":{p},"tid":{th},'
                  f'"ts":{us(s)},"dur":{us(d)},"args":{args}}}')  # fmt: skip
            if a >= 0:
                w.add(f'{{"ph":"f","bp":"e","cat":"launch","name":"launch","id":{a + 1},'
                      f'"pid":{p},"tid":{th},"ts":{us(s)}}}')  # fmt: skip
                launches.ends += 1
        n += b.num_rows
    return n


@dataclass
class _Placed:
    """Where rows without a process go: NVTX rows of a GPU stream (torch.profiler's GPU
    annotations: no pid, tid = the stream) on a track of that stream's GPU, the rest left
    out and counted (a null id names no process: tuiperf.model.arrays.known)."""

    #: stream -> the GPU process (pid in the trace file) of the one GPU that has it
    gpu_of_stream: dict[int, int]
    dropped: int = 0
    #: (GPU process, stream) of the annotation tracks written
    annotated: set[tuple[int, int]] = field(default_factory=set)

    def place(self, b: pa.RecordBatch, table: str, offset: int) -> tuple[list[int], list[int]]:
        """(pid, tid) per row; pid -1 for a row left out."""
        pid, tid = _ints(b["pid"]), _ints(b["tid"])
        known = _valid(b, "pid", "tid")
        out_pid, out_tid = np.where(known, pid, -1), tid + offset
        for i in np.flatnonzero(~known).tolist():
            gpu = self.gpu_of_stream.get(int(tid[i])) if table == "nvtx" else None
            if gpu is None or not b["tid"].is_valid()[i].as_py():
                self.dropped += 1
                continue
            out_pid[i], out_tid[i] = gpu, NVTX_TID + tid[i]
            self.annotated.add((gpu, int(tid[i])))
        return out_pid.tolist(), out_tid.tolist()


def _stream_gpus(trace: Trace, gpus: _Gpus) -> dict[int, int]:
    """stream -> its GPU process, for the streams that only one (process, device) has."""
    seen: dict[int, set[int]] = {}
    for table, _ in GPU_TABLES:
        t = trace.table(table, ["pid", "device", "stream"])
        if not t.num_rows:
            continue
        ok = A.known(t, "device", "stream")
        gpu = gpus.pid(_ints(t["pid"]), _ints(t["device"]))[ok]
        for g, st in np.unique(np.stack([gpu, _ints(t["stream"])[ok]], axis=1), axis=0).tolist():
            seen.setdefault(st, set()).add(g)
    return {st: next(iter(g)) for st, g in seen.items() if len(g) == 1}


def _cpu_events(
    w: _Out,
    t: pa.Table,
    table: str,
    cat: str,
    offset: int,
    launches: _Launches,
    placed: _Placed,
) -> int:
    name_col = "text" if table == "nvtx" else "name"
    cache: dict[int, list[str]] = {}
    n = row0 = 0
    for b in _batches(t):
        names = _names(b.column(b.schema.get_field_index(name_col)), cache)
        start, dur = _ints(b["start"]), b["duration"].to_numpy(zero_copy_only=False)
        pid, tid = placed.place(b, table, offset)
        for i, s in enumerate(start.tolist()):
            if pid[i] < 0:  # no process: left out (counted)
                continue
            d = dur[i]
            if d is None or d != d:  # a mark without an end: an instant
                w.add(f'{{"ph":"i","s":"t","cat":"{cat}","name":{names[i]},"pid":{pid[i]},'
                      f'"tid":{tid[i]},"ts":{us(s)}}}')  # fmt: skip
                continue
            w.add(f'{{"ph":"X","cat":"{cat}","name":{names[i]},"pid":{pid[i]},"tid":{tid[i]},'
                  f'"ts":{us(s)},"dur":{us(int(d))}}}')  # fmt: skip
            if table == "api" and launches.launched[row0 + i]:  # (a known pid)
                w.add(f'{{"ph":"s","cat":"launch","name":"launch","id":{row0 + i + 1},'
                      f'"pid":{pid[i]},"tid":{tid[i]},"ts":{us(s)}}}')  # fmt: skip
                launches.starts += 1
        n += sum(1 for p in pid if p >= 0)
        row0 += b.num_rows
    return n


def _memory(w: _Out, t: pa.Table, gpus: _Gpus) -> int:
    """Each GPU's device memory after every allocation and free, as a counter: the rows the
    timeline's memory lane counts (memory_lane.RESERVED_KINDS: not pinned host memory, not
    Device Static), a free (memory_lane.FREE) subtracting its bytes."""
    from tuiperf.model.timeline.memory_lane import FREE, RESERVED_KINDS

    if not t.num_rows:
        return 0
    t = t.filter(pc.is_in(t["mem_kind"].cast(pa.string()), pa.array(RESERVED_KINDS)))
    if not t.num_rows:
        return 0
    free = pc.equal(t["operation"].cast(pa.string()), FREE).fill_null(False)
    sign = np.where(free.to_numpy(zero_copy_only=False), -1, 1)
    start, gpu = _ints(t["start"]), gpus.pid(_ints(t["pid"]), _ints(t["device"]))
    size = np.abs(_ints(t["bytes"])) * sign
    order = np.lexsort((start, gpu))
    total: dict[int, int] = {}
    for i in order.tolist():
        g = int(gpu[i])
        total[g] = total.get(g, 0) + int(size[i])
        w.add(f'{{"ph":"C","name":"GPU memory","pid":{g},"ts":{us(int(start[i]))},'
              f'"args":{{"allocated bytes":{total[g]}}}}}')  # fmt: skip
    return t.num_rows


def _budget(w: _Out, trace: Trace) -> tuple[int, int]:
    """The steady steps as slices, and per device a counter of each step's parts (ms)."""
    from tuiperf.analysis.budget.context import Ctx
    from tuiperf.analysis.budget.step_budget import PARTS, SHORT

    b = Ctx(trace).budget
    steps = counters = 0
    for d in b.devices if b is not None else []:
        for s in d.steps:
            span = f'"ts":{us(s.start_ns)},"dur":{us(s.end_ns - s.start_ns)}'
            w.add(f'{{"ph":"X","cat":"step","name":{json.dumps(s.label)},"pid":{STEPS_PID},'
                  f'"tid":{d.device},{span}}}')  # fmt: skip
            parts = ",".join(f'"{SHORT[p]}":{s.parts.ns[p] / 1e6:.6f}' for p in PARTS)
            w.add(f'{{"ph":"C","name":"step budget (ms), device {d.device}","pid":{STEPS_PID},'
                  f'"ts":{us(s.start_ns)},"args":{{{parts}}}}}')  # fmt: skip
            steps, counters = steps + 1, counters + 1
        if d.steps:
            zero = ",".join(f'"{SHORT[p]}":0' for p in PARTS)
            w.add(f'{{"ph":"C","name":"step budget (ms), device {d.device}","pid":{STEPS_PID},'
                  f'"ts":{us(d.steps[-1].end_ns)},"args":{{{zero}}}}}')  # fmt: skip
            counters += 1
    return steps, counters


# -- names of the processes and tracks ------------------------------------------------------


def _metadata(w: _Out, trace: Trace, gpus: _Gpus, placed: _Placed) -> None:
    procs = dict(zip(_ints(trace.table("processes")["pid"]).tolist(),
                     trace.table("processes")["name"].to_pylist()))  # fmt: skip
    th = trace.table("threads")
    threads = dict(zip(zip(_ints(th["pid"]).tolist(), _ints(th["tid"]).tolist()),
                       th["name"].to_pylist()))  # fmt: skip
    seen_pids: set[int] = set()
    for table, _, offset in CPU_TABLES:
        t = trace.table(table, ["pid", "tid"])
        known = A.known(t, "pid", "tid")  # rows without them are on GPU tracks, or left out
        if not known.any():
            continue
        pairs = np.unique(np.stack([_ints(t["pid"]), _ints(t["tid"])], axis=1)[known], axis=0)
        label = {"api": "", "nvtx": " · NVTX", "osrt": " · OS runtime"}[table]
        for p, tid in pairs.tolist():
            name = threads.get((p, tid)) or f"thread {tid}"
            _meta(w, "thread_name", p, tid + offset, f"{name} ({tid}){label}")
            seen_pids.add(p)
    for p in sorted(seen_pids):
        _meta(w, "process_name", p, None, f"{procs.get(p) or 'process'} ({p})")
    _gpu_metadata(w, trace, gpus, procs)
    for gpu, stream in sorted(placed.annotated):
        _meta(w, "thread_name", gpu, NVTX_TID + stream, f"stream {stream} · NVTX")


def _gpu_metadata(w: _Out, trace: Trace, gpus: _Gpus, procs: dict[int, str]) -> None:
    dev = trace.table("devices")
    names = dict(zip(_ints(dev["device"]).tolist(), dev["name"].to_pylist()))
    streams: set[tuple[int, int, int]] = set()  # (process, device, stream)
    for table, _ in GPU_TABLES:
        t = trace.table(table, ["pid", "device", "stream"])
        if t.num_rows:
            cols = [_ints(t["pid"]), _ints(t["device"]), _ints(t["stream"])]
            streams |= {tuple(r) for r in np.unique(np.stack(cols, axis=1), axis=0).tolist()}
    gm = trace.table("gpu_memory")
    mem = np.stack([_ints(gm["pid"]), _ints(gm["device"])], axis=1)
    gpu_of = {(p, d) for p, d, _ in streams} | {tuple(r) for r in np.unique(mem, axis=0).tolist()}
    for p, d in sorted(gpu_of):
        label = f": {names[d]}" if names.get(d) else ""
        whose = f" · {procs.get(p) or 'process'} ({p})" if len(gpus.pids) > 1 else ""
        _meta(w, "process_name", _one(gpus, p, d), None, f"GPU {d}{label}{whose}")
    for p, d, s in sorted(streams):
        _meta(w, "thread_name", _one(gpus, p, d), s, f"stream {s}")
    _meta(w, "process_name", STEPS_PID, None, "Steps (tuiperf)")


def _one(gpus: _Gpus, pid: int, device: int) -> int:
    return int(gpus.pid(np.array([pid]), np.array([device]))[0])


def _meta(w: _Out, what: str, pid: int, tid: int | None, name: str) -> None:
    at = f',"tid":{tid}' if tid is not None else ""
    w.add(f'{{"ph":"M","name":"{what}","pid":{pid}{at},"args":{{"name":{json.dumps(name)}}}}}')
