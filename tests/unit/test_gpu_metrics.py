"""GPU metrics from nsys (issue 34 item 2): the gpu_metrics table and the `gpu_metrics`
summary, checked against SQL over the real export (tests/data/cpu_samples/metrics.sqlite:
nsys 2025.3.1 `--gpu-metrics-devices=all` on an H200, NVTX `step 3` … `step 8`) and a
hand-built export (two GPUs, a clock in Hz, a sample of an unnamed metric)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.support.data import unxz
from tuiperf.analysis.budget.metrics_report import metrics_table
from tuiperf.errors import BadReportError
from tuiperf.load.nsys.gpu_metrics import read_gpu_metrics
from tuiperf.load.nsys.source import SqliteSource
from tuiperf.load.nsys.tables import NsysReader
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
METRICS = ROOT / "tests/data/cpu_samples/metrics.sqlite.xz"


@pytest.fixture(scope="module")
def real() -> tuple[Path, Trace]:
    path = unxz(METRICS)
    return path, open_trace(path, OpenOptions(use_cache=False))


def _sql(path: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


def test_every_sample_with_its_name_device_and_value(real) -> None:
    path, trace = real
    want = _sql(path, "SELECT g.timestamp, g.typeId & 255, n.metricName, g.value "
                "FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS n "
                "ON n.typeId = g.typeId AND n.metricId = g.metricId")  # fmt: skip
    t = trace.table("gpu_metrics").to_pylist()
    assert len(t) == len(want) == 117062
    got = sorted((r["start"], r["device"], f"{r['metric']} [{r['unit']}]", r["value"]) for r in t)
    exp = []
    for ts, dev, name, v in want:  # the units as the table writes them, by hand
        if name.endswith("[MHz]"):
            exp.append((ts, dev, name, v / 1e6))
        else:
            exp.append((ts, dev, name.replace("[Throughput %]", "[%]"), float(v)))
    assert got == sorted(exp)


def test_means_over_the_report_and_the_steady_steps(real) -> None:
    """Per-sample means, as the summary says; steady = steps 4 … 8 (step 3, the first, is
    the start-up): from step 4's start to step 8's end, the NVTX ranges by SQL."""
    path, trace = real
    (lo,), (hi,) = (_sql(path, f"SELECT {c} FROM NVTX_EVENTS WHERE text = '{s}'")[0]
                    for c, s in (("start", "step 4"), ("end", "step 8")))  # fmt: skip
    q = ("SELECT n.metricName, count(*), avg(g.value), max(g.value), "
         "sum(g.timestamp >= {lo} AND g.timestamp < {hi}), "
         "avg(CASE WHEN g.timestamp >= {lo} AND g.timestamp < {hi} THEN g.value END) "
         "FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS n "
         "ON n.typeId = g.typeId AND n.metricId = g.metricId GROUP BY n.metricId")  # fmt: skip
    want = {r[0]: r[1:] for r in _sql(path, q.format(lo=lo, hi=hi))}
    rows = metrics_table(trace).head()
    assert len(rows) == len(want) == 22
    for r in rows:
        n, mean, top, n_steady, steady = want[_full(str(r["metric"]), str(r["unit"]))]
        k = 1e6 if r["unit"] == "MHz" else 1.0
        assert r["device"] == 0 and r["samples"] == n and r["steady_samples"] == n_steady
        assert r["mean"] == pytest.approx(mean / k, rel=1e-12)
        assert r["max"] == pytest.approx(top / k, rel=1e-12)
        assert r["steady_mean"] == pytest.approx(steady / k, rel=1e-12)
    by = {r["metric"]: r for r in rows if r["unit"] == "%"}
    assert by["SMs Active"]["samples"] == 5321 and by["SMs Active"]["steady_samples"] == 4125


def _full(metric: str, unit: str) -> str:
    return f"{metric} [{'Throughput %' if unit == '%' else unit}]"


def _tiny(path: Path, value: str = "40") -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE GPU_METRICS (rawTimestamp INTEGER, timestamp INTEGER, "
               "typeId INTEGER, metricId INTEGER, value INTEGER)")  # fmt: skip
    db.execute("CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, sourceId INTEGER, "
               "typeName TEXT, metricId INTEGER, metricName TEXT)")  # fmt: skip
    t0, t1 = 0x0001000100000000, 0x0001000100000001  # GPU 0, GPU 1
    db.executemany("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, ?, '', ?, ?)", [
        (t0, t0, 0, "GPC Clock Frequency [MHz]"), (t0, t0, 3, "SMs Active [Throughput %]"),
        (t1, t1, 3, "SMs Active [Throughput %]"), (t1, t1, 7, "Odd"),
    ])  # fmt: skip
    db.executemany("INSERT INTO GPU_METRICS VALUES (?, ?, ?, ?, ?)", [
        (200, 200, t0, 3, 10), (100, 100, t0, 3, value), (100, 100, t0, 0, 1410000000),
        (100, 100, t1, 3, 70), (100, 100, t1, 7, 5), (100, 100, t1, 9, 99),  # 9: no name
    ])  # fmt: skip
    db.commit()
    db.close()


def test_hand_built_two_gpus(tmp_path: Path) -> None:
    _tiny(tmp_path / "t.sqlite")
    t = read_gpu_metrics(NsysReader(SqliteSource(tmp_path / "t.sqlite")))
    assert t is not None
    rows = [(r["device"], r["metric"], r["unit"], r["start"], r["value"]) for r in t.to_pylist()]
    assert sorted(rows) == [
        (0, "GPC Clock Frequency", "MHz", 100, 1410.0),
        (0, "SMs Active", "%", 100, 40.0),
        (0, "SMs Active", "%", 200, 10.0),
        (1, "Odd", "", 100, 5.0),
        (1, "SMs Active", "%", 100, 70.0),
    ]


def test_text_value_is_a_bad_report(tmp_path: Path) -> None:
    _tiny(tmp_path / "t.sqlite", value="'lots'")
    reader = NsysReader(SqliteSource(tmp_path / "t.sqlite"))
    with pytest.raises(BadReportError, match="gpu_metrics"):
        reader.read_all()


def test_range_statistics_mean_over_a_copy(real) -> None:
    """`R` over the second 256 MiB copy: the PCIe RX and SM active means of the samples in
    it, by SQL; the link is far from full while the GPU is busy copying."""
    from tuiperf.analysis.budget.context import Ctx
    from tuiperf.analysis.budget.window import range_stats
    from tuiperf.summaries.window import Window

    path, trace = real
    lo, hi = _sql(path, "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                  "WHERE bytes = 268435456 ORDER BY start")[1]  # fmt: skip
    want = dict(_sql(path, "SELECT n.metricName, printf('%d|%.17g', count(*), avg(g.value)) "
                     "FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS n ON n.typeId = g.typeId "
                     f"AND n.metricId = g.metricId WHERE g.timestamp >= {lo} AND "
                     f"g.timestamp < {hi} GROUP BY n.metricId"))  # fmt: skip
    table = range_stats(Ctx(trace), Window(lo, hi, False))
    rows = {str(r["name"]).split(":")[0]: r for r in table.head() if r["section"] == "metrics"}
    n, rx = want["PCIe RX Throughput [Throughput %]"].split("|")
    assert rows["PCIe RX"]["count"] == int(n) == 349
    assert rows["PCIe RX"]["name"] == f"PCIe RX: mean {float(rx):.0f}%"  # 12.6 -> 13%
    assert 10 < float(rx) < 20
    n, sm = want["SMs Active [Throughput %]"].split("|")
    assert float(sm) == 0 and rows["SM active"]["name"] == "SM active: mean 0%"
