"""Each distinct NVTX payload is parsed once (tuiperf/load/nsys/payloads.py); the stacks read
from real reports are checked against SQL in test_cpu_samples_real.py and test_callsites.py."""

from __future__ import annotations

import json

from tuiperf.load.nsys import py_samples, pybt
from tuiperf.load.nsys.payloads import each_once


def test_each_distinct_text_parsed_once_in_order() -> None:
    calls: list[str | None] = []

    def parse(text: str | None) -> int:
        calls.append(text)
        return len(text or "")

    texts = ["ab", None, "ab", "c", None, "", "c", "ab"]
    assert each_once(texts, parse) == [2, 0, 2, 1, 0, 0, 1, 2]
    assert calls == ["ab", None, "c", ""]  # first appearance order, once each


def test_memoized_frames_equal_the_frames_parsed_one_by_one() -> None:
    payload = {"Python Periodic Sampling": {"Frames": [
        {"Function": 3, "File": 4, "Line": 5}, {"Function": 6, "File": 4, "Line": 7}]}}  # fmt: skip
    bt = {pybt.DOMAIN: payload["Python Periodic Sampling"]}
    texts = [json.dumps(payload), "not json", None, json.dumps(payload), "{}"]
    for parse in (py_samples._frames, pybt._frames):
        assert each_once(texts, parse) == [parse(t) for t in texts]
    assert each_once([json.dumps(bt)] * 3, pybt._frames) == [[(3, 4, 5), (6, 4, 7)]] * 3
