"""`.nsys-rep` reports: run `nsys export` once (when nsys is installed), then load that."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tuiperf.errors import BadReportError, MissingToolError
from tuiperf.load.progress import OnProgress, Progress


def find_nsys() -> str | None:
    env = os.environ.get("TUIPERF_NSYS")
    if env:
        return env if (os.path.isfile(env) and os.access(env, os.X_OK)) else shutil.which(env)
    return shutil.which("nsys")


def _siblings(report: Path) -> list[tuple[Path, int]]:
    """Exports next to the report (nsys stats leaves one there), with how much older than
    the report each is in ns (<= 0: at least as new)."""
    mtime = report.stat().st_mtime_ns
    stem = report.with_suffix("")
    out = []
    for cand in (stem.with_suffix(".sqlite"), Path(f"{stem}_arrowdir"), Path(f"{stem}_parquetdir")):
        try:
            if cand.exists():
                out.append((cand, mtime - cand.stat().st_mtime_ns))
        except OSError:
            continue
    return out


def sibling_export(report: Path) -> Path | None:
    """An export next to the report, at least as new as it."""
    return next((p for p, older in _siblings(report) if older <= 0), None)


def stale_exports(report: Path) -> list[str]:
    """One sentence for each export beside the report that is older than it, so not used."""
    return [
        f"{p.name} beside the report is {older / 1e9:.3g} s older than {report.name}, so it "
        "may hold an earlier capture: not used (re-export it, or touch it if it is the same)"
        for p, older in _siblings(report)
        if older > 0
    ]


def export_command(report: Path, nsys: str = "nsys") -> list[str]:
    out = report.with_suffix(".sqlite")
    return [
        nsys,
        "export",
        "--type",
        "sqlite",
        "--force-overwrite",
        "true",
        "-o",
        str(out),
        str(report),
    ]


def missing_nsys(report: Path) -> MissingToolError:
    cmd = shlex.join(export_command(report))
    return MissingToolError(
        f"{report}: opening .nsys-rep needs Nsight Systems (nsys), which is not on PATH "
        f"(or set TUIPERF_NSYS); run `{cmd}` where nsys is installed and open the .sqlite"
    )


#: nsys export's own progress line: `Processing 34684 events: [=====   42%   ]`
_PROGRESS = re.compile(rb"Processing (\d+) events: \[[= ]*(\d+)%")
#: how an nsys without the arrowdir type answers `--type arrowdir`
_TYPE_REJECTED = re.compile(r"arrowdir|(unknown|invalid|unrecognized|unsupported)\b.*\btype", re.I)


@dataclass
class _Run:
    """What one `nsys export` printed, read while it runs."""

    output: bytearray = field(default_factory=bytearray)
    events: int = 0
    percent: int = -1

    def feed(self, chunk: bytes) -> None:
        self.output += chunk
        tail = bytes(self.output[-400:])
        for m in _PROGRESS.finditer(tail):
            self.events, self.percent = int(m.group(1)), int(m.group(2))

    def text(self) -> str:
        """The output without the progress bars (they redraw with carriage returns)."""
        parts = re.split(rb"[\r\n]+", bytes(self.output))
        kept = [p for p in parts if p.strip() and not _PROGRESS.search(p)]
        return b"\n".join(kept).decode("utf-8", "replace")


def _pump(stream: IO[bytes], run: _Run) -> None:
    while chunk := os.read(stream.fileno(), 8192):
        run.feed(chunk)


def _report_progress(run: _Run, kind: str, started: float, size: int, say: OnProgress) -> None:
    detail = f"{time.monotonic() - started:.0f} s, report {size / 2**20:.0f} MiB"
    if run.percent >= 0:
        detail = f"{run.events:,} events, {detail}"
    phase = f"nsys export → {kind}"
    say(Progress(phase, max(run.percent, 0), 100 if run.percent >= 0 else 0, detail))


def _export(cmd: list[str], kind: str, report: Path, say: OnProgress) -> tuple[int, str]:
    """Run one `nsys export`, reporting its own progress (or the time so far) twice a
    second; the exit status and what it printed."""
    size = report.stat().st_size
    started = time.monotonic()
    run = _Run()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
    )
    assert proc.stdout is not None
    reader = threading.Thread(target=_pump, args=(proc.stdout, run), daemon=True)
    reader.start()
    try:
        while True:
            _report_progress(run, kind, started, size, say)
            try:
                proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                continue
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        reader.join(timeout=5)
        proc.stdout.close()
    return proc.returncode, run.text()


def _command(nsys: str, kind: str, out: Path, report: Path) -> list[str]:
    # --include-json: Python backtraces (NVTX payloads) reach the export only with it;
    # measured on a 1.1M-kernel report, it costs nothing noticeable (bench/routes.md)
    cmd = [nsys, "export", "--type", kind, "--force-overwrite", "true"]
    return [*cmd, "--include-json=true", "-o", str(out), str(report)]


def run_export(report: Path, workdir: Path, progress: OnProgress) -> Path:
    """Export `report` into a new folder under `workdir`; returns the export's path.

    Arrow IPC files first (the fastest route measured, bench/routes.md); an nsys too old
    to know that type is asked for SQLite instead."""
    nsys = find_nsys()
    if nsys is None:
        raise missing_nsys(report)
    workdir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=workdir, prefix=f".tmp-{os.getpid()}-export-"))
    try:
        for kind in ("arrowdir", "sqlite"):
            out = tmp / ("export" if kind == "arrowdir" else "export.sqlite")
            rc, text = _export(_command(nsys, kind, out, report), kind, report, progress)
            if rc == 0 and out.exists():
                return out
            if kind == "arrowdir" and rc > 0 and _TYPE_REJECTED.search(text):
                shutil.rmtree(out, ignore_errors=True)
                continue
            raise BadReportError(f"{report}: nsys export failed: {_why(rc, text)}")
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise MissingToolError(f"{nsys}: cannot run ({e.strerror or e})") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    raise AssertionError("unreachable")  # pragma: no cover


def _why(rc: int, text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines:
        return lines[-1]
    return f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
