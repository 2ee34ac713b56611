"""A PyTorch allocator snapshot (`torch.cuda.memory._dump_snapshot`) as MemoryData.

The trace entries stream through `pickle_stream` into compact columns; the frames of each
are kept only as the entry's user frame (`model.timeline.callsites.is_user_file`, Python
frames only: C++ frames of a `context="all"` recording are skipped).
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tuiperf.errors import BadReportError
from tuiperf.load.gpumem import categories, pickle_stream
from tuiperf.load.gpumem import tables as T
from tuiperf.load.gpumem.spill import Spill
from tuiperf.model.timeline.callsites import is_user_file

#: a pickle stream starts with PROTO (protocol 2+) and the snapshot dict
MAGIC = b"\x80"
_CODE = {a: i for i, a in enumerate(T.ACTIONS)}
#: expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) map and unmap
#: pages of one large segment: reserved grows and shrinks as with segment_alloc/free
_CODE |= {"segment_map": _CODE[T.SEG_ALLOC], "segment_unmap": _CODE[T.SEG_FREE]}
NULL = -(1 << 63)


def is_snapshot(head: bytes) -> bool:
    return len(head) >= 3 and head[:1] == MAGIC and 2 <= head[1] <= 5


class Sites:
    """(user frame, category) pairs, each kept once; a stack's found once per stack."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, int, str, str]] = []
        self._index: dict[tuple[str, int, str, str], int] = {}
        self._of_stack: dict[int, int] = {}
        self._keep: list[Any] = []  # the stacks cached by id, kept alive

    def of_stack(self, stack: tuple[tuple[str, int, str], ...]) -> int:
        got = self._of_stack.get(id(stack))
        if got is None:
            got = self._find(stack)
            self._of_stack[id(stack)] = got
            self._keep.append(stack)
        return got

    def _find(self, stack: tuple[tuple[str, int, str], ...]) -> int:
        cat = categories.of_frames(stack)
        user = ("", 0, "")
        for f in stack:  # innermost first
            if type(f) is not tuple or len(f) != 3 or type(f[0]) is not str:
                continue
            if _is_python(f[0]) and is_user_file(f[0]):
                user = f
                break
        if user[0] == "" and not cat:
            return -1
        key = (*user, cat)
        got = self._index.get(key)
        if got is None:
            got = self._index[key] = len(self.rows)
            self.rows.append(key)
        return got

    def table(self) -> pa.Table:
        n = len(self.rows)
        cols = zip(*self.rows) if n else ((), (), (), ())
        file, line, function, category = (list(c) for c in cols)
        return pa.table(
            {
                "site": pa.array(range(n), pa.int32()),
                "file": pa.array(file, pa.string()),
                "line": pa.array(line, pa.int32()),
                "function": pa.array(function, pa.string()),
                "category": pa.array(category, pa.string()),
            },
            schema=T.SITES,
        )


def _is_python(path: str) -> bool:
    return path.endswith(".py") or (path.startswith("<") and not path.startswith("<built"))


class _Columns:
    def __init__(self) -> None:
        self.c = {k: array("q") for k in ("device", "time", "action", "addr", "size",
                                          "stream", "site", "device_free")}  # fmt: skip


#: a trace longer than this many entries goes to a spill file a chunk at a time (and the
#: events table stays empty): memory does not grow with the trace
SPILL_AT = 1 << 16


class EntrySink:
    """Receives trace entries from the pickle reader; keeps columns, not entries, and
    moves them to a spill file a chunk at a time once there are more than `spill_at`."""

    def __init__(
        self, reader_frames: pickle_stream.Reader | None = None, spill_at: int = SPILL_AT
    ) -> None:
        self.cols = _Columns().c
        self.sites = Sites()
        self.reader: pickle_stream.Reader | None = reader_frames
        self.skipped = 0
        self.spill_at = spill_at
        self.spill: Spill | None = None

    def _flush(self) -> None:
        if self.spill is None:
            self.spill = Spill()
        self.spill.write({k: np.frombuffer(v, np.int64) for k, v in self.cols.items() if len(v)})
        self.cols = _Columns().c

    def __call__(self, device: int, e: dict[str, Any]) -> None:
        code = _CODE.get(e.get("action"))  # type: ignore[arg-type]
        if code is None or device < 0:
            self.skipped += 1  # "snapshot" marks and actions newer than this reader
            return
        c = self.cols
        c["device"].append(device)
        c["action"].append(code)
        c["addr"].append(_int(e.get("addr"), NULL))
        c["size"].append(_int(e.get("size"), 0))
        c["stream"].append(_int(e.get("stream"), NULL))
        t = e.get("time_us")
        c["time"].append(t * 1000 if type(t) is int and 0 <= t < 1 << 53 else NULL)
        c["device_free"].append(_int(e.get("device_free"), NULL))
        c["site"].append(self._site(e.get("frames")))
        if len(c["site"]) >= self.spill_at:
            self._flush()

    def _site(self, frames: Any) -> int:
        if self.reader is None:
            return -1
        return self.sites.of_stack(self.reader.stack_key(frames))

    def finish(self) -> Spill | None:
        """The spill file with every entry, when the trace went to one."""
        if self.spill is not None and len(self.cols["action"]):
            self._flush()
        return self.spill

    def events(self) -> pa.Table:
        """The columns as the events table (empty when they went to the spill file); each
        array is let go once converted, so the peak holds one column twice, not all."""
        if self.spill is not None:
            return T.EVENTS.empty_table()
        c = self.cols
        n = len(c["action"])

        def take(name: str) -> np.ndarray:
            raw = c.pop(name)
            return np.frombuffer(raw, dtype=np.int64) if n else np.zeros(0, np.int64)

        def col(name: str, null: int = NULL) -> pa.Array:
            a = take(name)
            mask = a == null
            return pa.array(a, mask=mask if mask.any() else None)

        out = {
            "device": pa.array(take("device"), pa.int32()),
            "seq": pa.array(np.arange(n, dtype=np.int64)),
            "time_ns": col("time"),
            "action": T.action_array(take("action")),
            "addr": col("addr"),
            "size": col("size"),
            "stream": col("stream"),
            "site": col("site", -1).cast(pa.int32()),
            "allocated_after": pa.nulls(n, pa.int64()),
            "reserved_after": pa.nulls(n, pa.int64()),
            "device_free": col("device_free"),
            "tid": pa.nulls(n, pa.int64()),
        }
        return pa.table(out, schema=T.EVENTS)


def _int(v: Any, default: int) -> int:
    return v if type(v) is int and -(1 << 63) < v < 1 << 63 else default


def load_snapshot(path: Path, spill_at: int | None = None) -> T.MemoryData:
    """Read `path`; a damaged or foreign pickle is one BadReportError line. A trace of more
    than `spill_at` entries is kept in a spill file (MemoryData.spill), not in `events`."""
    sink = EntrySink(spill_at=SPILL_AT if spill_at is None else spill_at)
    try:
        with open(path, "rb") as f:
            reader = pickle_stream.Reader(f, sink)
            sink.reader = reader
            top = pickle_stream.read_with(reader, str(path))
    except OSError as e:
        raise BadReportError(f"{path}: cannot read ({e.strerror or e})") from e
    segments, blocks = _state(top.get("segments"), sink, reader, path)
    notes = [f"{sink.skipped} trace entries of other kinds skipped"] if sink.skipped else []
    settings = top.get("allocator_settings")
    return T.MemoryData(
        kind=T.SNAPSHOT,
        source=str(path),
        spill=sink.finish(),
        events=sink.events(),
        sites=sink.sites.table(),
        segments=segments,
        blocks=blocks,
        settings=settings if isinstance(settings, dict) else {},
        notes=notes,
    )


def _state(
    segs: Any, sink: EntrySink, reader: pickle_stream.Reader, path: Path
) -> tuple[pa.Table, pa.Table]:
    if not isinstance(segs, list):
        raise BadReportError(f"{path}: a pickle, but its `segments` is not a list")
    s: dict[str, list[Any]] = {k: [] for k in T.SEGMENTS.names}
    b: dict[str, list[Any]] = {k: [] for k in T.BLOCKS.names}
    for seg in segs:
        if not isinstance(seg, dict):
            raise BadReportError(f"{path}: a segment of the snapshot is not a dict")
        dev = _int(seg.get("device"), 0)
        addr = _int(seg.get("address"), 0)
        for k, v in (
            ("device", dev),
            ("address", addr),
            ("total_size", seg.get("total_size")),
            ("stream", seg.get("stream")),
            ("allocated_size", seg.get("allocated_size")),
        ):
            s[k].append(_int(v, 0))  # fmt: skip
        s["segment_type"].append(str(seg.get("segment_type", "")))
        blocks = seg.get("blocks")
        for blk in blocks if isinstance(blocks, list) else []:
            if isinstance(blk, dict):
                _block(b, blk, dev, addr, sink, reader)
    return pa.table(s, schema=T.SEGMENTS), pa.table(b, schema=T.BLOCKS)


def _block(
    b: dict[str, list[Any]],
    blk: dict[str, Any],
    dev: int,
    seg: int,
    sink: EntrySink,
    reader: pickle_stream.Reader,
) -> None:
    size = _int(blk.get("size"), 0)
    b["device"].append(dev)
    b["segment"].append(seg)
    b["address"].append(_int(blk.get("address"), 0))
    b["size"].append(size)
    b["requested_size"].append(_int(blk.get("requested_size"), size))
    b["state"].append(str(blk.get("state", "")))
    site = sink.sites.of_stack(reader.stack_key(blk.get("frames")))
    b["site"].append(site if site >= 0 else None)
