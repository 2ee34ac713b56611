"""The normalized trace: canonical Arrow schemas shared by every loader.

Times are int64 nanoseconds from the start of the report; durations are int64 ns.
Names are dictionary-encoded strings. A source fills what it has and leaves the
rest null. Bump SCHEMA_VERSION (in load/cache/key.py) whenever a schema below changes: it
is part of the cache key. `external_id` is Kineto's `External id` (the cpu_op a CUDA call, and
the GPU work it launched, belong to); nsys leaves it null.
"""

from __future__ import annotations

import pyarrow as pa

NAME = pa.dictionary(pa.int32(), pa.string())
I32 = pa.int32()
I64 = pa.int64()


def _fields(*pairs: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t in pairs])


_TIME = (("start", I64), ("end", I64), ("duration", I64))
_GPU_PLACE = (
    ("device", I32),
    ("context", I64),
    ("green_context", I64),
    ("stream", I64),
    ("correlation_id", I64),
    ("pid", I64),
    ("tid", I64),
)

KERNELS = _fields(
    *_TIME,
    *_GPU_PLACE,
    ("name", NAME),
    ("short_name", NAME),
    ("mangled_name", NAME),
    ("grid_x", I32),
    ("grid_y", I32),
    ("grid_z", I32),
    ("block_x", I32),
    ("block_y", I32),
    ("block_z", I32),
    ("registers", I32),
    ("static_smem", I32),
    ("dynamic_smem", I32),
    ("graph_node_id", I64),
    ("external_id", I64),
)

MEMCPY = _fields(
    *_TIME,
    *_GPU_PLACE,
    ("bytes", I64),
    ("copy_kind", NAME),
    ("src_kind", NAME),
    ("dst_kind", NAME),
    ("src_device", I32),
    ("dst_device", I32),
    ("graph_node_id", I64),
    ("external_id", I64),
)

MEMSET = _fields(
    *_TIME,
    *_GPU_PLACE,
    ("bytes", I64),
    ("value", I64),
    ("mem_kind", NAME),
    ("graph_node_id", I64),
    ("external_id", I64),
)

#: whole CUDA graph executions (nsys's default graph trace: the kernels inside are not in
#: `kernels`); `name` is "CUDA graph <graph_id>"
GRAPHS = _fields(
    *_TIME,
    *_GPU_PLACE,
    ("graph_id", I64),
    ("graph_exec_id", I64),
    ("name", NAME),
)

API = _fields(
    *_TIME,
    ("pid", I64),
    ("tid", I64),
    ("correlation_id", I64),
    ("name", NAME),
    ("api_kind", NAME),
    ("return_value", I64),
    ("external_id", I64),
)

NVTX = _fields(
    ("start", I64),
    ("end", I64),
    ("duration", I64),
    ("pid", I64),
    ("tid", I64),
    ("domain", NAME),
    ("text", NAME),
    ("style", NAME),
    ("depth", I32),
    ("external_id", I64),
)

OSRT = _fields(*_TIME, ("pid", I64), ("tid", I64), ("name", NAME), ("return_value", I64))

SYNC = _fields(*_TIME, *_GPU_PLACE, ("sync_type", NAME))

OVERHEAD = _fields(*_TIME, ("pid", I64), ("tid", I64), ("name", NAME))

GPU_MEMORY = _fields(
    ("start", I64),
    ("pid", I64),
    ("device", I32),
    ("stream", I64),
    ("correlation_id", I64),
    ("bytes", I64),
    ("address", I64),
    ("mem_kind", NAME),
    ("operation", NAME),
)

DEVICES = _fields(
    ("device", I32),
    ("name", pa.string()),
    ("chip", pa.string()),
    ("sm_count", I32),
    ("total_memory", I64),
    ("memory_bandwidth", I64),
    ("clock_rate", I64),
    ("compute_major", I32),
    ("compute_minor", I32),
    ("bus", pa.string()),
    ("l2_cache", I64),
    ("max_warps_per_sm", I32),
)

#: Python frames (issue 22), a tree: each frame's caller is `parent_id` (null at the root).
#: `file` as the capture wrote it (nsys: the full path; Kineto: the path below its sys.path
#: entry, "<built-in>" for C functions, "" for `nn.Module: X` marks), `line` the line the
#: frame was at when recorded (nsys: the calling line; Kineto: the function's first line)
FRAMES = _fields(
    ("frame_id", I64),
    ("parent_id", I64),
    ("file", NAME),
    ("line", I32),
    ("function", NAME),
)

#: host calls that carry a Python stack: nsys CUDA API calls with a Python backtrace (joined
#: to the api row's correlation_id), Kineto cpu_ops recorded with `with_stack=True` (their
#: `External id`, shared by the CUDA calls and GPU work they issued). `frame_id` is the
#: innermost frame of the call's stack; `nested` marks Kineto ops called by another op (not
#: directly from Python).
CALLSITES = _fields(
    ("start", I64),
    ("duration", I64),
    ("pid", I64),
    ("tid", I64),
    ("correlation_id", I64),
    ("external_id", I64),
    ("name", NAME),
    ("nested", pa.bool_()),
    ("frame_id", I64),
)

#: CPU samples (nsys `--sample=process-tree`, issue 34): one row per sample of a thread,
#: `stack_id` its innermost frame in `sample_stacks` (null without a call chain), `function`
#: and `module` that frame's names; `stacked` false where nsys kept only the sampled
#: instruction (no backtrace); `kind` "native" (SAMPLING_CALLCHAINS) or "python" (nsys
#: `--python-sampling`: NVTX marks of the `Python Periodic Sampling` domain)
CPU_SAMPLES = _fields(
    ("start", I64),
    ("pid", I64),
    ("tid", I64),
    ("cpu", I32),
    ("kind", NAME),
    ("function", NAME),
    ("module", NAME),
    ("stacked", pa.bool_()),
    ("stack_id", I64),
)

#: the samples' call stacks as a tree: each node's caller is `parent_id` (null at the
#: outermost frame); `module` the library (native) or the source file (Python, with `line`)
SAMPLE_STACKS = _fields(
    ("node_id", I64),
    ("parent_id", I64),
    ("function", NAME),
    ("module", NAME),
    ("line", I32),
    ("python", pa.bool_()),
)

#: OS thread state from the scheduler (nsys SCHED_EVENTS): `state` "running" from a
#: switch-in to the next switch-out (on `cpu`), "waiting" from a switch-out to the next
#: switch-in of the same thread
THREAD_STATE = _fields(*_TIME, ("pid", I64), ("tid", I64), ("state", NAME), ("cpu", I32))

#: GPU metrics (nsys `--gpu-metrics-devices`): one row per sample of a metric on a GPU,
#: `metric` its name without the unit, `unit` apart ("%", "MHz", ...), `value` in that unit
GPU_METRICS = _fields(
    ("start", I64), ("device", I32), ("metric", NAME), ("unit", NAME), ("value", pa.float64())
)

PROCESSES = _fields(("pid", I64), ("name", pa.string()))
THREADS = _fields(("pid", I64), ("tid", I64), ("name", pa.string()))
STREAMS = _fields(
    ("pid", I64),
    ("device", I32),
    ("context", I64),
    ("stream", I64),
    ("priority", I64),
    ("stream_type", pa.string()),
)

#: canonical table name -> schema; the order is the order users see them in.
TABLES: dict[str, pa.Schema] = {
    "kernels": KERNELS,
    "memcpy": MEMCPY,
    "memset": MEMSET,
    "graphs": GRAPHS,
    "api": API,
    "nvtx": NVTX,
    "osrt": OSRT,
    "sync": SYNC,
    "overhead": OVERHEAD,
    "gpu_memory": GPU_MEMORY,
    "devices": DEVICES,
    "processes": PROCESSES,
    "threads": THREADS,
    "streams": STREAMS,
    "callsites": CALLSITES,
    "frames": FRAMES,
    "cpu_samples": CPU_SAMPLES,
    "sample_stacks": SAMPLE_STACKS,
    "thread_state": THREAD_STATE,
    "gpu_metrics": GPU_METRICS,
}

#: tables of timed events (the rest describe the machine)
EVENT_TABLES = ("kernels", "memcpy", "memset", "graphs", "api", "nvtx", "osrt", "sync", "overhead")


#: columns converted after the first screen (only for sources that can be read again):
#: everything a timeline, the summaries and the events table's first view do not need
DETAIL_COLUMNS: dict[str, tuple[str, ...]] = {
    "kernels": (
        "context",
        "green_context",
        "mangled_name",
        "grid_x",
        "grid_y",
        "grid_z",
        "block_x",
        "block_y",
        "block_z",
        "registers",
        "static_smem",
        "dynamic_smem",
        "graph_node_id",
        "external_id",
    ),
    "api": ("api_kind", "return_value", "external_id"),
}


def core_schema(name: str) -> pa.Schema:
    detail = set(DETAIL_COLUMNS.get(name, ()))
    return pa.schema([f for f in TABLES[name] if f.name not in detail])


def detail_schema(name: str) -> pa.Schema:
    """The detail columns, plus `start` (it orders the rows exactly as the core table)."""
    detail = set(DETAIL_COLUMNS.get(name, ()))
    return pa.schema([f for f in TABLES[name] if f.name in detail or f.name == "start"])


def merge_details(name: str, core: pa.Table, details: pa.Table) -> pa.Table:
    """Core and detail columns of the same rows, in canonical column order."""
    cols = {n: core[n] for n in core.column_names} | {
        n: details[n] for n in details.column_names if n != "start"
    }
    return pa.Table.from_arrays([cols[f.name] for f in TABLES[name]], schema=TABLES[name])


def empty(name: str) -> pa.Table:
    # built from empty arrays: `Schema.empty_table` imports pandas when it is installed
    schema = TABLES[name]
    batch = pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
    return pa.Table.from_batches([batch])


def conform(
    name: str,
    columns: dict[str, pa.Array | pa.ChunkedArray],
    n: int,
    schema: pa.Schema | None = None,
) -> pa.Table:
    """Build table `name` (or the given part of it) from `columns`, casting to canonical types.

    Columns the source does not have become nulls; unknown keys are an error.
    """
    schema = schema or TABLES[name]
    extra = set(columns) - set(TABLES[name].names)
    if extra:
        raise KeyError(f"{name}: unknown columns {sorted(extra)}")
    arrays = []
    for field in schema:
        col = columns.get(field.name)
        if col is None:
            arrays.append(pa.nulls(n, field.type))
        elif col.type != field.type:
            arrays.append(col.cast(field.type))
        else:
            arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=schema)
