"""The next or previous event with the same name: from a kernel on the timeline to its
next launch, without going through the events table's filter."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.trace import Trace

#: the column that names an event of each table
NAME_COLUMN = {"kernels": "name", "api": "name", "osrt": "name", "nvtx": "text"}


def _codes(col: pa.ChunkedArray) -> np.ndarray:
    """An integer per row, equal for equal names (dictionary indices, unified)."""
    if pa.types.is_dictionary(col.type):
        col = col.unify_dictionaries()
        return np.concatenate([c.indices.fill_null(-1).to_numpy() for c in col.chunks] or [[]])
    return pc.dictionary_encode(col).combine_chunks().indices.fill_null(-1).to_numpy()


def next_same_name(trace: Trace, table: str, row: int, direction: int) -> int | None:
    """The row of `table` with the same name as `row` that starts next (direction 1) or
    last before it (-1), in start order (rows starting together: in row order)."""
    column = NAME_COLUMN.get(table)
    if column is None or not trace.has(table):
        return None
    t = trace.table(table, [column, "start"])
    if not 0 <= row < t.num_rows:
        return None
    codes = _codes(t[column])
    if codes[row] < 0:
        return None
    same = np.flatnonzero(codes == codes[row])
    starts = t["start"].fill_null(0).to_numpy()[same]
    order = same[np.lexsort((same, starts))]
    at = int(np.flatnonzero(order == row)[0]) + (1 if direction > 0 else -1)
    return int(order[at]) if 0 <= at < len(order) else None
