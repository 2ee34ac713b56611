"""`tuiperf export`: CSV round trips, header-only files, atomic writes, no silent overwrite."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from pathlib import Path

import pyarrow as pa
import pytest

from tests.conftest import nsys_reference, nsys_report
from tuiperf import export
from tuiperf.cli import main
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model import columns as C
from tuiperf.model.timeline.query import Events, Query


@pytest.fixture(scope="module")
def events() -> Events:
    return Events(open_trace(nsys_report("cnn_osrt"), OpenOptions(use_cache=False)))


def _run(*args: str) -> int:
    return main(["export", str(nsys_report("cnn_osrt")), "-q", *args])


def _read_csv(path: Path, delimiter: str = ",") -> list[list[str]]:
    data = path.read_bytes()
    assert b"\r" not in data
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter=delimiter))


def test_csv_round_trips_the_filtered_sorted_view(events: Events, tmp_path: Path) -> None:
    out = tmp_path / "k.csv"
    assert _run("--filter", "GEMM", "--sort", "duration_ns:desc", "-o", str(out)) == 0
    rows = _read_csv(out)
    header, body = rows[0], rows[1:]
    assert header[:3] == ["start_ns", "end_ns", "duration_ns"] and header[-1] == "name"
    view = events.run(Query(text="gemm", sort="duration", descending=True))
    want = view.to_arrow(C.columns("kernels"))
    assert len(body) == len(view) == want.num_rows > 0
    for name in header:
        got = [r[header.index(name)] for r in body]
        assert got == ["" if v is None else str(v) for v in want[name].to_pylist()], name
    durations = [int(r[2]) for r in body]
    assert durations == sorted(durations, reverse=True)
    assert all(int(r[1]) - int(r[0]) == int(r[2]) for r in body)


def test_name_is_the_demangled_kernel_name(tmp_path: Path) -> None:
    out = tmp_path / "k.csv"
    assert _run("--limit", "5", "--columns", "name,start_ns", "-o", str(out)) == 0
    rows = _read_csv(out)
    assert rows[0] == ["name", "start_ns"]
    assert rows[1][0].startswith("void cudnn::engines_precompiled::nchwToNhwcKernel<float")
    assert len(rows) == 6


def test_no_match_gives_a_header_only_file(tmp_path: Path) -> None:
    out = tmp_path / "none.csv"
    assert _run("--filter", "no-such-kernel-anywhere", "-o", str(out)) == 0
    names = C.export_names(C.columns("kernels"))
    assert out.read_text(encoding="utf-8") == ",".join(names) + "\n"


def test_existing_file_is_kept_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "k.csv"
    out.write_text("precious\n")
    assert _run("--limit", "1", "-o", str(out)) == 2  # a usage error: 1 means a bad report
    err = capsys.readouterr().err
    assert err.startswith("tuiperf: error:") and "--force" in err and err.count("\n") == 1
    assert out.read_text() == "precious\n"
    assert _run("--limit", "1", "-o", str(out), "--force") == 0
    assert out.read_text().startswith("start_ns,")
    assert _run("--limit", "1", "-o", str(tmp_path)) == 2  # a folder


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_write_leaves_no_file(
    exc: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(sink, table, fmt):  # type: ignore[no-untyped-def]
        sink.write(b"start_ns,end_ns\n1,2\n")
        raise exc

    monkeypatch.setattr(export, "_write_bytes", broken)
    out = tmp_path / "k.csv"
    rc = _run("-o", str(out))
    assert rc == (130 if isinstance(exc, KeyboardInterrupt) else 1)
    assert list(tmp_path.iterdir()) == []


def test_summary_equals_cuda_gpu_kern_sum(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    assert _run("--summary", "-o", str(out)) == 0
    rows = _read_csv(out)
    assert rows[0] == ["time_pct", "total_ns", "instances", "avg_ns", "med_ns", "min_ns",
                       "max_ns", "stddev_ns", "name"]  # fmt: skip
    with open(nsys_reference("stats_cnn_osrt_cuda_gpu_kern_sum.csv"), newline="") as f:
        ref = list(csv.reader(f))[1:]
    got = [[r[1], r[2], r[5], r[6], r[8]] for r in rows[1:]]
    assert got == [[r[1], r[2], r[5], r[6], r[8]] for r in ref]
    assert [round(float(r[0]), 1) for r in rows[1:]] == [float(r[0]) for r in ref]


def test_summary_of_a_filter_sorted_by_instances(tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    assert _run("--table", "api", "--summary", "--filter", "cuda", "--sort", "instances:desc",
                "-o", str(out)) == 0  # fmt: skip
    rows = _read_csv(out)[1:]
    counts = [int(r[2]) for r in rows]
    assert counts == sorted(counts, reverse=True) and counts[0] > 1
    assert all("cuda" in r[-1].lower() for r in rows)
    assert sum(float(r[0]) for r in rows) == pytest.approx(100.0)


def test_window_and_min_duration(events: Events, tmp_path: Path) -> None:
    out = tmp_path / "w.csv"
    t = events.trace.table("kernels")
    lo, hi = t["start"][200].as_py(), t["start"][600].as_py()
    args = ["--start", str(lo), "--end", str(hi), "--min-duration", "3us"]
    assert _run(*args, "--columns", "start_ns,end_ns,duration_ns", "-o", str(out)) == 0
    rows = [[int(x) for x in r] for r in _read_csv(out)[1:]]
    assert rows and all(s < hi and e > lo and d >= 3000 for s, e, d in rows)
    view = events.run(Query(window=(lo, hi), min_duration=3000))
    assert len(rows) == len(view)


@pytest.mark.parametrize("kind", C.KINDS)
def test_every_table_exports(kind: str, tmp_path: Path) -> None:
    out = tmp_path / f"{kind}.tsv"
    assert _run("--table", kind, "--format", "tsv", "--limit", "3", "-o", str(out)) == 0
    rows = _read_csv(out, "\t")
    assert rows[0] == C.export_names(C.columns(kind))
    assert len(rows) == (1 if kind == "graphs" else 4)  # no CUDA graphs in cnn_osrt: header only


def test_json_and_parquet(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    j, p = tmp_path / "n.json", tmp_path / "n.parquet"
    assert _run("--table", "nvtx", "--format", "json", "-o", str(j)) == 0
    assert _run("--table", "nvtx", "--format", "parquet", "-o", str(p)) == 0
    rows = json.loads(j.read_text(encoding="utf-8"))
    table = pq.read_table(p)
    assert len(rows) == table.num_rows == 79
    assert rows[0]["name"] == "step 0" and rows[0]["duration_ns"] == 699629454
    assert table.column("name").to_pylist()[0] == "step 0"


def test_stdout_carries_only_data(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("--table", "memset", "--limit", "2", "--columns", "bytes,name") == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0] == "bytes,name" and len(out.out.splitlines()) == 3
    assert out.err == ""


@pytest.mark.parametrize(
    "args",
    [
        ["--sort", "colour"],
        ["--sort", "duration:sideways"],
        ["--filter", "a(", "--regex"],
        ["--columns", "nope"],
        ["--start", "10", "--end", "5"],
        ["--format", "parquet"],
        ["--limit", "-1"],
        ["--summary", "--sort", "colour"],
    ],
)
def test_bad_arguments_are_one_line_usage_errors(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(*args) == 2
    err = capsys.readouterr().err
    assert err.startswith("tuiperf: error:") and err.count("\n") == 1


def test_write_table_to_a_text_stream_without_buffer() -> None:
    buf = io.StringIO()
    t = pa.table({"name": ["a,b", 'q"x'], "bytes": [1, None]})
    assert export.write_table(buf, t) == 2
    assert list(csv.reader(io.StringIO(buf.getvalue()))) == [["name", "bytes"], ["a,b", "1"],
                                                              ['q"x', ""]]  # fmt: skip


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_file_mode_follows_the_umask(umask: int, fmt: str, tmp_path: Path) -> None:
    """mkstemp makes 0600 files: the export must get 0666 & ~umask, as `>` would."""
    out = tmp_path / f"k.{fmt}"
    old = os.umask(umask)
    try:
        assert _run("--limit", "3", "--format", fmt, "-o", str(out)) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
        assert export_file_mode(tmp_path, umask) == 0o666 & ~umask
    finally:
        os.umask(old)


def export_file_mode(folder: Path, umask: int) -> int:
    """The mode `open_output` gives a new file (and the umask read back unchanged)."""
    from tuiperf.export import current_umask, open_output

    path = folder / "plain.txt"
    with open_output(path) as f:
        f.write("x\n")
    assert current_umask() == umask
    return stat.S_IMODE(path.stat().st_mode)


def test_output_to_a_pipe_writes_into_it_and_leaves_it_a_pipe(tmp_path: Path) -> None:
    """`-o /dev/null` or a FIFO is a stream: written into, never replaced by a renamed
    temporary (which, as root, turned /dev/null into a regular file)."""
    import threading

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert _run("--limit", "3", "--format", "csv", "-o", str(fifo)) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert len(got[0].decode().splitlines()) == 4  # the header and 3 rows
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]  # no temporary left
