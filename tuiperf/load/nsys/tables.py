"""Nsight Systems export tables -> canonical tables (see schema.py).

Works on any NsysSource (SQLite, parquetdir, arrowdir). Enums are decoded
through the export's own ENUM_* tables; pid/tid come from globalTid/globalPid;
GPU work gets its launching thread by joining on (pid, correlationId).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf import schema
from tuiperf.errors import BadReportError
from tuiperf.load import spill
from tuiperf.load.dictcols import StringTable, encode_strings
from tuiperf.load.nsys import pybt as nsys_pybt
from tuiperf.load.nsys import samples as nsys_samples
from tuiperf.load.nsys.assemble import Assembler
from tuiperf.load.nsys.gpu_metrics import read_gpu_metrics
from tuiperf.load.nsys.ids import pid_of, pid_tid, tid_of
from tuiperf.load.nsys.nvtx_depth import nvtx_table
from tuiperf.load.nsys.sched import read_thread_state
from tuiperf.load.nsys.source import NsysSource, versions_of
from tuiperf.load.progress import OnProgress, Progress
from tuiperf.model.arrays import as_int64, from_numpy, valid, where_equal

Sink = Callable[[str, pa.Table], None]

#: the columns an export holds text in; every other column the reader asks for holds
#: numbers (ids, times, sizes), which is what the normalizers compute with
_TEXT_COLUMNS = frozenset(
    {"value", "label", "name", "text", "busLocation", "uuid", "chipName", "jsonText"}
) | {"metricName", "typeName"}


def as_sqlite_integers(t: pa.Table) -> pa.Table:
    """Unsigned columns as the SQLite export holds them: int64, a uint64 at or over 2^63
    wrapped to the same negative number (FORMATS.md: arrow and parquet exports keep ids,
    counters and CPU numbers unsigned), so every reader computes as it does on SQLite."""
    for i, f in enumerate(t.schema):
        if pa.types.is_unsigned_integer(f.type):
            t = t.set_column(i, f.name, t[f.name].cast(pa.int64(), safe=False))
    return t


class NsysReader:
    """Reads one export into canonical tables."""

    def __init__(self, source: NsysSource, progress: OnProgress | None = None) -> None:
        self.src = source
        self.progress = progress or (lambda _msg: None)
        self.present = source.tables()
        self._strings: StringTable | None = None
        self._enums: dict[str, StringTable] = {}
        self._launch_index: LaunchIndex | None = None
        self.built: set[str] = set()
        #: lines for meta.diagnostics found while reading
        self.notes: list[str] = []
        #: NVTX domain ids of Python backtraces (nsys_pybt), found by nvtx()
        self._py_domains: list[int] = []
        self._pybt: tuple[pa.Table, pa.Table] | None = None
        self._samples: tuple[pa.Table, pa.Table] | bool | None = False  # False: not read

    # -- raw access ---------------------------------------------------------
    def raw(self, logical: str, wanted: list[str]) -> pa.Table | None:
        """All versions of `logical`, the `wanted` columns they have (others null)."""
        parts = []
        for physical in versions_of(self.present, logical):
            have = set(self.src.columns(physical))
            cols = [c for c in wanted if c in have]
            t = self.src.read(physical, cols)
            self._check_types(physical, t)
            t = as_sqlite_integers(t)
            for c in wanted:
                if c not in have:
                    t = t.append_column(c, pa.nulls(t.num_rows, pa.int64()))
            parts.append(t.select(wanted))
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return pa.concat_tables(parts, promote_options="permissive")

    def _check_types(self, table: str, t: pa.Table) -> None:
        """Text or blobs where the export keeps numbers (SQLite is dynamically typed: a
        damaged or hand-made file can hold anything) are a bad report, not a crash."""
        for f in t.schema:
            if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type):
                what = "blobs"
            elif f.name in _TEXT_COLUMNS or not (
                pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
            ):
                continue
            else:
                what = "text"
            raise BadReportError(
                f"{self.src.path}: {table}.{f.name} holds {what} where an Nsight Systems "
                "export keeps numbers (damaged or not written by nsys)"
            )

    @contextlib.contextmanager
    def _converting(self, name: str) -> Iterator[None]:
        """Values Arrow cannot convert to the canonical types (an id beyond int32, a
        fraction in an integer column) as one line: they come from the file."""
        try:
            yield
        except pa.ArrowInvalid as e:
            why = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            raise BadReportError(f"{self.src.path}: {name}: values out of range ({why})") from e

    def strings(self) -> StringTable:
        if self._strings is None:
            t = self.raw("StringIds", ["id", "value"])
            if t is None:
                t = pa.table({"id": pa.nulls(0, pa.int64()), "value": pa.nulls(0, pa.string())})
            ids = as_int64(t["id"])
            self._strings = StringTable(ids, t["value"].combine_chunks().cast(pa.string()))
        return self._strings

    def enum(self, name: str, fallback: dict[int, str] | None = None) -> StringTable:
        if name not in self._enums:
            t = self.raw(name, ["id", "label"])
            if t is None or t.num_rows == 0:
                self._enums[name] = StringTable.from_pairs(fallback or {})
            else:
                ids = as_int64(t["id"])
                self._enums[name] = StringTable(ids, t["label"].combine_chunks().cast(pa.string()))
        return self._enums[name]

    # -- canonical tables ---------------------------------------------------
    _API_COLS = ["start", "end", "eventClass", "globalTid", "correlationId", "nameId"]
    _PLACE = ["deviceId", "contextId", "greenContextId", "streamId", "correlationId", "globalPid"]
    _KERNEL_COLS = [
        "start",
        "end",
        *_PLACE,
        "demangledName",
        "shortName",
        "mangledName",
        "gridX",
        "gridY",
        "gridZ",
        "blockX",
        "blockY",
        "blockZ",
        "registersPerThread",
        "staticSharedMemory",
        "dynamicSharedMemory",
        "graphNodeId",
    ]

    def read_all(
        self, sink: Sink | None = None, defer_details: bool = False
    ) -> dict[str, pa.Table]:
        """Build every canonical table, one at a time, handing each to `sink`.

        Tables go out as soon as they are built, so with a sink that writes them to
        disk peak memory stays near one table. Without a sink they are returned.
        """
        out: dict[str, pa.Table] = {}
        part = "core" if defer_details else "all"
        steps: list[tuple[str, Callable[[], pa.Table | None]]] = [
            ("api", lambda: self.api(part)),
            ("kernels", lambda: self.kernels(part)),
            ("memcpy", self.memcpy),
            ("memset", self.memset),
            ("graphs", self.graphs),
            ("sync", self.sync),
            ("nvtx", self.nvtx),
            ("callsites", lambda: self.python_backtraces(0)),
            ("frames", lambda: self.python_backtraces(1)),
            ("osrt", self.osrt),
            ("cpu_samples", lambda: self.cpu_samples(0)),
            ("sample_stacks", lambda: self.cpu_samples(1)),
            ("thread_state", lambda: read_thread_state(self)),
            ("gpu_metrics", lambda: read_gpu_metrics(self)),
            ("overhead", self.overhead),
            ("gpu_memory", self.gpu_memory),
            ("devices", self.devices),
            ("processes", self.processes),
            ("threads", self.threads),
            ("streams", self.streams),
        ]
        for i, (name, fn) in enumerate(steps, 1):
            self.progress(Progress("read tables", i, len(steps), name))
            with self._converting(name):
                t = fn()
            if t is None:
                continue
            if name == "api":
                self._launch_index = LaunchIndex.from_api(t)
            self.built.add(name)
            if sink is None:
                out[name] = t
                continue
            owned = [t]
            del t  # the sink gets the only reference: it can let columns go as it stores them
            sink(name, owned.pop())
        return out

    def details(self, name: str) -> pa.Table | None:
        """The detail columns of `name` (see schema.DETAIL_COLUMNS), rows as in its core."""
        build = {"kernels": self.kernels, "api": self.api}[name]
        with self._converting(name):
            return build("details")

    # -- big event tables, built in row batches ------------------------------
    #: rows per read: what is in flight (a batch read, one queued, one normalized, and the
    #: allocators' free lists behind them) is what a conversion holds beyond its result;
    #: smaller batches cost a few ms a read each (see bench/notes.md)
    _BATCH_ROWS = 1 << 16
    _GPU_TABLES = ("kernels", "memcpy", "memset", "graphs", "sync")

    def raw_batches(self, logical: str, wanted: list[str]) -> Iterator[pa.Table]:
        for physical in versions_of(self.present, logical):
            have = set(self.src.columns(physical))
            cols = [c for c in wanted if c in have]
            for t in self.src.read_batches(physical, cols, self._BATCH_ROWS):
                self._check_types(physical, t)
                for c in wanted:
                    if c not in have:
                        t = t.append_column(c, pa.nulls(t.num_rows, pa.int64()))
                yield t.select(wanted)

    def events(
        self,
        logical: str,
        cols: list[str],
        name: str,
        normalize: Callable[[pa.Table, pa.Schema], pa.Table],
        part: str = "all",
    ) -> pa.Table | None:
        """Canonical table `name` from source table `logical`, batch by batch.

        `part` "core" builds only the columns the first screen needs (schema.core_schema),
        "details" the rest (schema.detail_schema), "all" everything.
        """
        physical = versions_of(self.present, logical)
        if not physical:
            return None
        if part == "core":
            target = schema.core_schema(name)
        elif part == "details":
            target = schema.detail_schema(name)
        else:
            target = schema.TABLES[name]
        target = _without_duration(target)
        wanted = set(target.names)
        if part != "all":
            cols = [c for c in cols if _FEEDS.get(c, {c}) & wanted]
        asm = Assembler(target, sum(self.src.row_bound(p) for p in physical))
        for raw in read_ahead(self.raw_batches(logical, cols)):
            t = normalize(raw, target)
            if "tid" in wanted and name in self._GPU_TABLES and self._launch_index:
                t = self._launch_index.attach_tid(t)
            asm.append(t)
        return asm.finish()

    def api(self, part: str = "all") -> pa.Table | None:
        return self.events(
            "CUPTI_ACTIVITY_KIND_RUNTIME", self._API_COLS, "api", self._api_batch, part
        )

    def _api_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        cols: dict[str, pa.Array | pa.ChunkedArray] = {"start": t["start"]}
        if "end" in t.column_names:
            cols |= _times(t)
        if "globalTid" in t.column_names:
            cols["pid"], cols["tid"] = pid_tid(t["globalTid"])
        if "correlationId" in t.column_names:
            cols["correlation_id"] = t["correlationId"]
        if "nameId" in t.column_names:
            cols["name"] = self.strings().encode_full(t["nameId"])
        if "eventClass" in t.column_names:
            kinds = self.enum("ENUM_NSYS_EVENT_CLASS", {0: "CUDA runtime", 1: "CUDA driver"})
            cols["api_kind"] = kinds.encode_full(t["eventClass"])
        return schema.conform("api", cols, t.num_rows, target)

    def _gpu_place(self, t: pa.Table) -> dict[str, pa.Array | pa.ChunkedArray]:
        have = set(t.column_names)
        out: dict[str, pa.Array | pa.ChunkedArray] = {}
        for canon, src in (
            ("device", "deviceId"),
            ("context", "contextId"),
            ("stream", "streamId"),
            ("correlation_id", "correlationId"),
        ):
            if src in have:
                out[canon] = t[src]
        if "greenContextId" in have:
            green = t["greenContextId"]
            if pa.types.is_integer(green.type):
                # 0 is no green context: null (built from numpy: `pc.equal(green, 0)`
                # makes a scalar, which imports pandas)
                ids = as_int64(green, 0)
                out["green_context"] = from_numpy(ids, ids == 0)
            else:  # (a fraction then fails the canonical cast: a damaged file, said so)
                out["green_context"] = pc.if_else(pc.equal(green, 0), None, green)
        if "globalPid" in have:
            out["pid"] = pid_of(t["globalPid"])
        return out

    def kernels(self, part: str = "all") -> pa.Table | None:
        return self.events(
            "CUPTI_ACTIVITY_KIND_KERNEL", self._KERNEL_COLS, "kernels", self._kernels_batch, part
        )

    def _kernels_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        s = self.strings()
        have = set(t.column_names)
        cols: dict[str, pa.Array | pa.ChunkedArray] = {"start": t["start"]}
        if "end" in have:
            cols |= _times(t)
        cols |= self._gpu_place(t)
        for canon, src in (
            ("name", "demangledName"),
            ("short_name", "shortName"),
            ("mangled_name", "mangledName"),
        ):
            if src in have:
                cols[canon] = s.encode_full(t[src])
        for canon, src in _KERNEL_INTS:
            if src in have:
                cols[canon] = t[src]
        return schema.conform("kernels", cols, t.num_rows, target)

    _MEMCPY_COLS = [
        "start",
        "end",
        *_PLACE,
        "bytes",
        "copyKind",
        "srcKind",
        "dstKind",
        "srcDeviceId",
        "dstDeviceId",
        "graphNodeId",
    ]

    def memcpy(self) -> pa.Table | None:
        return self.events(
            "CUPTI_ACTIVITY_KIND_MEMCPY", self._MEMCPY_COLS, "memcpy", self._memcpy_batch
        )

    def _memcpy_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        kind = self.enum("ENUM_CUDA_MEM_KIND")
        cols = (
            _times(t)
            | self._gpu_place(t)
            | {
                "bytes": t["bytes"],
                "copy_kind": self.enum("ENUM_CUDA_MEMCPY_OPER").encode_full(t["copyKind"]),
                "src_kind": kind.encode_full(t["srcKind"]),
                "dst_kind": kind.encode_full(t["dstKind"]),
                "src_device": t["srcDeviceId"],
                "dst_device": t["dstDeviceId"],
                "graph_node_id": t["graphNodeId"],
            }
        )
        return schema.conform("memcpy", cols, t.num_rows)

    _MEMSET_COLS = ["start", "end", *_PLACE, "bytes", "value", "memKind", "graphNodeId"]

    def memset(self) -> pa.Table | None:
        return self.events(
            "CUPTI_ACTIVITY_KIND_MEMSET", self._MEMSET_COLS, "memset", self._memset_batch
        )

    def _memset_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        cols = (
            _times(t)
            | self._gpu_place(t)
            | {
                "bytes": t["bytes"],
                "value": t["value"],
                "mem_kind": self.enum("ENUM_CUDA_MEM_KIND").encode_full(t["memKind"]),
                "graph_node_id": t["graphNodeId"],
            }
        )
        return schema.conform("memset", cols, t.num_rows)

    def graphs(self) -> pa.Table | None:
        """Whole-graph executions (`--cuda-graph-trace=graph`, nsys's default); the launch
        is the cudaGraphLaunch call with the same correlationId."""
        cols = ["start", "end", *self._PLACE, "graphId", "graphExecId"]
        return self.events("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", cols, "graphs", self._graphs_batch)

    def _graphs_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        ids = t["graphId"]
        labels = pc.binary_join_element_wise("CUDA graph ", ids.cast(pa.string()), "")
        cols = (
            _times(t)
            | self._gpu_place(t)
            | {
                "graph_id": ids,
                "graph_exec_id": t["graphExecId"],
                "name": labels.dictionary_encode(),
            }
        )
        return schema.conform("graphs", cols, t.num_rows)

    def sync(self) -> pa.Table | None:
        return self.events(
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
            ["start", "end", *self._PLACE, "syncType"],
            "sync",
            self._sync_batch,
        )

    def _sync_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        cols = (
            _times(t)
            | self._gpu_place(t)
            | {
                "sync_type": self.enum("ENUM_CUPTI_SYNC_TYPE").encode_full(t["syncType"]),
            }
        )
        return schema.conform("sync", cols, t.num_rows)

    def nvtx(self) -> pa.Table | None:
        t = self.raw(
            "NVTX_EVENTS",
            ["start", "end", "eventType", "text", "textId", "domainId", "globalTid"],
        )
        if t is None:
            return None
        self._py_domains = nsys_pybt.python_domains(t)
        return nvtx_table(t, self.strings())

    def python_backtraces(self, which: int) -> pa.Table | None:
        """callsites (0) or frames (1) from the Python backtraces, if the report has any."""
        if not self._py_domains:
            return None
        if self._pybt is None:
            self._pybt = nsys_pybt.read_backtraces(self, self._py_domains)
            self._py_domains = [] if self._pybt is None else self._py_domains
        return None if self._pybt is None else self._pybt[which]

    def cpu_samples(self, which: int) -> pa.Table | None:
        """cpu_samples (0) or sample_stacks (1) (load.nsys.samples), if the report has any."""
        if self._samples is False:
            self._samples = nsys_samples.read_samples(self)
        got = self._samples
        return None if got is None or got is False or got is True else got[which]

    def osrt(self) -> pa.Table | None:
        cols = ["start", "end", "eventClass", "globalTid", "nameId", "returnValue"]
        return self.events("OSRT_API", cols, "osrt", self._osrt_batch)

    def _osrt_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        # eventClass 31/32 are zero-length start/finish markers, not calls
        t = t.filter(where_equal(t["eventClass"], 27))
        pid, tid = pid_tid(t["globalTid"])
        cols = _times(t) | {
            "pid": pid,
            "tid": tid,
            "name": self.strings().encode_full(t["nameId"]),
            "return_value": t["returnValue"],
        }
        return schema.conform("osrt", cols, t.num_rows)

    def overhead(self) -> pa.Table | None:
        cols = ["start", "end", "globalTid", "nameId"]
        return self.events("PROFILER_OVERHEAD", cols, "overhead", self._overhead_batch)

    def _overhead_batch(self, t: pa.Table, target: pa.Schema) -> pa.Table:
        pid, tid = pid_tid(t["globalTid"])
        cols = _times(t) | {"pid": pid, "tid": tid, "name": self.strings().encode_full(t["nameId"])}
        return schema.conform("overhead", cols, t.num_rows)

    def gpu_memory(self) -> pa.Table | None:
        cols_in = [
            "start",
            "globalPid",
            "deviceId",
            "streamId",
            "correlationId",
            "bytes",
            "address",
            "memKind",
            "memoryOperationType",
        ]
        t = self.raw("CUDA_GPU_MEMORY_USAGE_EVENTS", cols_in)
        if t is None:
            return None
        op = self.enum("ENUM_CUDA_DEV_MEM_EVENT_OPER", {0: "Allocation", 1: "Deallocation"})
        cols = {
            "start": t["start"],
            "pid": pid_of(t["globalPid"]),
            "device": t["deviceId"],
            "stream": t["streamId"],
            "correlation_id": t["correlationId"],
            "bytes": t["bytes"],
            "address": t["address"],
            "mem_kind": self.enum("ENUM_CUDA_MEM_KIND").encode(t["memKind"]),
            "operation": op.encode(t["memoryOperationType"]),
        }
        return schema.conform("gpu_memory", cols, t.num_rows).sort_by("start")

    def devices(self) -> pa.Table | None:
        want = [
            "id",
            "name",
            "chipName",
            "smCount",
            "totalMemory",
            "memoryBandwidth",
            "clockRate",
            "computeMajor",
            "computeMinor",
            "busLocation",
            "l2CacheSize",
            "maxWarpsPerSm",
        ]
        t = self.raw("TARGET_INFO_GPU", want)
        if t is None:
            return None
        cols = dict(zip(schema.DEVICES.names, [t[c] for c in want]))
        return schema.conform("devices", cols, t.num_rows).sort_by("device")

    def processes(self) -> pa.Table | None:
        t = self.raw("PROCESSES", ["pid", "name"])
        if t is None:
            return None
        return schema.conform("processes", {"pid": t["pid"], "name": t["name"]}, t.num_rows)

    def threads(self) -> pa.Table | None:
        t = self.raw("ThreadNames", ["nameId", "globalTid"])
        if t is None:
            return None
        names = self.strings().encode(t["nameId"]).cast(pa.string())
        cols = {"pid": pid_of(t["globalTid"]), "tid": tid_of(t["globalTid"]), "name": names}
        return schema.conform("threads", cols, t.num_rows)

    def streams(self) -> pa.Table | None:
        t = self.raw(
            "TARGET_INFO_CUDA_STREAM", ["streamId", "processId", "contextId", "priority", "flag"]
        )
        if t is None:
            return None
        flag = self.enum("ENUM_CUPTI_STREAM_TYPE").encode(t["flag"]).cast(pa.string())
        cols = {
            "pid": t["processId"],
            "context": t["contextId"],
            "stream": t["streamId"],
            "priority": t["priority"],
            "stream_type": flag,
        }
        return schema.conform("streams", cols, t.num_rows)


def read_ahead(batches: Iterator[pa.Table]) -> Iterator[pa.Table]:
    """Read the next batch in a thread while the caller normalizes this one.

    The SQLite reader releases the GIL, so reading and numpy work overlap on two cores;
    one batch ahead keeps memory bounded.
    """
    import queue
    import threading

    q: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def produce() -> None:
        try:
            for b in batches:
                if stop.is_set():
                    return
                q.put(("batch", b))
            q.put(("end", None))
        except BaseException as e:  # handed to the consumer, raised there
            q.put(("error", e))

    worker = threading.Thread(target=produce, name="tuiperf-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            kind, item = q.get()
            if kind == "end":
                return
            if kind == "error":
                raise item  # type: ignore[misc]
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get_nowait()
            except queue.Empty:
                worker.join(0.05)


_KERNEL_INTS = (
    ("grid_x", "gridX"),
    ("grid_y", "gridY"),
    ("grid_z", "gridZ"),
    ("block_x", "blockX"),
    ("block_y", "blockY"),
    ("block_z", "blockZ"),
    ("registers", "registersPerThread"),
    ("static_smem", "staticSharedMemory"),
    ("dynamic_smem", "dynamicSharedMemory"),
    ("graph_node_id", "graphNodeId"),
)

#: canonical columns each source column feeds (where the names differ)
_FEEDS: dict[str, set[str]] = {
    "start": {"start", "duration"},
    "end": {"end", "duration"},
    "globalTid": {"pid", "tid"},
    "globalPid": {"pid"},
    "deviceId": {"device"},
    "contextId": {"context"},
    "greenContextId": {"green_context"},
    "streamId": {"stream"},
    "correlationId": {"correlation_id"},
    "nameId": {"name"},
    "eventClass": {"api_kind"},
    "demangledName": {"name"},
    "shortName": {"short_name"},
    "mangledName": {"mangled_name"},
    **{src: {canon} for canon, src in _KERNEL_INTS},
}


class LaunchIndex:
    """(pid, correlationId) -> launching thread, from the CUDA API table."""

    def __init__(self, keys: np.ndarray, tids: np.ndarray) -> None:
        self.keys = keys
        self.tids = tids

    #: rows read at a time when the index is built
    _SLICE_ROWS = 1 << 16

    def __bool__(self) -> bool:
        return len(self.keys) > 0

    @classmethod
    def from_api(cls, api: pa.Table) -> LaunchIndex:
        """Built while the whole API table is in memory: few temporaries of its length.

        API calls come in start order, so their keys are usually sorted already and no
        sort (or gather) is needed; tids fit in 32 bits (24-bit field).
        """
        keys, tid = _index_columns(api)
        if len(keys) < 2 or bool((keys[1:] >= keys[:-1]).all()):
            return cls(keys, tid)
        order = np.argsort(keys, kind="stable")
        return cls(keys[order], tid[order])

    def attach_tid(self, t: pa.Table) -> pa.Table:
        """Set `tid` of GPU rows to their launching call's thread (null when not found)."""
        if t.num_rows == 0:
            return t
        k = _corr_keys(t)
        pos = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        hit = self.keys[pos] == k
        if t["correlation_id"].null_count:
            hit &= valid(t["correlation_id"])
        tid = from_numpy(self.tids[pos].astype(np.int64), ~hit)
        return t.set_column(t.schema.get_field_index("tid"), "tid", tid)


def _index_columns(api: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The launch index's keys (_corr_keys) and int32 tids of `api`, a slice at a time: a
    table spilled to files (load.spill) has the pages of each slice dropped once read,
    so its pid, tid and correlation id never sit whole in memory beside the index."""
    n = api.num_rows
    keys = np.empty(n, np.int64)
    tid = np.empty(n, np.int32)
    step = LaunchIndex._SLICE_ROWS
    for lo in range(0, n, step):
        part = api.slice(lo, step)
        hi = lo + part.num_rows
        keys[lo:hi] = _corr_keys(part)
        tid[lo:hi] = as_int64(part["tid"]).astype(np.int32)
        if spill.active():
            for name in ("pid", "tid", "correlation_id"):
                for chunk in part[name].chunks:
                    _drop_values(chunk)
    return keys, tid


def _drop_values(chunk: pa.Array) -> None:
    """Drop the pages of a (sliced) spilled array's values from the process."""
    data = chunk.buffers()[1]
    if data is not None:
        width = chunk.type.bit_width // 8
        spill.drop(int(data.address) + chunk.offset * width, len(chunk) * width)


def _corr_keys(t: pa.Table) -> np.ndarray:
    """(pid << 32) | (correlationId & 0xFFFFFFFF), one new array where the columns are clean."""
    p = as_int64(t["pid"], 0)  # (from Arrow's buffers: `to_numpy` imports pandas)
    c = as_int64(t["correlation_id"], -1)
    keys = np.left_shift(p, 32)
    if len(c) and int(c.min()) >= 0 and int(c.max()) <= 0xFFFFFFFF:
        return np.bitwise_or(keys, c, out=keys)
    return np.bitwise_or(keys, c & 0xFFFFFFFF, out=keys)


def _times(t: pa.Table) -> dict[str, pa.Array | pa.ChunkedArray]:
    """`start` and `end`; `duration` (end - start) is never assembled (`_without_duration`)."""
    return {"start": t["start"], "end": t["end"]}


def _without_duration(target: pa.Schema) -> pa.Schema:
    """`target` less `duration` where it has `start` and `end`: the trace computes it from
    them on first use (model/stored_columns.py), as it does for a cache entry, which never
    stores it. Assembling it cost 8 bytes a row written, then checked and dropped."""
    names = target.names
    if "duration" in names and "start" in names and "end" in names:
        return target.remove(target.get_field_index("duration"))
    return target


__all__ = ["NsysReader", "encode_strings", "pid_of", "tid_of"]
