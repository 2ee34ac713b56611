"""ncu's CSV pages into KernelMetrics, and their agreement with the ncu_report API."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_data import close, csv_dicts, decompress, page, rep
from tuiperf.errors import BadReportError
from tuiperf.load.ncu.csv_export import KNOWN_SECTIONS, load_ncu_csv, parse_value
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.metrics import KernelMetrics, render_message, to_base

NO_CACHE = OpenOptions(use_cache=False)


@pytest.fixture(scope="module")
def ncu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return decompress(tmp_path_factory)


def km_of(path: Path) -> KernelMetrics:
    return open_ncu(path, NO_CACHE)


# --- units and values (FORMATS.md §6.3 cross-check table) ---------------------------------


@pytest.mark.parametrize(
    ("cell", "unit", "value", "base"),
    [
        ("69.536000", "us", 69536.0, "ns"),
        ("69,536", "ns", 69536.0, "ns"),
        ("0.048965", "Tbyte/s", 48965000000.0, "byte/s"),
        ("48.96", "Gbyte/s", 48960000000.0, "byte/s"),
        ("1.957581", "Ghz", 1957581000.0, "hz"),
        ("1,957,581,324.78", "hz", 1957581324.78, "hz"),
        ("2.304000", "Kbyte/block", 2304.0, "byte/block"),
        ("11.80", "Mbyte", 11800000.0, "byte"),
        ("3,072", "", 3072.0, ""),
        ("0.024816", "sector/ns", 24816000.0, "sector/s"),
        ("2.5", "sector/us", 2500000.0, "sector/s"),
        ("1.591000", "%/Kbyte", 1591.0, "%/byte"),  # ncu scales the whole unit, as the API says
        ("27.233303", "%", 27.233303, "%"),
    ],
)
def test_parse_value(cell: str, unit: str, value: float, base: str) -> None:
    v, text, u = parse_value(cell, unit)
    assert text is None and u == base
    assert v == pytest.approx(value, rel=1e-12)


def test_strings_and_no_data() -> None:
    assert parse_value("CachePreferNone", "") == (None, "CachePreferNone", "")
    assert parse_value("no data", "") == (None, None, "")
    assert parse_value("0,1,2", "")[1] == "0,1,2"  # not a number with separators
    assert to_base("msecond") == (1e6, "ns")


def test_render_message() -> None:
    msg = (
        "Look at the @section:MemoryWorkloadAnalysis:Memory Workload Analysis@ section. "
        "See the @url:Profiling Guide:https://docs.nvidia.com/x.html#roofline@ for more."
    )
    assert render_message(msg) == (
        "Look at the Memory Workload Analysis section. "
        "See the Profiling Guide (https://docs.nvidia.com/x.html#roofline) for more."
    )


# --- the pages ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_details_page(ncu_dir: Path, name: str) -> None:
    rows = csv_dicts(page(ncu_dir, name, "details_base"))
    km = km_of(page(ncu_dir, name, "details_base"))
    assert km.meta["format"] == "ncu-csv-details"
    assert len(km) == len({r["ID"] for r in rows})
    n_metric = sum(1 for r in rows if r["Metric Name"])
    assert km.tables["metrics"].num_rows == n_metric
    assert km.tables["rules"].num_rows == len(rows) - n_metric
    k = km.kernel(0)
    assert k.duration_ns is not None and k.registers is not None
    assert k.nvtx == ("step 3", "forward") and k.row["nvtx_tid"] == int(rows[0]["Process ID"])
    # rules attach to the section whose display name the metric rows use
    for s in km.sections(0):
        assert s.name == KNOWN_SECTIONS.get(s.id, s.name)


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_scaled_and_base_details_agree(ncu_dir: Path, name: str) -> None:
    base = km_of(page(ncu_dir, name, "details_base")).tables["metrics"].to_pylist()
    scaled_rows = csv_dicts(page(ncu_dir, name, "details"))
    scaled = km_of(page(ncu_dir, name, "details")).tables["metrics"].to_pylist()
    assert len(base) == len(scaled)
    units = [r["Metric Unit"] for r in scaled_rows if r["Metric Name"]]
    for b, s, unit in zip(base, scaled, units, strict=True):
        assert (b["section_name"], b["label"], b["unit"]) == (
            s["section_name"],
            s["label"],
            s["unit"],
        )
        if b["value"] is None:
            assert b["text"] == s["text"]
        else:
            assert close(b["value"], s["value"], 0.01 * to_base(unit)[0]), (b, s, unit)


def _decimals(cell: str) -> int:
    return len(cell.rsplit(".", 1)[1]) if "." in cell else 0


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_raw_page_agrees_with_the_api(ncu_dir: Path, name: str) -> None:
    """Every numeric cell of the raw page equals the API's value after unit scaling."""
    needs.module("ncu_report")
    api = km_of(rep(ncu_dir, name))
    with open(page(ncu_dir, name, "raw"), newline="") as f:
        header, units, *rows = list(csv.reader(f))
    checked, unit_diffs = 0, set()
    for row in rows:
        kid = int(row[0])
        for metric, unit, cell in zip(header[13:], units[13:], row[13:], strict=True):
            value, _, base = parse_value(cell, unit)
            a = api.metric(kid, metric)
            if value is None or a is None or a.value is None:
                continue
            step = 10.0 ** -_decimals(cell) * to_base(unit)[0]
            assert close(a.value, value, step), (kid, metric, cell, unit, a)
            if unit and base != a.unit:
                unit_diffs.add(metric)
            checked += 1
    # only `derived__` metrics (computed by the section files, which differ between the
    # ncu_report reader, 2026.3.1, and the ncu CLI, 2025.3.1, that wrote the CSV) may name
    # their unit differently (`thread` vs `inst`); their values agree
    assert all(m.startswith("derived__") for m in unit_diffs), unit_diffs
    assert checked > 15000


_CROSS = (
    "gpu__time_duration.sum",
    "dram__bytes.sum.per_second",
    "gpc__cycles_elapsed.avg.per_second",
    "gpc__cycles_elapsed.max",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__shared_mem_per_block_static",
    "launch__grid_size",
    "launch__registers_per_thread",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
)


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_api_and_all_pages_agree(ncu_dir: Path, name: str) -> None:
    """FORMATS.md §6.3: the same metric of the same kernel, four ways."""
    needs.module("ncu_report")
    api = km_of(rep(ncu_dir, name))
    raw = km_of(page(ncu_dir, name, "raw"))
    base = km_of(page(ncu_dir, name, "details_base"))
    scaled = km_of(page(ncu_dir, name, "details"))
    for kid in api.kernel_ids():
        labelled = {(m.section_id, m.label): m for m in base.metrics_of(kid)}
        labelled_scaled = {(m.section_id, m.label): m for m in scaled.metrics_of(kid)}
        present = [m for m in _CROSS if api.value(kid, m) is not None]
        assert len(present) >= 7  # the default set has no MemoryWorkloadAnalysis
        for metric in present:
            a = api.metric(kid, metric)
            assert a is not None and a.value is not None
            r = raw.metric(kid, metric)
            assert r is not None and r.unit == a.unit
            assert r.value == pytest.approx(a.value, rel=2e-3, abs=1e-6)  # 6 dp, per column
            b = labelled[(a.section_id, a.label)]
            assert b.unit == a.unit and close(a.value, b.value or 0.0, 0.01)
            s = labelled_scaled[(a.section_id, a.label)]
            assert s.value == pytest.approx(a.value, rel=5e-3, abs=5e-3)


def test_kernel_fields_from_csv_and_api_agree(ncu_dir: Path) -> None:
    needs.module("ncu_report")
    api = km_of(rep(ncu_dir, "lstm_basic"))
    for p in ("details_base", "raw"):
        other = km_of(page(ncu_dir, "lstm_basic", p))
        for kid in api.kernel_ids():
            a, o = api.kernel(kid), other.kernel(kid)
            assert (a.grid, a.block, a.stream, a.device, a.registers) == (
                o.grid,
                o.block,
                o.stream,
                o.device,
                o.registers,
            )
            assert o.duration_ns == a.duration_ns
            assert o.name == a.name


# --- bad and unusual CSVs -------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_reordered_columns_give_the_same_tables(ncu_dir: Path, tmp_path: Path) -> None:
    src = page(ncu_dir, "vit_full", "details_base")
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    rows = [r + [""] * (len(rows[0]) - len(r)) for r in rows]  # metric rows are short
    order = list(reversed(range(len(rows[0]))))
    dst = tmp_path / "reordered.csv"
    with open(dst, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows([[r[i] for i in order] for r in rows])
    a, b = load_ncu_csv(src)[0], load_ncu_csv(dst)[0]
    for n in a:
        assert a[n].equals(b[n]), n


def test_numbers_beyond_int64_are_no_values(ncu_dir: Path, tmp_path: Path) -> None:
    """Registers and a grid size of 30 digits (a damaged or edited export) read as none."""
    src = page(ncu_dir, "lstm_basic", "raw")
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    first = rows[2]
    first[header.index("launch__registers_per_thread")] = "9" * 30
    first[header.index("Grid Size")] = f"({'9' * 30}, 1, 1)"
    dst = tmp_path / "big.csv"
    with open(dst, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    got, want = load_ncu_csv(dst)[0]["kernels"], load_ncu_csv(src)[0]["kernels"]
    assert got["registers"][0].as_py() is None and got["grid_x"][0].as_py() is None
    assert got["registers"][1:].equals(want["registers"][1:])
    assert got.num_rows == want.num_rows


def test_preamble_lines_are_skipped(ncu_dir: Path, tmp_path: Path) -> None:
    src = page(ncu_dir, "lstm_basic", "raw")
    dst = _write(
        tmp_path / "pre.csv", "==PROF== Connected to process 1\n==WARNING== x\n" + src.read_text()
    )
    assert len(km_of(dst)) == 30


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ('"a","b"\n"1","2"\n', 'no "ID" header'),
        ('"ID","Process ID"\n"1","2"\n', 'no "ID" header'),
        (
            '"ID","Kernel Name","Section Name","Metric Name","Metric Value"\n"0","k","S","m","1"\n',
            "missing column 'Metric Unit'",
        ),
        (
            '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n',
            "holds no kernels",
        ),
        ('"ID","Kernel Name","m__x"\n"0","k","1"\n', "no units row"),
        (
            '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"zero","k","S","m","","1"\n',
            "bad kernel ID",
        ),
        (  # the kernel name column is what is missing, not the header
            '"ID","Section Name","Metric Name","Metric Unit","Metric Value"\n"0","S","m","","1"\n',
            "missing column 'Kernel Name'",
        ),
        (  # rule rows without the column that names the rule
            '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value",'
            '"Rule Description"\n"0","k","S","","","","slow"\n',
            "no 'Rule Name' column",
        ),
        (  # cut inside a quoted value
            '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","k","S","Elapsed Cycles","cycle","4,6',
            "damaged CSV",
        ),
        (  # cut before the value
            '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","k","S","Elapsed Cycles"\n',
            "truncated or damaged",
        ),
    ],
)
def test_bad_csv(tmp_path: Path, text: str, why: str) -> None:
    with pytest.raises(BadReportError) as e:
        load_ncu_csv(_write(tmp_path / "bad.csv", text))
    assert why in str(e.value)
    assert "\n" not in str(e.value)


def _printed_tolerance(cell: str) -> float:
    """Half a unit of the last digit ncu printed (`6.22` -> 0.005, `4,099` -> 0.5)."""
    digits = cell.replace(",", "")
    return 0.5 * 10 ** -(len(digits.partition(".")[2]))


#: details-page metrics the raw page prints in a bigger unit with fewer digits: the raw page
#: (`--page raw`) writes these rates in the unit named, to 6 decimals (1.962744 Ghz), where the
#: details page with base units prints them to the hundredth (1,962,743,615.59 hz); so they
#: can agree only to the raw page's precision, half a unit of its 6th decimal
_RAW_PRINTS_SCALED = {
    # raw dram__cycles_elapsed.avg.per_second
    ("GPU Speed Of Light Throughput", "DRAM Frequency"): "Ghz",
    # raw gpc__cycles_elapsed.avg.per_second
    ("GPU Speed Of Light Throughput", "SM Frequency"): "Ghz",
    # raw dram__bytes.sum.per_second (Tbyte/s in vit_full; lstm_basic agrees to the digit)
    ("Memory Workload Analysis", "Memory Throughput"): "Tbyte/s",
}


@pytest.mark.parametrize("name", ["vit_full", "lstm_basic"])
def test_raw_page_metrics_get_the_details_page_names(ncu_dir: Path, name: str) -> None:
    """The raw page names metrics by id; tuiperf shows them under ncu's section and label
    (load/ncu/labels.json), with the values the details page prints, at the raw page's precision:
    every metric of the details page, each agreeing, the few in _RAW_PRINTS_SCALED to the
    raw page's 6 decimals."""
    import csv as _csv

    km = km_of(page(ncu_dir, name, "raw"))
    ours = {}
    for kid in km.kernel_ids():
        for s in km.sections(kid):
            for m in s.metrics:
                ours[(kid, s.name, m.title)] = (m.value, m.text)
    ref = [
        r for r in _csv.DictReader(page(ncu_dir, name, "details_base").open()) if r["Metric Name"]
    ]
    assert ref
    missing, differ = [], []
    for r in ref:
        where = (int(r["ID"]), r["Section Name"], r["Metric Name"])
        hit = ours.get(where)
        if hit is None:
            missing.append(where)
            continue
        got, text = hit
        try:
            want = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            if text != r["Metric Value"]:
                differ.append((where, text, r["Metric Value"]))
            continue
        tol = _printed_tolerance(r["Metric Value"])
        scaled = _RAW_PRINTS_SCALED.get(where[1:])
        if scaled is not None:
            tol = max(tol, 0.5e-6 * to_base(scaled)[0])
        if got is None or abs(got - want) > tol * 1.0001:
            differ.append((where, got, r["Metric Value"]))
    assert not missing, f"{len(missing)} of {len(ref)} details metrics missing: {missing[:5]}"
    assert not differ, f"{len(differ)} of {len(ref)} differ: {differ[:5]}"
