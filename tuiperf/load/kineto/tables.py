"""torch.profiler (Kineto) Chrome trace JSON -> the canonical tables.

Mapping (FORMATS.md §7):

* `kernel`, `gpu_memcpy`, `gpu_memset` -> kernels / memcpy / memset. device and
  stream come from args (the event's pid / tid otherwise). Their `pid`/`tid` are
  the launching API call's, found through `args.correlation`; GPU rows whose call
  is missing keep null pid/tid. Memcpy kind and memory kinds are parsed from the
  name (`Memcpy HtoD (Pageable -> Device)` -> Host-to-Device, Pageable, Device),
  with the labels nsys uses. Kineto gives one shared-memory figure, static plus
  dynamic: it goes to `dynamic_smem`, and `static_smem` stays null (unknown).
* `cuda_runtime`, `cuda_driver` -> api (`api_kind` "CUDA runtime" / "CUDA driver").
* `cpu_op`, `user_annotation` -> nvtx ranges on their thread, style PushPop,
  domain = the Kineto category (`cpu_op` or `user_annotation`), depth by nesting
  on the thread (ops and annotations nest together).
* `gpu_user_annotation` -> nvtx ranges in domain `gpu_user_annotation` placed on
  the GPU stream: pid = null (no process owns them), tid = the stream id (CUPTI
  stream ids are unique within a trace; the streams table gives the device).
* `External id` (args of cpu_op, user_annotation, CUDA calls and GPU work) ->
  `external_id` of the nvtx, api and GPU tables: a CUDA call's is the id of its
  innermost enclosing cpu_op, and its GPU work carries the same id.
* `python_function` (with_stack=True) -> frames and callsites (stacks.py).
* `M` events -> processes (CPU processes only, not the "GPU n" rows Kineto always
  writes) and threads; `deviceProperties` -> devices.

Times are int64 ns from the earliest `ts` in the file: round(ts * 1000) minus that
origin; durations are round(dur * 1000). The origin's absolute time is
`baseTimeNanoseconds` + origin, noted in `meta.diagnostics`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tuiperf import schema
from tuiperf.errors import BadReportError
from tuiperf.load.kineto import stacks as kineto_stacks
from tuiperf.load.kineto.collect import API_CATS, NULL, RANGE_CATS, Collected, Collector, Columns
from tuiperf.load.kineto.stream import TraceStream
from tuiperf.load.nesting import nesting_depth
from tuiperf.load.progress import OnProgress, Progress
from tuiperf.model.trace import TraceMeta

_REPORT_EVERY = 64 << 20


def load_kineto(
    path: Path, progress: OnProgress | None = None
) -> tuple[dict[str, pa.Table], TraceMeta]:
    """Read a Kineto trace (`.json` or gzip) into canonical tables and metadata."""
    path = Path(path)
    collected, header = _collect(path, progress)
    if progress is not None:
        progress(Progress("build tables"))
    tables = build_tables(collected, header)
    return tables, _meta(path, collected, header)


def _collect(path: Path, progress: OnProgress | None) -> tuple[Collected, dict[str, Any]]:
    shown = [0]

    def tick(nbytes: int) -> None:
        if progress is not None and nbytes - shown[0] >= _REPORT_EVERY:
            shown[0] = nbytes
            progress(Progress("read events", detail=f"{nbytes >> 20} MiB"))

    stream = TraceStream(path, tick)
    collector = Collector()
    add = collector.add
    for ev in stream:
        add(ev)
    out = collector.out
    if not stream.saw_events:
        raise BadReportError(f"{path}: not a torch.profiler trace (no traceEvents)")
    if not any(len(t) for t in out.tables.values()):
        why = f"; skipped {_skips(out)}" if out.skipped else ""
        raise BadReportError(f"{path}: the trace has no events tuiperf can show{why}")
    return out, stream.header


def _skips(out: Collected) -> str:
    return ", ".join(f"{n} {why}" for why, n in out.skipped.most_common())


# -- columns ------------------------------------------------------------------


def _ns(values: Any) -> np.ndarray:
    return np.rint(np.frombuffer(values, dtype=np.float64) * 1000.0).astype(np.int64)


def _ints(values: Any) -> pa.Array:
    a = np.frombuffer(values, dtype=np.int64) if not isinstance(values, np.ndarray) else values
    mask = a == NULL
    return pa.array(a, mask=mask if mask.any() else None)


def _dict(codes: np.ndarray, labels: list[str]) -> pa.DictionaryArray:
    """Codes into `labels`, re-coded so that the dictionary holds each label once."""
    if len(set(labels)) < len(labels):
        uniq, inverse = np.unique(np.array(labels, dtype=object), return_inverse=True)
        codes, labels = inverse.ravel()[codes], uniq.tolist()
    return pa.DictionaryArray.from_arrays(
        pa.array(np.asarray(codes, dtype=np.int32)), pa.array(labels, pa.string())
    )


def _times(t: Columns, t0: int) -> dict[str, Any]:
    start = _ns(t.cols["ts"]) - t0
    dur = _ns(t.cols["dur"])
    return {"start": start, "end": start + dur, "duration": dur}


def _codes(t: Columns, key: str = "name") -> np.ndarray:
    return np.frombuffer(t.cols[key], dtype=np.int32 if key == "name" else np.int8)


def _sorted(name: str, cols: dict[str, Any], n: int) -> pa.Table:
    table = schema.conform(name, {k: _arrow(v) for k, v in cols.items()}, n)
    starts = table["start"].to_numpy()
    if n > 1 and not bool(np.all(starts[1:] >= starts[:-1])):
        table = table.take(pa.array(np.argsort(starts, kind="stable")))
    return table.combine_chunks()


def _arrow(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return _ints(v) if v.dtype == np.int64 else pa.array(v)
    return v


# -- tables -------------------------------------------------------------------


def build_tables(c: Collected, header: dict[str, Any]) -> dict[str, pa.Table]:
    t0 = round(c.t0 * 1000)
    api = c.tables["api"]
    link = _Link(api)
    out = {
        "kernels": _kernels(c.tables["kernel"], t0, link),
        "memcpy": _memcpy(c.tables["gpu_memcpy"], t0, link),
        "memset": _memset(c.tables["gpu_memset"], t0, link),
        "api": _api(api, t0),
        "nvtx": _nvtx(c.tables["ranges"], t0),
        "devices": _devices(header.get("deviceProperties")),
    }
    if len(c.tables["python"]):
        out["frames"] = kineto_stacks.frames_table(c.tables["python"])
        out["callsites"] = kineto_stacks.callsites_table(c.tables["python"], c.tables["ranges"], t0)
    out["processes"], out["threads"] = _processes(c)
    out["streams"] = _streams(out)
    return {k: v for k, v in out.items() if v.num_rows}


class _Link:
    """correlation id -> the launching API call's pid and tid."""

    def __init__(self, api: Columns) -> None:
        corr = np.frombuffer(api.cols["corr"], dtype=np.int64)
        keep = np.flatnonzero(corr != NULL)
        order = keep[np.argsort(corr[keep], kind="stable")]
        self.corr = corr[order]
        self.pid = np.frombuffer(api.cols["pid"], dtype=np.int64)[order]
        self.tid = np.frombuffer(api.cols["tid"], dtype=np.int64)[order]

    def place(self, corr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if len(self.corr) == 0:
            nulls = np.full(len(corr), NULL, dtype=np.int64)
            return nulls, nulls.copy()
        pos = np.minimum(np.searchsorted(self.corr, corr), len(self.corr) - 1)
        found = (self.corr[pos] == corr) & (corr != NULL)
        return (np.where(found, self.pid[pos], NULL), np.where(found, self.tid[pos], NULL))


def _gpu_common(t: Columns, t0: int, link: _Link) -> dict[str, Any]:
    c = t.cols
    corr = np.frombuffer(c["corr"], dtype=np.int64)
    pid, tid = link.place(corr)
    return {
        **_times(t, t0),
        "device": np.frombuffer(c["pid"], dtype=np.int64),
        "stream": np.frombuffer(c["tid"], dtype=np.int64),
        "context": np.frombuffer(c["context"], dtype=np.int64),
        "correlation_id": corr,
        "external_id": np.frombuffer(c["ext"], dtype=np.int64),
        "pid": pid,
        "tid": tid,
    }


def _kernels(t: Columns, t0: int, link: _Link) -> pa.Table:
    c = t.cols
    codes = _codes(t)
    cols = _gpu_common(t, t0, link)
    cols["name"] = _dict(codes, t.names.values)
    cols["short_name"] = _dict(codes, [short_kernel_name(n) for n in t.names.values])
    for key in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers"):
        cols[key] = np.frombuffer(c[key], dtype=np.int64)
    cols["dynamic_smem"] = np.frombuffer(c["smem"], dtype=np.int64)
    return _sorted("kernels", cols, len(t))


def _memcpy(t: Columns, t0: int, link: _Link) -> pa.Table:
    codes = _codes(t)
    parsed = [memcpy_kinds(n) for n in t.names.values]
    cols = _gpu_common(t, t0, link)
    cols["bytes"] = np.frombuffer(t.cols["bytes"], dtype=np.int64)
    for i, key in enumerate(("copy_kind", "src_kind", "dst_kind")):
        cols[key] = _dict(codes, [p[i] for p in parsed])
    return _sorted("memcpy", cols, len(t))


def _memset(t: Columns, t0: int, link: _Link) -> pa.Table:
    cols = _gpu_common(t, t0, link)
    cols["bytes"] = np.frombuffer(t.cols["bytes"], dtype=np.int64)
    cols["mem_kind"] = _dict(_codes(t), [memset_kind(n) for n in t.names.values])
    return _sorted("memset", cols, len(t))


def _api(t: Columns, t0: int) -> pa.Table:
    c = t.cols
    cols = {
        **_times(t, t0),
        "pid": np.frombuffer(c["pid"], dtype=np.int64),
        "tid": np.frombuffer(c["tid"], dtype=np.int64),
        "correlation_id": np.frombuffer(c["corr"], dtype=np.int64),
        "external_id": np.frombuffer(c["ext"], dtype=np.int64),
        "name": _dict(_codes(t), t.names.values),
        "api_kind": _dict(_codes(t, "kind"), ["CUDA runtime", "CUDA driver"][: len(API_CATS)]),
    }
    return _sorted("api", cols, len(t))


def _nvtx(t: Columns, t0: int) -> pa.Table:
    c = t.cols
    n = len(t)
    domain = _codes(t, "domain")
    on_gpu = domain == RANGE_CATS.index("gpu_user_annotation")
    cols = {
        **_times(t, t0),
        "pid": np.where(on_gpu, NULL, np.frombuffer(c["pid"], dtype=np.int64)),
        "tid": np.frombuffer(c["tid"], dtype=np.int64),
        "domain": _dict(domain, list(RANGE_CATS)),
        "text": _dict(_codes(t), t.names.values),
        "style": _dict(np.zeros(n, dtype=np.int32), ["PushPop"]),
        "external_id": np.frombuffer(c["ext"], dtype=np.int64),
    }
    table = schema.conform("nvtx", {k: _arrow(v) for k, v in cols.items()}, n)
    if n:
        order = np.lexsort((-cols["end"], cols["start"]))
        table = table.take(pa.array(order))
    depth = nesting_depth(table)
    return table.set_column(table.schema.get_field_index("depth"), "depth", depth).combine_chunks()


# -- names --------------------------------------------------------------------

_COPY_KINDS = {
    "HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "HtoA": "Host-to-Array",
    "AtoH": "Array-to-Host", "AtoA": "Array-to-Array", "AtoD": "Array-to-Device",
    "DtoA": "Device-to-Array", "DtoD": "Device-to-Device", "HtoH": "Host-to-Host",
    "PtoP": "Peer-to-Peer",
}  # fmt: skip
_MEMCPY = re.compile(r"Memcpy (\w+) \(([^()]*?) -> ([^()]*?)\)$")
_MEMSET = re.compile(r"Memset \(([^()]*)\)$")


def memcpy_kinds(name: str) -> tuple[str, str, str]:
    """`Memcpy HtoD (Pageable -> Device)` -> ("Host-to-Device", "Pageable", "Device")."""
    m = _MEMCPY.match(name)
    if m is None:
        return ("Unknown", "Unknown", "Unknown")
    return (_COPY_KINDS.get(m.group(1), "Unknown"), m.group(2), m.group(3))


def memset_kind(name: str) -> str:
    m = _MEMSET.match(name)
    return m.group(1) if m else "Unknown"


def short_kernel_name(name: str) -> str:
    """The function's own name, as nsys's shortName: no return type, scope,
    template arguments or parameters (`void at::native::foo<float>(...)` -> `foo`)."""
    text = name
    if text.endswith(")"):
        text = text[: _open_of(text, len(text) - 1, "(", ")")]
    if text.endswith(">"):
        text = text[: _open_of(text, len(text) - 1, "<", ">")]
    text = text.rstrip()
    cut = max(text.rfind(" "), text.rfind("::") + 1 if "::" in text else -1)
    short = text[cut + 1 :] if cut >= 0 else text
    return short or name


def _open_of(text: str, close_at: int, opener: str, closer: str) -> int:
    """Index of the bracket matching the one at `close_at`; 0 if unbalanced."""
    depth = 0
    for i in range(close_at, -1, -1):
        ch = text[i]
        if ch == closer:
            depth += 1
        elif ch == opener:
            depth -= 1
            if depth == 0:
                return i
    return len(text)


# -- machine ------------------------------------------------------------------


def _devices(props: Any) -> pa.Table:
    rows = [p for p in props if isinstance(p, dict)] if isinstance(props, list) else []

    def col(key: str) -> list[Any]:
        return [_num(p.get(key)) for p in rows]

    warps = [_ratio(p.get("maxThreadsPerMultiprocessor"), p.get("warpSize")) for p in rows]
    cols = {
        "device": pa.array(col("id"), pa.int32()),
        "name": pa.array([str(p.get("name", "")) for p in rows], pa.string()),
        "sm_count": pa.array(col("numSms"), pa.int32()),
        "total_memory": pa.array(col("totalGlobalMem"), pa.int64()),
        "compute_major": pa.array(col("computeMajor"), pa.int32()),
        "compute_minor": pa.array(col("computeMinor"), pa.int32()),
        "max_warps_per_sm": pa.array(warps, pa.int32()),
    }
    return schema.conform("devices", cols, len(rows))


def _ratio(a: Any, b: Any) -> int | None:
    x, y = _num(a), _num(b)
    return x // y if x is not None and y else None


def _num(v: Any) -> int | None:
    return v if type(v) is int and abs(v) < 2**62 else None


def _processes(c: Collected) -> tuple[pa.Table, pa.Table]:
    """CPU processes and threads: those that ran API calls or ranges."""
    seen: set[tuple[int, int]] = set()
    for name in ("api", "ranges"):
        t = c.tables[name]
        pid = np.frombuffer(t.cols["pid"], dtype=np.int64)
        tid = np.frombuffer(t.cols["tid"], dtype=np.int64)
        if name == "ranges":
            cpu = np.frombuffer(t.cols["domain"], dtype=np.int8) != RANGE_CATS.index(
                "gpu_user_annotation"
            )
            pid, tid = pid[cpu], tid[cpu]
        if len(pid):
            seen.update(map(tuple, np.unique(np.stack([pid, tid], axis=1), axis=0).tolist()))
    threads = sorted(seen)
    pids = sorted({p for p, _ in threads})
    procs = schema.conform("processes", {
        "pid": pa.array(pids, pa.int64()),
        "name": pa.array([c.process_names.get(p, "") for p in pids], pa.string()),
    }, len(pids))  # fmt: skip
    thr = schema.conform("threads", {
        "pid": pa.array([p for p, _ in threads], pa.int64()),
        "tid": pa.array([t for _, t in threads], pa.int64()),
        "name": pa.array([_thread_name(c, k) for k in threads], pa.string()),
    }, len(threads))  # fmt: skip
    return procs, thr


def _thread_name(c: Collected, key: tuple[int, int]) -> str:
    """Kineto may name a thread twice (`python3`, then `pt_autograd_0`): keep the
    name that says more than the process name."""
    labels = [thread_label(n) for n in c.thread_names.get(key, [])]
    special = [n for n in labels if n and n != c.process_names.get(key[0])]
    return (special or labels or [""])[-1]


_THREAD = re.compile(r"thread \d+ \((.*)\)$")


def thread_label(name: str) -> str:
    """Kineto's `thread 8795 (pt_autograd_0)` -> `pt_autograd_0`."""
    m = _THREAD.match(name)
    return m.group(1) if m else name.strip()


def _streams(tables: dict[str, pa.Table]) -> pa.Table:
    """Each (device, context, stream) that ran GPU work, with the process that used it."""
    parts = [tables[n].select(["device", "context", "stream", "pid"]) for n in
             ("kernels", "memcpy", "memset") if tables[n].num_rows]  # fmt: skip
    if not parts:
        return schema.empty("streams")
    t = (
        pa.concat_tables(parts)
        .group_by(["device", "context", "stream"])
        .aggregate([("pid", "min")])
    )
    t = t.sort_by([("device", "ascending"), ("stream", "ascending")])
    cols = {k: t[k] for k in ("device", "context", "stream")} | {"pid": t["pid_min"]}
    return schema.conform("streams", cols, t.num_rows)


# -- metadata -----------------------------------------------------------------


def _meta(path: Path, c: Collected, header: dict[str, Any]) -> TraceMeta:
    t0 = round(c.t0 * 1000)
    capture = sorted(str(k) for k in c.categories)
    capture += [k for k in ("record_shapes", "profile_memory", "with_stack", "with_flops")
                if header.get(k)]  # fmt: skip
    base = header.get("baseTimeNanoseconds")
    origin = f"time 0 = the earliest event (ts {t0} ns"
    if type(base) is int:
        origin += f"; epoch ns {base + t0} with baseTimeNanoseconds {base}"
    diagnostics = [origin + ")"]
    if c.skipped:
        diagnostics.append(f"skipped {_skips(c)}")
    versions = [
        f"{k} {header[k]}"
        for k in ("cupti_version", "cuda_runtime_version", "cuda_driver_version")
        if k in header
    ]
    return TraceMeta(
        source=str(path),
        format="kineto",
        tool="torch.profiler (Kineto)",
        tool_version=", ".join(versions),
        export_schema=f"schemaVersion {header.get('schemaVersion', '?')}",
        duration_ns=max(round(c.t1 * 1000) - t0, 0) if c.t1 > c.t0 else 0,
        capture=capture,
        diagnostics=diagnostics,
        source_tables=[
            f"{k} {n}" for k, n in sorted(c.categories.items(), key=lambda kv: str(kv[0]))
        ],
        untraced_step_ns=_untraced(header.get(UNTRACED_KEY)),
    )


#: tuiperf.torch's metadata key for the untraced step time (tuiperf.torch.UNTRACED_KEY)
UNTRACED_KEY = "tuiperf_untraced_step_ns"


def _untraced(value: Any) -> int | None:
    try:
        ns = int(value)
    except (TypeError, ValueError):
        return None
    return ns if ns > 0 else None
