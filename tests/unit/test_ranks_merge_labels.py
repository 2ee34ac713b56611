"""`ranks --merge` / `--tui` name each process after its own rank (issue 35 item 3).

A report holding several ranks (h100_2gpu_1s: two worker processes, one per GPU) was merged
as one rank: both processes read "rank 0" and `info` said "1 ranks on one clock". The ranks
are numbered from the export itself here: the processes with kernels, by their GPU, then pid
(sqlite3 over CUPTI_ACTIVITY_KIND_KERNEL), and the merged folder's process names and
`info`'s note must say the same.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from tuiperf import cli
from tuiperf.analysis.ranks.merge import Report, merge
from tuiperf.model.trace import Trace, TraceMeta


def _ranks_by_sql(path: Path) -> dict[int, int]:
    """pid -> rank: the processes with kernels, by their (lowest) GPU, then pid."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT (globalPid >> 24) & 16777215 AS pid, min(deviceId) FROM "
            "CUPTI_ACTIVITY_KIND_KERNEL GROUP BY pid ORDER BY min(deviceId), pid"
        ).fetchall()
    return {pid: i for i, (pid, _dev) in enumerate(rows)}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(argv) == 0
    return capsys.readouterr().out


def test_merge_of_one_report_with_two_ranks(
    nsys_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = nsys_dir / "h100_2gpu_1s.sqlite"
    want = _ranks_by_sql(path)
    assert len(want) == 2
    out = tmp_path / "merged"
    doc = json.loads(_run(["ranks", str(path), "--merge", str(out), "-f", "json",
                           "--no-cache", "-q"], capsys))  # fmt: skip
    assert {r["pid"]: r["rank"] for r in doc["ranks"]} == want
    info = json.loads(_run(["info", str(out), "--json", "-q"], capsys))
    names = {p["pid"]: p["name"] for p in info["processes"]}
    for pid, rank in want.items():
        assert names[pid].startswith(f"rank {rank}: "), names
    assert "2 ranks on one clock (tuiperf ranks --merge)" in info["diagnostics"]


def test_tui_of_one_report_with_two_ranks(nsys_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tuiperf.commands import open_tui, ranks
    from tuiperf.load.open import load_converted

    path = nsys_dir / "h100_2gpu_1s.sqlite"
    seen: dict[int, str] = {}

    def viewer(argv: list[str]) -> int:
        procs = load_converted(Path(argv[0])).table("processes")
        seen.update(zip(procs["pid"].to_pylist(), procs["name"].to_pylist(), strict=True))
        return 0

    monkeypatch.setattr(ranks, "has_terminal", lambda: True)
    monkeypatch.setattr(open_tui, "run_open", viewer)
    assert cli.main(["ranks", str(path), "--tui", "--no-cache", "-q"]) == 0
    for pid, rank in _ranks_by_sql(path).items():
        assert seen[pid].startswith(f"rank {rank}: "), seen


def _tiny(pids: list[int]) -> Trace:
    """A hand-built trace: one kernel per process, each process named 'python3'."""
    from tuiperf import schema

    tables = {n: schema.empty(n) for n in schema.TABLES}
    tables["processes"] = pa.Table.from_pylist(
        [{"pid": p, "name": "python3"} for p in pids], schema=schema.TABLES["processes"]
    )
    tables["kernels"] = pa.Table.from_pylist(
        [{"pid": p, "device": 0, "start": 100 * i, "end": 100 * i + 50, "name": "k"}
         for i, p in enumerate(pids)],
        schema=schema.TABLES["kernels"],
    )  # fmt: skip
    return Trace(tables, TraceMeta(source="t", format="nsys-sqlite"))


def test_names_by_rank_and_launcher_kept() -> None:
    """Ranks 2 and 3 in one report (pids 7, 8) beside a launcher (pid 5); a second report
    that is rank 0 alone: every process of it is rank 0's."""
    several = Report(_tiny([5, 7, 8]), rank=2, offset=0, pids={7: 2, 8: 3})
    alone = Report(_tiny([40, 41]), rank=0, offset=30)
    merged = merge([alone, several], "x")
    procs = merged.table("processes")
    names = dict(zip(procs["pid"].to_pylist(), procs["name"].to_pylist(), strict=True))
    assert names == {40: "rank 0: python3", 41: "rank 0: python3", 5: "python3",
                     7: "rank 2: python3", 8: "rank 3: python3"}  # fmt: skip
    assert merged.meta.diagnostics == ["3 ranks on one clock (tuiperf ranks --merge)"]
    k = merged.table("kernels")
    starts = dict(zip(k["pid"].to_pylist(), k["start"].to_pylist(), strict=True))
    assert starts == {40: -30, 41: 70, 5: 0, 7: 100, 8: 200}
