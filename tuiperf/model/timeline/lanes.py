"""Timeline lanes built from a Trace, each indexed so a frame costs O(columns · log n).

Lanes are grouped: per GPU device, one lane per stream and kind (kernels, memcpy by
direction, memset); per process, per thread (named from the threads table), lanes for
CUDA API calls, NVTX ranges (one per nesting depth) and OS runtime calls.

Each lane's events are kept as sorted arrays (`Intervals`): starts, ends, the running
maximum of ends (to find the first event that reaches into a window), the union of the
intervals and its running sum of busy time (`cum_busy`, inclusive). Busy time in any
column is B(right edge) - B(left edge), where B(t) is the busy time before t: two
`searchsorted` calls over the column edges, whatever the number of events. Built once;
never walked per frame.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.arrays import filled
from tuiperf.model.timeline import lane_cache
from tuiperf.model.timeline.lane_intervals import Intervals
from tuiperf.model.timeline.lane_split import split_table
from tuiperf.model.timeline.memory_lane import MemoryCounter, memory_counters
from tuiperf.model.timeline.metric_lane import MetricLine, metric_lines
from tuiperf.model.trace import Trace

if TYPE_CHECKING:
    from tuiperf.model.timeline.sample_ticks import SampleTicks
    from tuiperf.model.timeline.thread_states import ThreadStates

Progress = Callable[[str, float], None]


# --- names ----------------------------------------------------------------------------

_API_SUFFIX = re.compile(r"_v\d+$")


class NameColumn:
    """A table's name column as int32 codes + a list of strings, resolved on first use."""

    def __init__(self, column: pa.ChunkedArray | None, fallback: str = "") -> None:
        self._column = column
        self._fallback = fallback
        self._codes: np.ndarray | None = None
        self._names: list[str] = []

    def _resolve(self) -> None:
        col = self._column
        if col is None or len(col) == 0:
            self._codes = np.zeros(0, dtype=np.int32)
            return
        if not pa.types.is_dictionary(col.type):
            col = pc.dictionary_encode(col)
        arr = pa.chunked_array(col.chunks, type=col.type).unify_dictionaries()
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        self._names = [("" if s is None else str(s)) for s in arr.dictionary.to_pylist()]
        self._codes = filled(arr.indices, -1)  # no pandas import on a first frame

    def warm(self) -> None:
        if self._codes is None:
            self._resolve()

    def names(self, rows: np.ndarray) -> list[str]:
        self.warm()
        assert self._codes is not None
        if len(self._codes) == 0:
            return [self._fallback] * len(rows)
        codes = self._codes[rows]
        return [self._names[c] if c >= 0 else self._fallback for c in codes.tolist()]


def display_name(kind: str, name: str) -> str:
    """What a box shows: API names without their `_v7000` CUPTI suffix."""
    if kind == "api":
        return _API_SUFFIX.sub("", name)
    return name


# --- lanes ----------------------------------------------------------------------------

#: the kinds of lanes, in the order a stream's or a thread's lanes are listed
KINDS = ("kernel", "memcpy", "memset", "graph", "api", "nvtx", "osrt")
_DIRECTIONS = {
    "Host-to-Device": "HtoD",
    "Device-to-Host": "DtoH",
    "Device-to-Device": "DtoD",
    "Host-to-Host": "HtoH",
    "Peer-to-Peer": "PtoP",
}


@dataclass
class Lane:
    """One row of the timeline."""

    key: tuple
    group: str
    label: str
    kind: str
    table: str
    iv: Intervals
    names: NameColumn
    #: pid/tid for CPU lanes, device/stream for GPU lanes
    place: dict[str, int | str | None] = field(default_factory=dict)
    #: a lane drawn as a level over time, not as events (a GPU's memory: memory_lane)
    counter: MemoryCounter | None = None
    #: a GPU metric drawn as a sparkline (metric_lane)
    metric: MetricLine | None = None
    #: a thread's CPU samples drawn as ticks (sample_lane)
    ticks: SampleTicks | None = None
    #: a thread's running / waiting intervals (state_lane)
    state: ThreadStates | None = None

    def names_at(self, first: int, count: int) -> list[str]:
        rows = self.iv.rows[first : first + count]
        return [display_name(self.kind, n) for n in self.names.names(rows)]


@dataclass
class Group:
    key: str
    label: str
    lanes: list[int] = field(default_factory=list)


@dataclass
class LaneSet:
    groups: list[Group]
    lanes: list[Lane]
    lo: int
    hi: int
    by_key: dict[tuple, int] = field(default_factory=dict)
    #: lane splits built here and not kept in the cache entry yet (build_lanes with
    #: keep=False): table -> its split; `keep_index` stores them
    unkept: dict[str, dict[tuple, Intervals]] = field(default_factory=dict)

    def keep_index(self, trace: Trace) -> None:
        """Store the lane index built by `build_lanes(keep=False)` in the cache entry, so a
        reopen restores it (meant for a worker thread once the first frame is drawn). The
        lanes keep the arrays they were built with (a restored index computes the same)."""
        while self.unkept:
            name, split = self.unkept.popitem()
            lane_cache.store_split(trace, name, _SPECS[name][1], split)

    def locate(self, trace: Trace, table: str, row: int) -> tuple[int, int] | None:
        """(lane index, position in lane) of row `row` of `table`, if it is drawn."""
        spec = _SPECS.get(table)
        if spec is None:
            return None
        # one row's keys: read as held (never widening whole key columns for it)
        t = trace.stored(table, ["start", *spec[1]])
        if not 0 <= row < t.num_rows:
            return None
        rec = t.slice(row, 1).to_pylist()[0]
        key = _key_of(table, rec)
        lane = self.by_key.get(key) if key is not None else None
        if lane is None:
            return None
        pos = self.lanes[lane].iv.position_of(row, int(rec["start"]))
        return None if pos is None else (lane, pos)

    def warm_names(self) -> None:
        for lane in self.lanes:
            lane.names.warm()
        self.prefault()

    def prefault(self) -> None:
        """Read one value per memory page of every lane array: a lane index restored from
        the cache is memory-mapped, and its first frames would otherwise fault its pages in
        (a slow first frame at a new zoom). Meant for a background thread."""
        step = 4096 // 8
        for lane in self.lanes:
            iv = lane.iv
            for arr in (iv.starts, iv.ends, iv.rows, iv.max_end, iv.u_start, iv.u_end, iv.cum_busy):
                if len(arr):
                    int(arr[::step].sum())


def _key_of(table: str, r: dict) -> tuple | None:
    if table in ("kernels", "memset", "graphs"):
        return (table, r["pid"], r["device"], r["stream"])
    if table == "memcpy":
        return (table, r["pid"], r["device"], r["stream"], r["copy_kind"])
    if table in ("api", "osrt"):
        return (table, r["pid"], r["tid"])
    if table == "nvtx":
        return (table, r["pid"], r["tid"], r["depth"])
    return None


#: table -> (lane kind, key columns, name column)
_SPECS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "kernels": ("kernel", ("pid", "device", "stream"), "short_name"),
    "memcpy": ("memcpy", ("pid", "device", "stream", "copy_kind"), "copy_kind"),
    "memset": ("memset", ("pid", "device", "stream"), "mem_kind"),
    "graphs": ("graph", ("pid", "device", "stream"), "name"),
    "api": ("api", ("pid", "tid"), "name"),
    "nvtx": ("nvtx", ("pid", "tid", "depth"), "text"),
    "osrt": ("osrt", ("pid", "tid"), "name"),
}


# --- building -------------------------------------------------------------------------


def build_lanes(trace: Trace, progress: Progress | None = None, keep: bool = True) -> LaneSet:
    """All lanes of a trace, GPU devices first, then processes and their threads.

    The lane index built here is kept in the trace's cache entry, for a reopen; with
    `keep=False` not yet: `LaneSet.keep_index` stores it later (a first screen need not
    wait for the writes: 2.8 GiB at 20M kernels)."""
    split: dict[str, dict[tuple, Intervals]] = {}
    unkept: dict[str, dict[tuple, Intervals]] = {}
    tables = [n for n in _SPECS if trace.has(n)]
    for i, name in enumerate(tables):
        if progress is not None:
            progress(f"index {name}", i / max(len(tables), 1))
        cols = _SPECS[name][1]
        restored = lane_cache.load_split(trace, name, cols)
        if restored is not None:
            split[name] = restored
            continue
        needed = list(dict.fromkeys(["start", "end", *cols, _SPECS[name][2]]))
        held = trace.stored(name, needed)  # ids as stored
        split[name] = split_table(held, cols, lane_cache.allocator(trace, held.num_rows))
        if keep:
            lane_cache.store_split(trace, name, cols, split[name])
        else:
            unkept[name] = split[name]
    names = {n: NameColumn(trace.stored(n, [_SPECS[n][2]])[_SPECS[n][2]], n) for n in tables}
    rng = trace.time_range() or (0, 1)
    ls = LaneSet([], [], int(rng[0]), int(rng[1]), unkept=unkept)
    _gpu_groups(trace, ls, split, names)
    _cpu_groups(trace, ls, split, names)
    return ls


def _add(ls: LaneSet, group: Group, lane: Lane) -> None:
    ls.by_key[lane.key] = len(ls.lanes)
    group.lanes.append(len(ls.lanes))
    ls.lanes.append(lane)


def _sort_key(v: object) -> tuple:
    return (v is None, v if isinstance(v, int) else 0, str(v))


#: (table, lane kind) of the GPU lanes of a stream, in the order they are listed
_GPU_LANES = (
    ("kernels", "kernel"),
    ("memcpy", "memcpy"),
    ("memset", "memset"),
    ("graphs", "graph"),
)


def _gpu_groups(trace: Trace, ls: LaneSet, split: dict, names: dict) -> None:
    streams: dict[object, set[tuple]] = {}
    for table, _kind in _GPU_LANES:
        for key in split.get(table, {}):
            pid, device, stream = key[0], key[1], key[2]
            streams.setdefault(device, set()).add((pid, stream))
    dev_names, pnames = _device_names(trace), _process_names(trace)
    several = len({p for s in streams.values() for p, _ in s}) > 1
    annotations = _gpu_annotation_lanes(trace, split, names)
    counters, metrics = memory_counters(trace), metric_lines(trace)
    for device in sorted(streams, key=_sort_key):
        pids = {p for p, _ in streams[device]}
        group = Group(f"gpu:{device}", _gpu_label(device, dev_names, pnames, pids, several))
        for pid, stream in sorted(
            streams[device], key=lambda k: (_sort_key(k[1]), _sort_key(k[0]))
        ):
            base = f"stream {stream}" + (f" ({pid})" if len(pids) > 1 else "")
            place: dict = {"pid": pid, "device": device, "stream": stream}
            for table, kind in _GPU_LANES:
                for key, iv in sorted(split.get(table, {}).items(), key=lambda kv: str(kv[0])):
                    if key[:3] != (pid, device, stream):
                        continue
                    what = {"kernel": "kernels", "memset": "memset", "graph": "graphs"}.get(kind)
                    if kind == "memcpy":
                        what = _DIRECTIONS.get(str(key[3]), str(key[3]))
                    lane = Lane(
                        key=(table, *key),
                        group=group.key,
                        label=f"{base} {what}",
                        kind=kind,
                        table=table,
                        iv=iv,
                        names=names[table],
                        place=place,
                    )
                    _add(ls, group, lane)
        for lane in annotations.pop(device, []):
            lane.group = group.key
            _add(ls, group, lane)
        if device in counters:
            _add(ls, group, _memory_lane(group, device, counters[device]))
        for line in metrics.get(device, []):
            _add(ls, group, _metric_lane(group, device, line))
        if group.lanes:
            ls.groups.append(group)


def _memory_lane(group: Group, device: Any, counter: MemoryCounter) -> Lane:
    """The GPU's device memory over time, under its streams (nsys --cuda-memory-usage)."""
    return Lane(
        key=("gpu_memory", device),
        group=group.key,
        label="memory (reserved)",
        kind="memory",
        table="gpu_memory",
        iv=Intervals(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)),
        names=NameColumn(None, "memory"),
        place={"device": device},
        counter=counter,
    )


def _metric_lane(group: Group, device: Any, line: MetricLine) -> Lane:
    """A GPU metric as a sparkline, under the GPU's streams (nsys --gpu-metrics-devices)."""
    empty = np.zeros(0, np.int64)
    return Lane(key=("gpu_metrics", device, line.s.metric, line.s.unit), group=group.key,
                label=line.label, kind="metric", table="gpu_metrics",
                iv=Intervals(empty, empty, empty), names=NameColumn(None, "metric"),
                place={"device": device}, metric=line)  # fmt: skip


def add_memory_lanes(ls: LaneSet, device: int, counters: dict[str, MemoryCounter]) -> list[int]:
    """Level lanes (`{"allocated": …, "reserved": …}`) at the end of GPU `device`'s group
    (a group of their own when the GPU has no other lane): torch.profiler's memory events
    or a snapshot, added once their report is read. Returns the new lanes' indices."""
    key = f"gpu:{device}"
    group = next((g for g in ls.groups if g.key == key), None)
    if group is None:
        group = Group(key, f"GPU {device}")
        ls.groups.append(group)
    added = []
    for level, counter in counters.items():
        lane = _memory_lane(group, device, counter)
        lane.key, lane.label = ("gpu_memory", device, level), f"memory ({level})"
        lane.place = {"device": device, "level": level}
        _add(ls, group, lane)
        added.append(ls.by_key[lane.key])
    return added


def _gpu_label(
    device: object, dev_names: dict, pnames: dict, pids: set, several_processes: bool
) -> str:
    """`GPU 0 · NVIDIA H200`, and the processes whose work it ran when a report has several
    (a per-rank process each, in distributed training)."""
    if device is None:
        return "GPU"
    label = f"GPU {device}" + (f" · {dev_names[device]}" if dev_names.get(device) else "")
    if several_processes:
        procs = [f"{pnames.get(p) or 'process'} ({p})" for p in sorted(pids, key=_sort_key)]
        label += " · " + ", ".join(procs)
    return label


def _gpu_annotation_lanes(trace: Trace, split: dict, names: dict) -> dict[object, list[Lane]]:
    """Kineto's GPU-side annotations (nvtx rows with no process, `tid` = the stream), by
    device: they belong beside the stream they were recorded on, not in a process group."""
    found = [(k, iv) for k, iv in split.get("nvtx", {}).items() if k[0] is None]
    if not found:
        return {}
    device_of = _stream_devices(trace)
    out: dict[object, list[Lane]] = {}
    for (pid, stream, depth), iv in sorted(found, key=lambda kv: _sort_key(kv[0][1:])):
        suffix = f" {depth}" if depth else ""
        lane = Lane(
            key=("nvtx", pid, stream, depth),
            group="",
            label=f"stream {stream} annotations{suffix}",
            kind="nvtx",
            table="nvtx",
            iv=iv,
            names=names["nvtx"],
            place={"device": device_of.get(stream), "stream": stream},
        )
        out.setdefault(device_of.get(stream), []).append(lane)
    return out


def _stream_devices(trace: Trace) -> dict[Any, Any]:
    if not trace.has("streams"):
        return {}
    t = trace.table("streams")
    if "stream" not in t.column_names or "device" not in t.column_names:
        return {}
    return {r["stream"]: r["device"] for r in t.select(["stream", "device"]).to_pylist()}


def _device_names(trace: Trace) -> dict[object, str]:
    t = trace.table("devices")
    return {r["device"]: r["name"] or "" for r in t.select(["device", "name"]).to_pylist()}


def _thread_names(trace: Trace) -> dict[tuple, str]:
    t = trace.table("threads")
    return {(r["pid"], r["tid"]): r["name"] or "" for r in t.to_pylist()}


def _process_names(trace: Trace) -> dict[object, str]:
    t = trace.table("processes")
    return {r["pid"]: r["name"] or "" for r in t.to_pylist()}


def _main_first(pid: object) -> Callable[[object], tuple]:
    return lambda tid: (tid != pid, *_sort_key(tid))


#: what a CPU lane holds, by table: nsys's words, and Kineto's (its api rows are CUDA runtime
#: and driver calls, its ranges torch operators and record_function annotations)
_CPU_WHAT = {"api": "CUDA API", "nvtx": "NVTX", "osrt": "OS runtime"}
_KINETO_WHAT = {"api": "CUDA runtime", "nvtx": "CPU ops", "osrt": "OS runtime"}


def _cpu_groups(trace: Trace, ls: LaneSet, split: dict, names: dict) -> None:
    threads: dict[object, set[object]] = {}
    for table in ("api", "nvtx", "osrt"):
        for key in split.get(table, {}):
            if key[0] is not None or table != "nvtx":  # GPU annotations go with their GPU
                threads.setdefault(key[0], set()).add(key[1])
    words = _KINETO_WHAT if trace.meta.format == "kineto" else _CPU_WHAT
    tnames, pnames = _thread_names(trace), _process_names(trace)
    for pid in sorted(threads, key=_sort_key):
        pname = pnames.get(pid, "") or "process"
        group = Group(f"proc:{pid}", f"{pname} ({pid})" if pid is not None else pname)
        # the main thread (tid == pid) first, then by thread id
        main_first = _main_first(pid)
        named = {tid: tnames.get((pid, tid)) or f"thread {tid}" for tid in threads[pid]}
        repeats = Counter(named.values())
        for tid in sorted(threads[pid], key=main_first):
            tname = named[tid]
            if repeats[tname] > 1:  # threads of one name (17 `python3`): tell them apart
                tname = f"{tname} [{tid}]"
            place: dict = {"pid": pid, "tid": tid}
            for table, kind in (("api", "api"), ("nvtx", "nvtx"), ("osrt", "osrt")):
                what = words[table]
                found = [(k, iv) for k, iv in split.get(table, {}).items() if k[:2] == (pid, tid)]
                for key, iv in sorted(found, key=lambda kv: _sort_key(kv[0][-1])):
                    suffix = f" {key[2]}" if kind == "nvtx" and key[2] else ""
                    lane = Lane(
                        key=(table, *key),
                        group=group.key,
                        label=f"{tname} {what}{suffix}",
                        kind=kind,
                        table=table,
                        iv=iv,
                        names=names[table],
                        place=place,
                    )
                    _add(ls, group, lane)
        if group.lanes:
            ls.groups.append(group)
