"""group_stats against a plain-Python reference, on both of its sort paths."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from tuiperf.model.groupstats import group_stats


def _reference(keys: list[int], values: list[int]) -> dict[int, tuple[float, ...]]:
    groups: dict[int, list[int]] = {}
    for k, v in zip(keys, values):
        groups.setdefault(k, []).append(v)
    out = {}
    for k, vs in groups.items():
        sd = statistics.stdev(vs) if len(vs) > 1 else 0.0
        out[k] = (sum(vs), len(vs), statistics.median(vs), min(vs), max(vs), sd)
    return out


@pytest.mark.parametrize(
    "key_span, low, high",
    [
        (40, 0, 10**7),  # codes and durations: the packed single-sort path
        (40, -(10**6), 10**6),  # negative values: the lexsort path
        (2**45, 0, 10**7),  # wide keys (combined nvtx keys): too wide to pack, lexsort
    ],
)
def test_group_stats_matches_reference(key_span: int, low: int, high: int) -> None:
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 40, 5000) * (key_span // 40)
    values = rng.integers(low, high, 5000, dtype=np.int64)
    st = group_stats(keys, values)
    ref = _reference(keys.tolist(), values.tolist())
    assert st.keys.tolist() == sorted(ref)
    for i, k in enumerate(st.keys.tolist()):
        total, count, med, lo, hi, sd = ref[k]
        assert (int(st.total[i]), int(st.count[i])) == (total, count)
        assert (int(st.minimum[i]), int(st.maximum[i])) == (lo, hi)
        assert st.median[i] == pytest.approx(med, rel=1e-12)
        assert st.stdev[i] == pytest.approx(sd, rel=1e-9)


def test_single_value_groups_and_empty() -> None:
    st = group_stats(np.array([3, 1]), np.array([5, 0]))
    assert st.keys.tolist() == [1, 3]
    assert st.stdev.tolist() == [0.0, 0.0]
    assert st.median.tolist() == [0.0, 5.0]
    assert len(group_stats(np.array([], np.int64), np.array([], np.int64))) == 0
