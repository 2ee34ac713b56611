"""`tuiperf ranks` on real per-rank captures (tests/data/ranks: gloo on one H200, rank 1 the
planted straggler doing 3 extra forward/backward passes a step), against the raw tables."""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.conftest import DATA
from tests.support import needs
from tuiperf.analysis.ranks.assemble import CLOCK_COLLECTIVE, CLOCK_ONE, assemble
from tuiperf.analysis.ranks.pool import run_local, split
from tuiperf.analysis.ranks.summary import Job

RANKS = DATA / "ranks"


def _unpack(out: Path, names: list[str]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    for n in names:
        src = RANKS / n
        if n.endswith(".xz"):
            (out / n[:-3]).write_bytes(lzma.decompress(src.read_bytes()))
        else:
            shutil.copy(src, out / n)
    return out


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("ranks")
    return {
        "r2": _unpack(base / "r2", [f"r2_rank{i}.sqlite.xz" for i in range(2)]),
        "r4": _unpack(base / "r4", [f"r4_rank{i}.sqlite.xz" for i in range(4)]),
        "k2": _unpack(base / "k2", [f"k2_rank{i}.kineto.json.gz" for i in range(2)]),
    }


def _tuiperf(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(
        [sys.executable, "-m", "tuiperf", "ranks", *args, "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if ok:
        assert res.returncode == 0, res.stderr
    return res


def _json(*args: str) -> dict:
    return json.loads(_tuiperf(*args, "-f", "json").stdout)


def _steps_sql(path: Path) -> dict[str, int]:
    """The `step N` NVTX ranges of the loop, straight from the export: label -> the time
    from its start to the next step's start (the last: to its end), what a step costs."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT label, coalesce(lead(start) OVER (ORDER BY start), stop) - start FROM ("
            "SELECT coalesce(n.text, s.value) AS label, n.start AS start, n.end AS stop "
            "FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
            "WHERE coalesce(n.text, s.value) LIKE 'step %' AND n.end IS NOT NULL)"
        ).fetchall()
    return dict(rows)


@pytest.mark.parametrize("name", ["r2", "r4"])
def test_nsys_sets_name_rank_1_and_their_step_times(sets: dict[str, Path], name: str) -> None:
    doc = _json(str(sets[name]))
    rows = doc["ranks"]
    assert [r["rank"] for r in rows] == list(range(len(rows)))
    assert doc["rank_from"] == "file name"
    assert doc["straggler"]["rank"] == 1
    assert [r["straggler"] for r in rows] == [r["rank"] == 1 for r in rows]
    assert "rank 1 works" in doc["verdict"]
    assert {r["collectives"] for r in rows} == {f"AllReduce:{r['steps']}" for r in rows}
    assert doc["comm_kernels"] == {str(r["rank"]): [] for r in rows}  # gloo: no kernel
    for r in rows:
        # the steady steps are the `step N` ranges after the start-up (step 0 at least)
        sql = _steps_sql(Path(r["report"]))
        steady = sorted(sql, key=lambda t: int(t.split()[1]))[-r["steps"] :]
        assert "step 0" not in steady
        assert r["step_ns"] == int(np.median([sql[t] for t in steady]))
        # the straggler works longest between collectives, the others wait inside them
    s = rows[1]
    others = [r for r in rows if r["rank"] != 1]
    assert all(s["work_before_collective_ns"] > o["work_before_collective_ns"] for o in others)
    assert all(s["inside_collective_ns"] < o["inside_collective_ns"] for o in others)


def test_kineto_pair_names_rank_1_from_its_header(sets: dict[str, Path], tmp_path: Path) -> None:
    # no rank in the file names: the ranks come from torch.profiler's distributedInfo
    for i, new in ((0, "b.json.gz"), (1, "a.json.gz")):
        shutil.copy(sets["k2"] / f"k2_rank{i}.kineto.json.gz", tmp_path / new)
    doc = _json(str(tmp_path))
    assert doc["rank_from"] == "report (distributedInfo)"
    assert [Path(r["report"]).name for r in doc["ranks"]] == ["b.json.gz", "a.json.gz"]
    for r in doc["ranks"]:
        with gzip.open(r["report"], "rt") as f:
            assert json.load(f)["distributedInfo"]["rank"] == r["rank"]
    assert doc["straggler"]["rank"] == 1


@pytest.mark.parametrize("name", ["r2", "r4"])
def test_clock_offset_matches_the_session_starts(sets: dict[str, Path], name: str) -> None:
    """Aligned on the collectives, each rank's clock offset is the gap between its nsys
    session's recorded start time and rank 0's (the same machine clock), to well under a
    step."""
    doc = _json(str(sets[name]))
    assert doc["clock"] == CLOCK_COLLECTIVE
    start = {}
    for r in doc["ranks"]:
        with sqlite3.connect(f"file:{r['report']}?mode=ro", uri=True) as db:
            (start[r["rank"]],) = db.execute(
                "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"
            ).fetchone()
    step = doc["ranks"][0]["step_ns"]
    for r in doc["ranks"]:
        assert abs(r["clock_offset_ns"] - (start[0] - start[r["rank"]])) < 0.05 * step
    assert doc["ranks"][0]["clock_offset_ns"] == 0


def test_local_pool_and_inline_agree(sets: dict[str, Path]) -> None:
    jobs = [Job(str(p), use_cache=False) for p in sorted(sets["r4"].iterdir())]
    order = [j.path for j in jobs]
    pooled = assemble(split(run_local(jobs, 2))[0], order)
    inline = assemble(split(run_local(jobs, 1))[0], order)
    assert pooled.to_json() == inline.to_json()


def test_one_report_and_csv(sets: dict[str, Path]) -> None:
    res = _tuiperf(str(sets["r2"] / "r2_rank0.sqlite"), "-f", "csv")
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("rank,report,pid,steps,step_ns")
    assert _json(str(sets["r2"] / "r2_rank0.sqlite"))["verdict"] == "one rank: nothing to compare"


def test_a_bad_file_in_the_set(sets: dict[str, Path], tmp_path: Path) -> None:
    for p in sets["r2"].iterdir():
        shutil.copy(p, tmp_path / p.name)
    bad = tmp_path / "rank2.sqlite"
    bad.write_bytes(b"not a report\n" * 10)
    res = _tuiperf(str(tmp_path), ok=False)
    assert res.returncode != 0
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "Traceback" not in res.stderr


def test_parquet_out_reads_without_tuiperf(sets: dict[str, Path], tmp_path: Path) -> None:
    doc = _json(str(sets["r2"]), "--out", str(tmp_path / "pq"))
    table = pq.read_table(tmp_path / "pq" / "ranks.parquet").to_pylist()
    assert table == doc["ranks"]
    for r in doc["ranks"]:
        steps = pq.read_table(tmp_path / "pq" / f"rank{r['rank']}_steps.parquet")
        assert steps.num_rows == r["steps"]
        assert int(np.median(steps["wall_ns"].to_numpy())) == r["step_ns"]
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == [
        "rank0_steps.parquet",
        "rank1_steps.parquet",
        "ranks.parquet",
    ]


def test_dask_cluster_gives_the_same_table(sets: dict[str, Path]) -> None:
    """A real local Dask cluster (worker processes) runs the per-rank step: the same ranks
    table as the local pool."""
    distributed = needs.module("distributed")
    from tuiperf.analysis.ranks.pool import run_dask

    jobs = [Job(str(p), use_cache=False) for p in sorted(sets["r2"].iterdir())]
    order = [j.path for j in jobs]
    local = assemble(split(run_local(jobs, 2))[0], order)
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        on_dask = assemble(split(run_dask(jobs, cluster.scheduler_address))[0], order)
        via_cli = _json(str(sets["r2"]), "--scheduler", cluster.scheduler_address)
    assert on_dask.to_json() == local.to_json()
    assert on_dask.straggler is not None and on_dask.straggler.rank == 1
    assert via_cli == json.loads(json.dumps(local.to_json()))


def test_one_report_with_a_process_per_gpu(nsys_dir: Path) -> None:
    """h100_2gpu_1s holds two worker processes, one per GPU: two ranks, one per process,
    each with its own steps and GPU work; the one clock needs no alignment."""
    from tuiperf.analysis.ranks.split import process_trace
    from tuiperf.load.open import OpenOptions, open_trace
    from tuiperf.model import arrays as A

    path = nsys_dir / "h100_2gpu_1s.sqlite"
    doc = _json(str(path))
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        per_pid = dict(
            db.execute(
                "SELECT (globalPid >> 24) & 16777215, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
                "GROUP BY 1"
            ).fetchall()
        )
        device_of = dict(
            db.execute(
                "SELECT (globalPid >> 24) & 16777215, min(deviceId) FROM "
                "CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1"
            ).fetchall()
        )
    rows = doc["ranks"]
    assert [r["pid"] for r in rows] == sorted(per_pid, key=lambda p: device_of[p])
    assert doc["rank_from"].startswith("process order")
    assert doc["clock"] == CLOCK_ONE and all(r["clock_offset_ns"] == 0 for r in rows)
    trace = open_trace(path, OpenOptions(use_cache=False))
    for r in rows:
        sub = process_trace(trace, r["pid"])
        assert sub.table("kernels").num_rows == per_pid[r["pid"]]
        assert set(A.ints(sub.table("kernels"), "device").tolist()) == {device_of[r["pid"]]}
        assert 0 < r["compute_ns"] < r["step_ns"] and r["steps"] > 0


@pytest.mark.parametrize("name", ["r2_rank0", "r2_rank1", "r4_rank1", "r4_rank3"])
def test_collectives_and_steps_agree_with_nsys_stats(sets: dict[str, Path], name: str) -> None:
    """`nsys stats --report nvtx_sum` of each capture is the reference: the loop's collective
    calls are its `allreduce` ranges (count and total time), the ranks table's step time the
    median of its steady `step N` ranges, each to the next one's start."""
    import csv

    from tuiperf.analysis.budget.comm import loop_comm
    from tuiperf.analysis.budget.context import Ctx
    from tuiperf.load.open import OpenOptions, open_trace

    path = sets[name[:2]] / f"{name}.sqlite"
    with open(RANKS / "reference" / f"stats_{name}_nvtx_sum.csv", newline="") as f:
        ref = {r["Range"]: r for r in csv.DictReader(f)}
    lc = loop_comm(Ctx(open_trace(path, OpenOptions(use_cache=False))))
    assert lc is not None
    assert len(lc.starts) == int(ref[":allreduce"]["Instances"])
    assert int((lc.ends - lc.starts).sum()) == int(ref[":allreduce"]["Total Time (ns)"])
    row = next(r for r in _json(str(path))["ranks"])
    steps = sorted((k for k in ref if k.startswith(":step ")), key=lambda k: int(k.split()[1]))
    sql = _steps_sql(path)  # nsys stats sees the same step ranges, each to the next start
    assert sorted(sql) == sorted(k[1:] for k in steps)
    steady = [sql[k[1:]] for k in steps[-row["steps"] :]]
    assert row["step_ns"] == int(np.median(steady))


def test_merge_puts_every_rank_on_one_clock(sets: dict[str, Path], tmp_path: Path) -> None:
    """--merge writes one tuiperf folder: each rank a process group named after it, every
    event kept, and the ranks' all-reduce ranges ending together on the aligned clock."""
    from tuiperf.load.open import load_converted
    from tuiperf.model import arrays as A
    from tuiperf.model.timeline.lanes import build_lanes

    out = tmp_path / "merged"
    doc = _json(str(sets["r4"]), "--merge", str(out))
    merged = load_converted(out)
    kernels = 0
    for r in doc["ranks"]:
        with sqlite3.connect(f"file:{r['report']}?mode=ro", uri=True) as db:
            (n,) = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
        kernels += n
    assert merged.table("kernels").num_rows == kernels
    labels = [g.label for g in build_lanes(merged).groups]
    for r in doc["ranks"]:
        assert any(f"rank {r['rank']}: " in lab for lab in labels)
    nv = merged.table("nvtx")
    text, pid = A.strings(nv, "text").astype(str), A.ints(nv, "pid")
    ends = {p: np.sort(A.ints(nv, "end")[(text == "allreduce") & (pid == p)]) for p in set(pid)}
    spread = np.ptp(np.stack(list(ends.values())), axis=0)  # per all-reduce, across ranks
    assert len(ends) == len(doc["ranks"])
    assert np.median(spread) < 0.05 * min(r["step_ns"] for r in doc["ranks"])
    res = _tuiperf(str(sets["r4"]), "--merge", str(out), ok=False)
    assert res.returncode == 2 and "already exists" in res.stderr


def test_tui_needs_a_terminal(sets: dict[str, Path]) -> None:
    res = _tuiperf(str(sets["r2"]), "--tui", ok=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "needs a terminal" in res.stderr


def test_tui_opens_every_rank_on_one_timeline(
    sets: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ranks --tui`: the viewer gets the merged ranks (a process group per rank), and the
    temporary folder is gone afterwards."""
    from tuiperf import cli
    from tuiperf.commands import open_tui, ranks
    from tuiperf.load.open import load_converted
    from tuiperf.model.timeline.lanes import build_lanes

    seen: dict[str, object] = {}

    def viewer(argv: list[str]) -> int:
        folder = Path(argv[0])
        seen["folder"] = folder
        seen["labels"] = [g.label for g in build_lanes(load_converted(folder)).groups]
        return 0

    monkeypatch.setattr(ranks, "has_terminal", lambda: True)
    monkeypatch.setattr(open_tui, "run_open", viewer)
    assert cli.main(["ranks", str(sets["r2"]), "--tui", "--no-cache", "-q"]) == 0
    labels = seen["labels"]
    assert isinstance(labels, list)
    for rank in (0, 1):
        assert any(f"rank {rank}: " in lab for lab in labels), labels
    folder = seen["folder"]
    assert isinstance(folder, Path) and not folder.exists() and not folder.parent.exists()
