"""Per-group duration statistics, computed the way `nsys stats` does (vectorized)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class GroupStats:
    """One row per group, in ascending key order; arrays of equal length."""

    keys: np.ndarray
    total: np.ndarray
    count: np.ndarray
    mean: np.ndarray
    median: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    stdev: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)

    def order_by_total(self) -> np.ndarray:
        """Row order of the nsys reports: total descending, ties by key ascending."""
        return np.lexsort((self.keys, -self.total))


def group_stats(keys: np.ndarray, values: np.ndarray) -> GroupStats:
    """Total, count, mean, median (mean of the middle two), min, max, sample stdev.

    `values` are int64 (ns or bytes). The stdev is 0.0 for a group of one, as
    `nsys stats` prints it. Temporaries are few and reused in place: each new array
    of a 1M-row input is 8 MB of fresh pages, which is most of the cost where page
    faults are slow.
    """
    keys = np.asarray(keys)
    values = np.asarray(values, dtype=np.int64)
    if len(keys) == 0:
        z = np.zeros(0)
        zi = np.zeros(0, dtype=np.int64)
        return GroupStats(zi, zi, zi, z, z, zi, zi, z)
    sk, sv = _sorted_pairs(keys, values)
    starts = np.concatenate(([0], np.flatnonzero(sk[1:] != sk[:-1]) + 1))
    count = np.diff(np.append(starts, len(sk)))
    total = np.add.reduceat(sv, starts)
    mean = total / count
    lo = sv[starts + (count - 1) // 2]
    hi = sv[starts + count // 2]
    median = (lo + hi) / 2
    dev = np.repeat(mean, count)
    np.subtract(sv, dev, out=dev)
    np.multiply(dev, dev, out=dev)
    ss = np.add.reduceat(dev, starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(count > 1, ss / np.maximum(count - 1, 1), 0.0)
    return GroupStats(
        keys=sk[starts],
        total=total,
        count=count,
        mean=mean,
        median=median,
        minimum=sv[starts],
        maximum=sv[starts + count - 1],
        stdev=np.sqrt(var),
    )


def _sorted_pairs(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, values) sorted by key, then value, as int64.

    Where both are non-negative and fit side by side in 63 bits (group codes and
    durations almost always do) one in-place sort of the packed pair replaces a
    lexsort and two gathers: about 5x faster at 1M rows.
    """
    kmax, vmin, vmax = int(keys.max()), int(values.min()), int(values.max())
    vbits = max(vmax.bit_length(), 1)
    if int(keys.min()) >= 0 and vmin >= 0 and kmax.bit_length() + vbits <= 63:
        packed = keys.astype(np.int64)  # the one new array the sort works in
        packed <<= vbits
        packed |= values
        packed.sort()
        sk = packed >> vbits
        packed &= (1 << vbits) - 1
        return sk, packed
    keys = keys.astype(np.int64, copy=False)
    order = np.lexsort((values, keys))
    return keys[order], values[order]
