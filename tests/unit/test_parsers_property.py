"""Property-based tests of the text parsers: ncu CSV exports and Kineto JSON traces.

Whatever the bytes, a parser returns tables or raises BadReportError (one line); what it
is given in the right shape comes back with the same values.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import pyarrow.compute as pc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tuiperf.errors import BadReportError
from tuiperf.load.kineto.tables import load_kineto
from tuiperf.load.ncu.csv_export import load_ncu_csv

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEADER = ["ID", "Kernel Name", "Block Size", "Grid Size", "Section Name", "Metric Name",
          "Metric Unit", "Metric Value"]  # fmt: skip


def _file(data: bytes | str, suffix: str) -> Path:
    with tempfile.NamedTemporaryFile(delete=False, suffix=suffix) as f:
        f.write(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    return Path(f.name)


def _fails_cleanly(load, path: Path) -> None:  # type: ignore[no-untyped-def]
    try:
        load(path)
    except BadReportError as e:
        assert "\n" not in str(e)
    finally:
        path.unlink()


# --- ncu CSV ---------------------------------------------------------------------------------

_cells = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
_csv_rows = st.lists(st.lists(_cells, max_size=10), max_size=8)


@SETTINGS
@given(st.binary(max_size=2000))
def test_ncu_csv_any_bytes(data: bytes) -> None:
    _fails_cleanly(load_ncu_csv, _file(data, ".csv"))


@SETTINGS
@given(_csv_rows, st.booleans())
def test_ncu_csv_any_rows_under_a_real_header(rows: list[list[str]], preamble: bool) -> None:
    buf = io.StringIO()
    if preamble:
        buf.write("==PROF== Connected to process 1\n")
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(HEADER)
    w.writerows(rows)
    _fails_cleanly(load_ncu_csv, _file(buf.getvalue(), ".csv"))


_metric = st.tuples(
    st.sampled_from(["SpeedOfLight", "Occupancy", "LaunchStats"]),
    st.text("abcdefgh XYZ", min_size=1, max_size=10).map(str.strip).filter(bool),
    st.sampled_from(["", "byte", "cycle", "%", "ns", "us", "Kbyte"]),
    st.integers(0, 10**9),
)


@SETTINGS
@given(st.dictionaries(st.integers(0, 50), st.lists(_metric, min_size=1, max_size=5),
                       min_size=1, max_size=5))  # fmt: skip
def test_ncu_csv_values_come_back(kernels: dict[int, list[tuple[str, str, str, int]]]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(HEADER)
    want = {}
    for kid, metrics in kernels.items():
        for section, label, unit, value in metrics:
            w.writerow([kid, f"k{kid}", "(32, 1, 1)", "(4, 1, 1)", section, label, unit,
                        f"{value:,}"])  # fmt: skip
            scale = {"us": 1000, "Kbyte": 1000}.get(unit, 1)
            want[(kid, section, label)] = value * scale
    path = _file(buf.getvalue(), ".csv")
    try:
        tables, _ = load_ncu_csv(path)
    finally:
        path.unlink()
    assert tables["kernels"].num_rows == len(kernels)
    got = {}
    for row in tables["metrics"].to_pylist():
        got[(row["kernel_id"], row["section_name"], row["label"])] = row["value"]
    for k, v in want.items():  # the last row of a duplicated label wins in both
        assert got[k] == v


# --- Kineto JSON -----------------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=4),
    max_leaves=20,
)  # fmt: skip
_event_keys = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.sampled_from(["X", "i", "M", "f", 3]),
        "cat": st.sampled_from(["kernel", "cuda_runtime", "cpu_op", "gpu_memcpy", "x", None]),
        "name": _json,
        "ts": _json,
        "dur": _json,
        "pid": _json,
        "tid": _json,
        "args": _json,
    },
)


@SETTINGS
@given(_json)
def test_kineto_any_json(doc: object) -> None:
    _fails_cleanly(load_kineto, _file(json.dumps(doc), ".json"))


@SETTINGS
@given(st.lists(_event_keys, max_size=12))
def test_kineto_any_events(events: list[dict[str, object]]) -> None:
    _fails_cleanly(load_kineto, _file(json.dumps({"traceEvents": events}), ".json"))


@SETTINGS
@given(st.binary(max_size=600), st.sampled_from([".json", ".json.gz"]))
def test_kineto_any_bytes(data: bytes, suffix: str) -> None:
    _fails_cleanly(load_kineto, _file(data, suffix))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5)), min_size=1,
                max_size=30))  # fmt: skip
def test_kineto_kernel_times_come_back(spans: list[tuple[int, int]]) -> None:
    """ts/dur in microseconds with fractions -> integer ns from the first event."""
    events = [
        {"ph": "X", "cat": "kernel", "name": f"k{i % 3}", "pid": 0, "tid": 7,
         "ts": ts / 1000, "dur": dur / 1000, "args": {"device": 0, "stream": 7}}
        for i, (ts, dur) in enumerate(spans)
    ]  # fmt: skip
    path = _file(json.dumps({"traceEvents": events}), ".json")
    try:
        tables, _ = load_kineto(path)
    finally:
        path.unlink()
    k = tables["kernels"]
    assert k.num_rows == len(spans)
    t0 = min(ts for ts, _ in spans)
    want = sorted((ts - t0, dur) for ts, dur in spans)
    got = sorted(zip(k["start"].to_pylist(), k["duration"].to_pylist()))
    assert got == want
    assert pc.all(pc.equal(pc.subtract(k["end"], k["start"]), k["duration"])).as_py()
