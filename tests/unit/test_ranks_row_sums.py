"""A `tuiperf ranks` row adds up (issue 35 item 4, the ranks part): its step is its median
step, and step = compute + exposed comm + copies + GPU idle, by arithmetic on every row
(JSON, CSV and the table's printed values); copies have their column; the notes say what
the communication columns hold ("none found", not "Communication from none").

Oracles: hand-built ranks whose median step is worked out in the comments; h100_2gpu_1s
(two ranks in one report, most of each step copies) against sqlite3 over its export: per
steady step, compute = the union of the process's kernels in the step, copies = the union
of its memcpy/memset outside them.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.conftest import DATA
from tuiperf.analysis.ranks.assemble import assemble
from tuiperf.analysis.ranks.summary import STEP_COLUMNS, RankResult

PARTS = ("compute_ns", "exposed_comm_ns", "copy_ns", "idle_ns")


def _rank(rank: int, cols: dict[str, list[int]], comm_source: str = "kernels") -> RankResult:
    n = len(cols["wall_ns"])
    steps = {c: np.array(cols.get(c, [0] * n), np.int64) for c in STEP_COLUMNS}
    return RankResult(
        path=f"rank{rank}.nsys-rep",
        name_rank=rank,
        meta_rank=None,
        step_source="nvtx",
        comm_source=comm_source,
        device=0,
        labels=[f"step {i}" for i in range(n)],
        starts=1000 * np.arange(n, dtype=np.int64),
        steps=steps,
        coll_starts=np.zeros(0, np.int64),
        coll_ends=np.zeros(0, np.int64),
    )


def test_median_step_of_an_odd_count() -> None:
    # walls 300, 100, 200: the median step is the third (200 ns), its parts as they are
    r = _rank(0, {"wall_ns": [300, 100, 200], "compute_ns": [10, 20, 30],
                  "exposed_ns": [1, 2, 3], "copy_ns": [100, 50, 40],
                  "idle_ns": [189, 28, 127], "comm_ns": [5, 6, 7]})  # fmt: skip
    row = assemble([r], [r.path]).rows()[0]
    assert row["step_ns"] == 200
    assert (row["compute_ns"], row["exposed_comm_ns"], row["copy_ns"]) == (30, 3, 40)
    assert (row["idle_ns"], row["comm_ns"]) == (127, 7)
    assert row["step_ns"] == sum(row[p] for p in PARTS)


def test_median_step_of_an_even_count_takes_the_two_middle_ones() -> None:
    # walls 400, 201, 100, 300: the middle ones are 201 (step 1) and 300 (step 3): step
    # (201 + 300) / 2 = 250.5 -> 250 (the median, whole ns); compute (101 + 150) / 2 = 125.5
    # -> 125; exposed (0 + 7) / 2 -> 3; copies (50 + 60) / 2 = 55; idle takes the rest:
    # 250 - 125 - 3 - 55 = 67 (the mean of 50 and 83 is 66.5)
    r = _rank(0, {"wall_ns": [400, 201, 100, 300], "compute_ns": [1, 101, 1, 150],
                  "exposed_ns": [0, 0, 0, 7], "copy_ns": [0, 50, 0, 60],
                  "idle_ns": [399, 50, 99, 83]})  # fmt: skip
    row = assemble([r], [r.path]).rows()[0]
    assert row["step_ns"] == int(np.median([400, 201, 100, 300])) == 250
    assert [row[p] for p in PARTS] == [125, 3, 55, 67]


def test_equal_walls_and_no_steps() -> None:
    # two steps of 100 ns each, parts 60+40 and 0+100: the mean of both, 30 + 70
    r = _rank(0, {"wall_ns": [100, 100], "compute_ns": [60, 0], "idle_ns": [40, 100]})
    row = assemble([r], [r.path]).rows()[0]
    assert [row["step_ns"], *(row[p] for p in PARTS)] == [100, 30, 0, 0, 70]
    assert _rank(0, {"wall_ns": []}).median_step() == dict.fromkeys(STEP_COLUMNS, 0)


def test_notes_name_each_source_and_never_from_none(tmp_path: Path) -> None:
    from tuiperf.commands.ranks import COMM_SOURCES, _table

    rs = assemble([_rank(0, {"wall_ns": [10]}, "kernels"), _rank(1, {"wall_ns": [10]}, ""),
                   _rank(2, {"wall_ns": [10]}, "")], ["rank0.nsys-rep", "rank1.nsys-rep",
                                                      "rank2.nsys-rep"])  # fmt: skip
    out = _text(rs, _table)
    assert "from none" not in out
    assert f"Communication of rank 0: {COMM_SOURCES['kernels']}." in out
    assert f"Communication of ranks 1, 2: {COMM_SOURCES['none']}." in out
    one = _text(assemble([_rank(0, {"wall_ns": [10]}, "")], ["rank0.nsys-rep"]), _table)
    assert f"Communication: {COMM_SOURCES['none']}." in one


def _text(rs: object, table: object) -> str:
    import io

    buf = io.StringIO()
    table(buf, rs, rs.rows())  # type: ignore[attr-defined,operator]
    return " ".join(buf.getvalue().split())


# --- real reports -------------------------------------------------------------------------


def _ranks(*args: str) -> str:
    res = subprocess.run([sys.executable, "-m", "tuiperf", "ranks", *args, "--no-cache", "-q"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def gloo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import lzma

    out = tmp_path_factory.mktemp("r2")
    for i in range(2):
        src = DATA / "ranks" / f"r2_rank{i}.sqlite.xz"
        (out / f"r2_rank{i}.sqlite").write_bytes(lzma.decompress(src.read_bytes()))
    for i in range(2):  # the same program under torch.profiler: 10 steps, an even count
        shutil.copy(DATA / "ranks" / f"k2_rank{i}.kineto.json.gz", out)
    return out


_UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def _ns(cell: str) -> tuple[float, float]:
    """A printed duration ('9.64 ms') in ns, and half its last printed digit."""
    num, unit = cell.split()
    digits = len(num.split(".")[1]) if "." in num else 0
    return float(num) * _UNITS[unit], 0.5 * 10**-digits * _UNITS[unit]


def _check_table(text: str) -> int:
    """Every row of the printed table: step = the four parts, within the printed digits."""
    rows = 0
    for line in text.splitlines()[1:]:
        if not line.strip():
            break
        cells = re.findall(r"\d+(?:\.\d+)? (?:ns|µs|ms|s)\b", line)
        (step, e0), *parts = [_ns(c) for c in cells[:5]]
        assert abs(step - sum(v for v, _ in parts)) <= e0 + sum(e for _, e in parts), line
        rows += 1
    return rows


@pytest.mark.parametrize("glob", ["r2_rank*.sqlite", "k2_rank*.kineto.json.gz"])
def test_real_rows_add_up(gloo: Path, glob: str) -> None:
    doc = json.loads(_ranks(str(gloo / glob), "-f", "json"))
    for r in doc["ranks"]:
        assert r["comm_source"] == "ranges"
        assert r["step_ns"] == sum(r[p] for p in PARTS), r
        assert all(r[p] >= 0 for p in PARTS) and r["exposed_comm_ns"] > 0
    text = _ranks(str(gloo / glob))
    assert _check_table(text) == 2
    assert "from none" not in text and "the collectives' CPU ranges" in text


def _union(rows: list[tuple[int, int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for s, e in sorted(rows):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def _clip(u: list[list[int]], a: int, b: int) -> list[list[int]]:
    return [[max(s, a), min(e, b)] for s, e in u if min(e, b) > max(s, a)]


def _minus(u: list[list[int]], v: list[list[int]]) -> int:
    """The length of u outside v (both unions)."""
    total = 0
    for s, e in u:
        cur = s
        for vs, ve in v:
            if ve <= cur or vs >= e:
                continue
            total += max(vs - cur, 0)
            cur = max(cur, ve)
        total += max(e - cur, 0)
    return total


def test_copies_have_their_column(nsys_dir: Path, tmp_path: Path) -> None:
    """h100_2gpu_1s: two ranks, no collective; each step is mostly copies. Per steady step
    (--out's step rows) compute and copies against sqlite3; each row adds up."""
    path = nsys_dir / "h100_2gpu_1s.sqlite"
    out = tmp_path / "pq"
    doc = json.loads(_ranks(str(path), "-f", "json", "--out", str(out)))
    text = _ranks(str(path))
    assert _check_table(text) == 2
    assert "from none" not in text and "none found" in text
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def spans(table: str, pid: int) -> list[tuple[int, int]]:
        where = "WHERE ((globalPid >> 24) & 16777215) = ?"
        return db.execute(f"SELECT start, end FROM {table} {where}", (pid,)).fetchall()

    for r in doc["ranks"]:
        assert r["step_ns"] == sum(r[p] for p in PARTS), r
        assert r["comm_source"] == "none" and r["exposed_comm_ns"] == 0
        assert r["copy_ns"] > r["step_ns"] / 2  # most of the median step: copies
        k = _union(spans("CUPTI_ACTIVITY_KIND_KERNEL", r["pid"]))
        c = _union(spans("CUPTI_ACTIVITY_KIND_MEMCPY", r["pid"])
                   + spans("CUPTI_ACTIVITY_KIND_MEMSET", r["pid"]))  # fmt: skip
        steps = pq.read_table(out / f"rank{r['rank']}_steps.parquet").to_pylist()
        assert len(steps) == r["steps"]
        for s in steps:
            a, b = s["start_ns"], s["start_ns"] + s["wall_ns"]
            compute = sum(e - x for x, e in _clip(k, a, b))
            assert (s["compute_ns"], s["copy_ns"]) == (compute, _minus(_clip(c, a, b), k)), s
            assert s["wall_ns"] == sum(s[p] for p in ("compute_ns", "exposed_ns", "copy_ns",
                                                      "idle_ns"))  # fmt: skip
    db.close()
