"""nsys's diagnostics name the process they are about (issue 35 item 12): "No cuDNN events
collected" of process 12197 (python3) in cnn_osrt, not a word against the report's kernels. The
expected lines come from the export's DIAGNOSTIC_EVENT table read with sqlite3."""

from __future__ import annotations

import sqlite3

from tests.support.analysis import sqlite_path
from tuiperf.load.open import OpenOptions, open_trace


def test_each_warning_names_its_process() -> None:
    path = sqlite_path("cnn_osrt")
    con = sqlite3.connect(path)
    names = dict(con.execute("SELECT pid, name FROM PROCESSES"))
    want = []
    for sev, text, gpid in con.execute(
        "SELECT severity, text, globalPid FROM DIAGNOSTIC_EVENT WHERE severity >= 2"
    ):
        pid = (gpid >> 24) & 0xFFFFFF if gpid is not None and gpid > 0 else None
        level = "warning" if sev == 2 else "error"
        who = f"process {pid} ({names[pid]})" if pid in names else f"process {pid}"
        want.append(f"{level}: {who}: {text}" if pid else f"{level}: {text}")
    con.close()
    got = open_trace(path, OpenOptions(use_cache=False)).meta.diagnostics
    assert [d for d in got if d.startswith(("warning", "error"))] == want
    assert (
        "warning: process 12197 (python3): No cuDNN events collected. Does the process use "
        "cuDNN?" in got
    )
    assert any(d.startswith("warning: Scheduling information") for d in got)  # no process
