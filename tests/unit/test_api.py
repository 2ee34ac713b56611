"""The Python API (`tuiperf.open`): the same tables, summaries, budget and findings as the
CLI's code paths, on the real fixtures; pandas only on `.to_pandas()`."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pytest

import tuiperf
from tests.conftest import DATA, NSYS_REPORTS, nsys_path
from tests.support.ncu_data import decompress, rep
from tuiperf import schema
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.rows import step_budget_table
from tuiperf.analysis.engine import analyze
from tuiperf.api import Analysis
from tuiperf.errors import UsageError
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions, open_trace

KINETO = DATA / "kineto"


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decompress(tmp_path_factory)


def _timelines(nsys_dir: Path) -> dict[str, Path]:
    return {
        "vit_range": nsys_path(nsys_dir, "vit_range"),
        "kineto_cnn": KINETO / "kineto_cnn.json.gz",
    }


@pytest.fixture(params=["vit_range", "kineto_cnn"])
def timeline(request: pytest.FixtureRequest, nsys_dir: Path) -> Path:
    return _timelines(nsys_dir)[request.param]


def test_import_tuiperf_loads_neither_pyarrow_nor_the_readers() -> None:
    code = (
        "import sys, tuiperf\n"
        "print(sorted(m for m in ('pyarrow', 'textual', 'tuiperf.api', 'tuiperf.load') "
        "if m in sys.modules))\n"
        "from tuiperf import open, Profile\n"
        "import tuiperf.api\n"
        "print(open is tuiperf.api.open, Profile is tuiperf.api.Profile, 'pyarrow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "True True True"]


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = tuiperf.nope
    assert "open" in dir(tuiperf)


def test_tables_equal_open_trace(timeline: Path) -> None:
    p = tuiperf.open(timeline, use_cache=False)
    trace = open_trace(timeline, OpenOptions(use_cache=False))
    assert p.table_names == list(schema.TABLES)
    for name in schema.TABLES:
        assert getattr(p, name).equals(trace.table(name)), name
        assert p.table(name).equals(trace.table(name)), name
    assert p.kernels.num_rows > 0
    with pytest.raises(UsageError, match="unknown table 'kernel'"):
        p.table("kernel")


def test_opens_through_the_clis_cache(nsys_dir: Path, tmp_path: Path) -> None:
    """What the API converted, the CLI's reader finds in the cache (and the other way)."""
    path = nsys_path(nsys_dir, "lstm")
    p = tuiperf.open(path, cache_dir=tmp_path)
    assert not p.meta.from_cache and Path(p.meta.cache_path or "").is_relative_to(tmp_path)
    again = open_trace(path, OpenOptions(cache_dir=tmp_path))
    assert again.meta.from_cache and again.meta.cache_path == p.meta.cache_path
    assert tuiperf.open(path, cache_dir=tmp_path).meta.from_cache


def test_no_cache_writes_nothing(nsys_dir: Path, tmp_path: Path) -> None:
    p = tuiperf.open(nsys_path(nsys_dir, "lstm"), cache_dir=tmp_path, use_cache=False)
    assert p.kernels.num_rows > 0 and p.summary("kern").table.num_rows > 0
    assert not any(tmp_path.iterdir())


def _reference(reference_dir: Path, report: str, name: str) -> list[dict[str, str]]:
    with open(reference_dir / f"stats_{report}_{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("report", NSYS_REPORTS)
def test_kern_sum_equals_nsys_stats(report: str, nsys_dir: Path, reference_dir: Path) -> None:
    """The typed values are the numbers `nsys stats` prints (which rounds to 0.1)."""
    s = tuiperf.open(nsys_path(nsys_dir, report)).summary("cuda_gpu_kern_sum")
    ref = _reference(reference_dir, report, "cuda_gpu_kern_sum")
    assert s.name == "cuda_gpu_kern_sum" and len(s) == len(ref) > 0
    exact = ("total_ns", "count", "min_ns", "max_ns")
    rounded = ("time_pct", "avg_ns", "med_ns", "stddev_ns")
    for got, want in zip(s.table.to_pylist(), ref, strict=True):
        assert got["name"] == want[s.headers["name"]]
        for key in exact:
            assert got[key] == int(want[s.headers[key]]), key
        for key in rounded:
            assert abs(got[key] - float(want[s.headers[key]])) <= 0.05 + 1e-9, key


def test_summary_names_and_aliases(nsys_dir: Path) -> None:
    p = tuiperf.open(nsys_path(nsys_dir, "cnn_osrt"))
    assert p.summary("kern").table.equals(p.summary("cuda_gpu_kern_sum").table)
    assert p.summary("osrt").name == "osrt_sum"
    with pytest.raises(UsageError, match="unknown report 'kern_sum'"):
        p.summary("kern_sum")


def test_step_budget_and_its_summary(timeline: Path) -> None:
    p = tuiperf.open(timeline)
    trace = open_trace(timeline, OpenOptions(use_cache=False))
    want = Ctx(trace).budget
    got = p.step_budget()
    assert want is not None and got is not None
    assert got.to_json() == want.to_json()
    assert p.step_budget() is got  # computed once per opened report
    table = p.summary("budget").table
    assert table.equals(step_budget_table(trace).data)
    steady = table.filter(pc.equal(table["kind"], "steady"))
    assert steady.num_rows == got.n_steady


def _key(findings: list) -> list[tuple]:
    return [(f.rule, f.title, f.severity, f.count, f.est_saving_ns, f.kernel) for f in findings]


def test_analyze_equals_the_engine(timeline: Path) -> None:
    p = tuiperf.open(timeline)
    want = analyze(open_trace(timeline, OpenOptions(use_cache=False)))
    got = p.analyze()
    assert len(got) == len(want.findings) > 0
    assert _key(list(got)) == _key(want.findings)
    assert [c.rule for c in got.checks] == [c.rule for c in want.checks]
    assert got.budget is not None and got.budget.to_json() == want.budget.to_json()
    table = got.table()
    assert table["rule"].to_pylist() == [f.rule for f in want.findings]
    assert table["est_saving_ns"].to_pylist() == [f.est_saving_ns for f in want.findings]
    assert table["severity"].to_pylist() == [f.severity.word for f in want.findings]


def test_analyze_options(nsys_dir: Path) -> None:
    p = tuiperf.open(nsys_path(nsys_dir, "vit_range"))
    only = p.analyze(rules=["cpu_bound"])
    assert [c.rule for c in only.checks] == ["cpu_bound"]
    assert {f.rule for f in only} <= {"cpu_bound"}
    with pytest.raises(UsageError, match="unknown rule 'cpu'"):
        p.analyze(rules=["cpu"])
    assert p.analyze().sample is None  # 9,200 events: whole
    part = p.analyze(max_events=5000).sample
    assert part is not None and part.total_events == 9200 and part.events < 9200
    with pytest.raises(UsageError, match="max_events"):
        p.analyze(max_events=-1)


def test_to_pandas(nsys_dir: Path, reference_dir: Path) -> None:
    p = tuiperf.open(nsys_path(nsys_dir, "vit_range"))
    df = p.kernels.to_pandas()
    assert len(df) == p.kernels.num_rows
    assert int(df["duration"].sum()) == pc.sum(p.kernels["duration"]).as_py()
    s = p.summary("cuda_gpu_kern_sum")
    with open(reference_dir / "stats_vit_range_cuda_gpu_kern_sum.csv", newline="") as f:
        headers = next(csv.reader(f))
    assert list(s.to_pandas(nsys_headers=True).columns) == headers
    assert list(s.to_pandas().columns) == s.table.column_names
    a = p.analyze()
    fdf = a.to_pandas()
    assert list(fdf["rule"]) == [f.rule for f in a]
    assert list(fdf["title"]) == [f.title for f in a] and fdf["title"][0] == a[0].title


def test_to_pandas_without_pandas_names_the_extra(
    nsys_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tuiperf.open(nsys_path(nsys_dir, "vit_range"))
    s, a = p.summary("kern"), p.analyze()
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now fails
    for call in (s.to_pandas, a.to_pandas):
        with pytest.raises(ImportError, match=r"pip install 'tuiperf\[pandas\]'"):
            call()


def test_ncu_beside_a_timeline(nsys_dir: Path, ncu_dir: Path) -> None:
    timeline, ncu = nsys_path(nsys_dir, "vit_range"), rep(ncu_dir, "vit_full")
    p = tuiperf.open(timeline, ncu=ncu)
    km = open_ncu(ncu, OpenOptions(use_cache=False))
    assert p.ncu is not None and len(p.ncu) == len(km) > 0
    for name, t in km.tables.items():  # repr: the metrics' NaN values compare equal
        assert p.ncu.tables[name].schema == t.schema, name
        assert repr(p.ncu.tables[name].to_pylist()) == repr(t.to_pylist()), name
    want = analyze(open_trace(timeline, OpenOptions(use_cache=False)), km)
    got = p.analyze()
    assert any(f.source == "ncu" for f in got)
    assert _key(list(got)) == _key(want.findings)
    assert _key(got.result.unlinked) == _key(want.unlinked)


def test_ncu_report_alone(ncu_dir: Path) -> None:
    ncu = rep(ncu_dir, "lstm_basic")
    p = tuiperf.open(ncu)
    assert p.trace is None and p.ncu is not None
    assert p.ncu.kernels.equals(open_ncu(ncu, OpenOptions(use_cache=False)).kernels)
    assert "ncu=30 kernels" in repr(p)
    a = p.analyze()
    assert a.result.ncu_only and len(a) > 0 and {f.source for f in a} == {"ncu"}
    with pytest.raises(UsageError, match="has no timeline"):
        _ = p.kernels
    with pytest.raises(UsageError, match="give the timeline first"):
        tuiperf.open(ncu, ncu=ncu)


def test_the_python_api_page_example_runs(nsys_dir: Path, ncu_dir: Path) -> None:
    """docs/python-api.md's example, on the ViT captures (nsys and ncu)."""
    page = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
    code = page.read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    code = code.replace('"run.sqlite"', repr(str(nsys_path(nsys_dir, "vit_range"))))
    code = code.replace('"kernels.ncu-rep"', repr(str(rep(ncu_dir, "vit_full"))))
    names: dict[str, object] = {}
    exec(compile(code, "docs/python-api.md", "exec"), names)
    assert isinstance(names["findings"], Analysis)
    assert names["q"].ncu is not None  # type: ignore[attr-defined]
