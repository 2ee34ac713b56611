"""Damaged or odd Kineto traces: one line on stderr, exit 1, no traceback; odd-but-valid loads."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tuiperf.errors import BadReportError
from tuiperf.load.kineto import stream as kineto_stream
from tuiperf.load.kineto.tables import load_kineto
from tuiperf.model.trace import Trace
from tuiperf.summaries.stats import compute

DATA = Path(__file__).resolve().parents[1] / "data" / "kineto"


def kernel(ts: float, name: str = "k", corr: int = 1) -> dict:
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": 2.5,
            "args": {"device": 0, "stream": 7, "correlation": corr, "grid": [1, 1, 1],
                     "block": [32, 1, 1]}}  # fmt: skip


def launch(ts: float, corr: int = 1) -> dict:
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
            "ts": ts, "dur": 1.0, "args": {"correlation": corr}}  # fmt: skip


def write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc))
    return path


def cli_error(path: Path) -> str:
    r = subprocess.run([sys.executable, "-m", "tuiperf", "summary", str(path), "--no-cache"],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tuiperf: error:"), r.stderr
    return lines[0]


@pytest.fixture
def cnn_text() -> str:
    return gzip.decompress((DATA / "kineto_cnn.json.gz").read_bytes()).decode()


def test_truncated_json(tmp_path: Path, cnn_text: str) -> None:
    f = tmp_path / "cut.json"
    f.write_text(cnn_text[: len(cnn_text) // 2])
    assert "truncated" in cli_error(f)


def test_truncated_gzip(tmp_path: Path) -> None:
    f = tmp_path / "cut.json.gz"
    f.write_bytes((DATA / "kineto_lstm.json.gz").read_bytes()[:100_000])
    assert "cut.json.gz" in cli_error(f)


def test_gzip_magic_then_garbage(tmp_path: Path) -> None:
    f = tmp_path / "bad.json.gz"
    f.write_bytes(b"\x1f\x8b" + b"this is not deflate data" * 10)
    assert "cannot read the trace" in cli_error(f)


def test_not_a_trace(tmp_path: Path) -> None:
    assert "no traceEvents" in cli_error(write(tmp_path / "a.json", {"hello": [1, 2, 3]}))


def test_no_events(tmp_path: Path) -> None:
    msg = cli_error(write(tmp_path / "e.json", {"schemaVersion": 1, "traceEvents": []}))
    assert "no events" in msg


def test_events_missing_fields(tmp_path: Path) -> None:
    events = [{"ph": "X", "cat": "kernel", "name": "k"}, {"ph": "X", "ts": 5.0, "cat": "kernel"}]
    msg = cli_error(write(tmp_path / "m.json", {"traceEvents": events}))
    assert "no events" in msg and "skipped" in msg


def test_syntax_error_in_the_middle(tmp_path: Path, cnn_text: str) -> None:
    at = cnn_text.index('"cat": "kernel"')
    f = tmp_path / "broken.json"
    f.write_text(cnn_text[:at] + '"cat" "kernel"' + cnn_text[at + 15 :])
    assert "bad trace JSON near byte" in cli_error(f)


def test_trailing_garbage(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"traceEvents": [launch(1.0), kernel(2.0)]}) + " }extra")
    assert "after the end" in cli_error(f)


def test_binary_junk(tmp_path: Path) -> None:
    f = tmp_path / "junk.json"
    f.write_bytes(b"{" + bytes(range(128, 256)) * 10)
    cli_error(f)


def test_bad_events_are_skipped_and_counted(tmp_path: Path) -> None:
    spans = {"ph": "X", "cat": "Trace", "pid": "Spans", "tid": "x", "ts": 0.5, "dur": 9.0}
    events = [launch(1.0), kernel(2.0), {"ph": "X", "cat": "kernel", "ts": "soon"},
              {"ph": "X", "cat": "kernel", "ts": 3.0, "dur": -1}, "not an event", 42,
              {"ph": "X", "cat": "kernel", "name": "nan", "ts": float("nan"), "dur": 1.0},
              spans]  # fmt: skip
    tables, meta = load_kineto(write(tmp_path / "s.json", {"traceEvents": events}), None)
    assert tables["kernels"].num_rows == 1
    assert tables["kernels"]["start"][0].as_py() == 1500  # origin = the "Spans" row at 0.5 µs
    assert tables["kernels"]["pid"][0].as_py() == 10
    assert any("skipped" in d for d in meta.diagnostics)


def test_junk_of_the_wrong_shape_is_not_an_id_nor_a_category(tmp_path: Path) -> None:
    """An id beyond int64 reads as no id, a list as no category: the rest still loads."""
    ev = [launch(1.0), kernel(2.0)]
    ev[0]["args"]["External id"] = 10**30
    ev[1]["args"]["correlation"] = -(10**30)
    odd = {"ph": "X", "cat": ["kernel"], "name": "k", "pid": 0, "tid": 7, "ts": 3.0, "dur": 1.0}
    tables, _ = load_kineto(write(tmp_path / "j.json", {"traceEvents": [*ev, odd]}), None)
    assert tables["api"]["external_id"].to_pylist() == [None]
    assert tables["kernels"]["correlation_id"].to_pylist() == [None]
    assert tables["kernels"].num_rows == 1  # the list-category event is none of the kinds


def test_bare_event_array_and_string_pids(tmp_path: Path) -> None:
    ev = [launch(1.0), kernel(2.0)]
    ev[0]["pid"], ev[0]["tid"] = "10", "11"
    tables, _ = load_kineto(write(tmp_path / "b.json", ev), None)
    assert tables["kernels"]["tid"].to_pylist() == [11]


def test_huge_and_escaped_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kineto_stream, "CHUNK", 4096)  # names far longer than a chunk
    huge = "x" * 3_000_000
    evil = '\x1b[31mred\x1b]0;title\x07 \u00e9\u4e2d \\ " \n'
    events = [launch(1.0, 1), kernel(2.0, huge, 1), launch(3.0, 2), kernel(4.0, evil, 2)]
    tables, _ = load_kineto(write(tmp_path / "h.json", {"traceEvents": events}), None)
    names = tables["kernels"]["name"].cast("string").to_pylist()
    assert names == [huge, evil]
    rows = compute(Trace(tables, None), "cuda_gpu_kern_sum").data.to_pylist()  # type: ignore[arg-type]
    assert {r["name"] for r in rows} == {huge, evil}


def test_number_cut_at_a_chunk_edge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = 1790857026000000000
    text = json.dumps({"baseTimeNanoseconds": base, "traceEvents": [launch(1.0), kernel(2.0)]})
    for chunk in range(1, 40, 3):
        monkeypatch.setattr(kineto_stream, "CHUNK", chunk)
        f = tmp_path / f"c{chunk}.json"
        f.write_text(text)
        stream = kineto_stream.TraceStream(f)
        assert len(list(stream)) == 2
        assert stream.header["baseTimeNanoseconds"] == base


def test_stream_raises_bad_report_not_json_errors(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text('{"traceEvents": [{"ph": "X",, }]}')
    with pytest.raises(BadReportError):
        list(kineto_stream.TraceStream(f))
