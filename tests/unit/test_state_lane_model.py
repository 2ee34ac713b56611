"""Thread state cells on hand-built intervals (model/timeline/state_lane.py): a column is
running when the thread ran at least as long as it waited inside it (a tie is running, one
ns more waiting is waiting), blank where no interval reaches; the interval at a time."""

from __future__ import annotations

import numpy as np

from tuiperf.model.timeline.state_lane import RUNNING, UNKNOWN, WAITING, ThreadStates


def _states(*ivs: tuple[int, int, bool]) -> ThreadStates:
    a = np.array(ivs, dtype=object)
    return ThreadStates(1, 1, a[:, 0].astype(np.int64), a[:, 1].astype(np.int64),
                        a[:, 2].astype(bool))  # fmt: skip


def test_majority_at_the_boundary() -> None:
    # columns of 100 ns from 0: [0,100) [100,200) [200,300) [300,400) [400,500)
    st = _states((50, 150, True), (150, 250, False), (250, 349, True), (349, 360, False),
                 (400, 450, False), (450, 500, True))  # fmt: skip
    edges = np.arange(0, 501, 100)
    run, wait = st.shares(edges)
    assert run.tolist() == [50, 50, 50, 49, 50]
    assert wait.tolist() == [0, 50, 50, 11, 50]
    # col 1 and 2: 50 ran, 50 waited (tie: running); col 3: 49 vs 11; col 4: tie again
    assert st.states(edges).tolist() == [RUNNING, RUNNING, RUNNING, RUNNING, RUNNING]
    st = _states((100, 149, True), (149, 200, False))  # 49 ran, 51 waited
    assert st.states(edges).tolist() == [UNKNOWN, WAITING, UNKNOWN, UNKNOWN, UNKNOWN]
    st = _states((100, 150, True), (150, 200, False))  # 50 and 50
    assert st.states(edges).tolist()[1] == RUNNING


def test_interval_at_a_time() -> None:
    st = _states((10, 20, True), (20, 35, False), (40, 50, True))  # a gap 35..40
    assert st.at(9) is None
    assert st.at(10) == (True, 10, 20)
    assert st.at(20) == (False, 20, 35)
    assert st.at(34.5) == (False, 20, 35)
    assert st.at(37) is None
    assert st.at(50) is None
