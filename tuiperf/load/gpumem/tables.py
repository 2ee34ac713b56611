"""The one shape every GPU memory source is read into.

`events`: the allocator's actions in order (`seq`), one row each: `action` is one of
ACTIONS; `size` the bytes the action is about (an allocation: the bytes asked for, as the
source records them; a segment: its cudaMalloc size); `time_ns` on the source's clock
(null when the source has none); `site` a row of `sites` (null without a user frame);
`allocated_after` / `reserved_after` the totals the source itself reports after the
action (torch.profiler's `Total Allocated` / `Total Reserved`; null elsewhere);
`device_free` what CUDA still had free at an `oom`; `tid` the thread (torch.profiler).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from tuiperf.load.gpumem.spill import Spill
from tuiperf.model.arrays import from_numpy, from_strings

ALLOC = "alloc"
FREE = "free_requested"
FREE_DONE = "free_completed"
SEG_ALLOC = "segment_alloc"
SEG_FREE = "segment_free"
OOM = "oom"
#: device memory that is neither the allocator's nor freed (nsys "Device Static" rows)
STATIC = "static"
ACTIONS = (ALLOC, FREE, FREE_DONE, SEG_ALLOC, SEG_FREE, OOM, STATIC)

#: where the rows came from
SNAPSHOT = "snapshot"
KINETO = "kineto"
NSYS = "nsys"

I32, I64 = pa.int32(), pa.int64()
EVENTS = pa.schema(
    [
        ("device", I32),
        ("seq", I64),
        ("time_ns", I64),
        ("action", pa.dictionary(pa.int8(), pa.string())),
        ("addr", I64),
        ("size", I64),
        ("stream", I64),
        ("site", I32),
        ("allocated_after", I64),
        ("reserved_after", I64),
        ("device_free", I64),
        ("tid", I64),
    ]
)
#: a user frame and what its allocations are for (categories.py; "" unknown); `file` is ""
#: when the stack has no user frame
SITES = pa.schema(
    [
        ("site", I32),
        ("file", pa.string()),
        ("line", I32),
        ("function", pa.string()),
        ("category", pa.string()),
    ]
)
SEGMENTS = pa.schema(
    [
        ("device", I32),
        ("address", I64),
        ("total_size", I64),
        ("stream", I64),
        ("segment_type", pa.string()),
        ("allocated_size", I64),
    ]
)
BLOCKS = pa.schema(
    [
        ("device", I32),
        ("segment", I64),
        ("address", I64),
        ("size", I64),
        ("requested_size", I64),
        ("state", pa.string()),
        ("site", I32),
    ]
)


def empty(schema: pa.Schema) -> pa.Table:
    """`schema.empty_table()`, from empty arrays (that imports pandas when installed)."""
    batch = pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
    return pa.Table.from_batches([batch])


def action_array(codes: Any) -> pa.DictionaryArray:
    """int8 codes into ACTIONS as a dictionary column."""
    # (on buffers: `pa.array` imports pandas; model/arrays.py)
    indices = from_numpy(np.asarray(codes, np.int8))
    return pa.DictionaryArray.from_arrays(indices, from_strings(list(ACTIONS)))


@dataclass
class MemoryData:
    """One memory source, read: the events and, for a snapshot, its state at the dump."""

    kind: str
    source: str
    events: pa.Table
    sites: pa.Table = field(default_factory=lambda: empty(SITES))
    segments: pa.Table = field(default_factory=lambda: empty(SEGMENTS))
    blocks: pa.Table = field(default_factory=lambda: empty(BLOCKS))
    #: the allocator settings the snapshot records (PYTORCH_CUDA_ALLOC_CONF), if any
    settings: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: epoch ns of this source's time 0, when it says (torch.profiler's
    #: baseTimeNanoseconds); a snapshot's times are epoch ns, shifted by the timeline's
    #: origin when one of the same run is given, else by its first entry
    epoch_origin_ns: int | None = None
    #: a long snapshot's trace, on disk (load/gpumem/spill.py); `events` is then empty
    spill: Spill | None = None

    @property
    def devices(self) -> list[int]:
        spilled = self.spill.devices if self.spill is not None else set()
        return sorted(
            set(self.events["device"].to_pylist())
            | set(self.segments["device"].to_pylist())
            | spilled
        )
