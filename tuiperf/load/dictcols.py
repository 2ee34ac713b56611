"""Id columns -> dictionary-encoded string columns, with compact dictionaries."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.arrays import as_int64, from_numpy, valid
from tuiperf.schema import NAME


class StringTable:
    """An id -> string lookup (StringIds, an ENUM_* table) that encodes id columns."""

    def __init__(self, ids: np.ndarray, values: pa.Array) -> None:
        order = np.argsort(ids, kind="stable")
        self.ids = np.asarray(ids, dtype=np.int64)[order]
        self.values = values.take(from_numpy(order)) if len(order) else values
        n = len(self.ids)
        self.dense = bool(n and self.ids[0] == 0 and self.ids[-1] == n - 1)

    @classmethod
    def from_pairs(cls, pairs: dict[int, str]) -> StringTable:
        ids = np.fromiter(pairs.keys(), dtype=np.int64, count=len(pairs))
        return cls(ids, pa.array(list(pairs.values()), pa.string()))

    def positions(self, col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Index into `values` for each id, and a mask of the ids that were found."""
        # (from Arrow's buffers: `to_numpy` imports pandas when it is installed)
        ids = as_int64(col, 0)
        known = valid(col) if col.null_count else None
        if self.dense:
            found = (ids >= 0) & (ids < len(self.ids))
            pos = np.where(found, ids, 0)
        else:
            pos = np.searchsorted(self.ids, ids)
            pos = np.minimum(pos, max(len(self.ids) - 1, 0))
            found = (self.ids[pos] == ids) if len(self.ids) else np.zeros(len(ids), bool)
        if known is not None:
            found &= known
        return pos.astype(np.int64), found

    def encode(self, col: pa.ChunkedArray | pa.Array) -> pa.DictionaryArray:
        pos, found = self.positions(col)
        return compact_dictionary(pos, found, self.values)

    def encode_full(self, col: pa.ChunkedArray | pa.Array) -> pa.DictionaryArray:
        """Indices into the whole lookup (no compaction): batches then share one dictionary."""
        pos, found = self.positions(col)
        indices = from_numpy(pos.astype(np.int32), ~found)
        return pa.DictionaryArray.from_arrays(indices, self.values.cast(pa.string()))


def compact_dictionary(pos: np.ndarray, found: np.ndarray, values: pa.Array) -> pa.DictionaryArray:
    """A dictionary array over only the values that `pos` uses.

    `pos` (any integer dtype) may become the indices buffer itself: with every value used
    and 32-bit positions nothing is copied, and no 64-bit temporaries the size of the
    column are made (at 2.5M API rows they were the peak of a conversion).
    """
    all_found = bool(found.all())
    used = np.zeros(len(values) + 1, dtype=bool)
    used[pos if all_found else pos[found]] = True
    keep = np.flatnonzero(used[: len(values)])
    if len(keep) == len(values):  # every value is used: the positions are the indices
        indices = pos.astype(np.int32, copy=False)
        dictionary = values
    else:
        remap = (np.cumsum(used) - 1).astype(np.int32)
        indices = remap[pos]
        dictionary = values.take(from_numpy(keep)) if len(keep) else pa.nulls(0, pa.string())
    arr = from_numpy(indices.astype(np.int32, copy=False), None if all_found else ~found)
    return pa.DictionaryArray.from_arrays(arr, dictionary.cast(pa.string()))


def encode_strings(values: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """Dictionary-encode a plain string column."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    out = pc.dictionary_encode(values.cast(pa.string()))
    return out.cast(NAME)
