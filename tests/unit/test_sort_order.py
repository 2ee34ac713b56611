"""The events table's stable sort: every path (one radix pass, two, renumbered, numpy's
comparison sort) gives numpy's own stable lexicographic order, nulls last."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from tuiperf.model.timeline.query import _NULL_LAST, _packed_key, _stable_order


def _reference(keys: list[np.ndarray]) -> np.ndarray:
    return np.lexsort(keys[::-1]) if len(keys) > 1 else np.argsort(keys[0], kind="stable")


def _uniform(lo: int, hi: int) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda rng, n: rng.integers(lo, hi, n, dtype=np.int64)


def _few(*values: int) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda rng, n: rng.choice(np.array(values, dtype=np.int64), n)


I64 = np.iinfo(np.int64)
CASES = {
    # key columns -> bits of the packed key (0: too wide, numpy's comparison sort)
    "names (one 8-bit pass)": ([_uniform(0, 56)], 6),
    "grid: few values far apart (renumbered)": (
        [_few(1, 2, 96, 18432), _few(1, 8, 128), _few(1, 3, 384)],
        6,
    ),
    "durations (two passes)": ([_uniform(1000, 4_000_000)], 22),
    "negative, renumbered to one pass": ([_uniform(-70_000, -1)], 16),
    "two keys, two passes": ([_uniform(0, 3000), _uniform(0, 3000)], 24),
    "widest two-pass key": ([_few(5), _few(0, 2**32 - 2)], 32),
    "one value too wide": ([_few(5), _few(0, 2**32)], 0),
    "timestamps (too wide)": ([_uniform(0, 2**40)], 0),
    "three wide keys (too wide)": ([_uniform(0, 2**20)] * 3, 0),
    "extremes of int64": ([_few(I64.min, 0, I64.max - 1)], 0),
}


@pytest.mark.parametrize("case", CASES)
def test_every_path_gives_the_stable_lexicographic_order(case: str) -> None:
    makers, bits = CASES[case]
    rng = np.random.default_rng(len(case))
    keys = [make(rng, 50_000) for make in makers]
    packed = _packed_key(keys)
    assert (packed[1] if packed is not None else 0) == bits  # the path this case is for
    assert np.array_equal(_stable_order(keys), _reference(keys))


@pytest.mark.parametrize("nulls", [0.0, 0.3, 1.0])
def test_nulls_sort_last_and_keep_row_order(nulls: float) -> None:
    rng = np.random.default_rng(7)
    k = rng.integers(-500, 500, 20_000, dtype=np.int64)
    k[rng.random(len(k)) < nulls] = _NULL_LAST
    second = rng.integers(0, 3, len(k), dtype=np.int64)
    for keys in ([k], [k, second], [second, k]):
        assert np.array_equal(_stable_order(keys), _reference(keys))


def test_sorted_ties_and_tiny_inputs() -> None:
    for n in (0, 1, 2, 3):
        k = np.zeros(n, dtype=np.int64)
        assert np.array_equal(_stable_order([k]), np.arange(n))
        assert np.array_equal(_stable_order([k, k]), np.arange(n))
    desc = np.arange(10, dtype=np.int64)[::-1].copy()
    assert np.array_equal(_stable_order([desc]), np.arange(10)[::-1])
