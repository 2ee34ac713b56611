"""`.nsys-rep` reports: run `nsys export` once (when nsys is installed), then load that."""

from __future__ import annotations

import atexit
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

from tuiperf import settings
from tuiperf.errors import BadReportError, MissingToolError, TuiperfError
from tuiperf.load import detect as det
from tuiperf.load.cache.key import MANIFEST, CacheKey, default_root
from tuiperf.load.progress import OnProgress, Progress


def find_nsys() -> str | None:
    env = settings.nsys_path()
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


def _command(nsys: str, kind: str, out: Path, report: Path) -> list[str]:
    # --include-json: Python backtraces (NVTX payloads) reach the export only with it;
    # measured on a 1.1M-kernel report, it costs nothing noticeable (bench/routes.md)
    cmd = [nsys, "export", "--type", kind, "--force-overwrite", "true"]
    return [*cmd, "--include-json=true", "-o", str(out), str(report)]


class Export:
    """One `nsys export` of `report` into a new folder under `workdir`, running from the
    moment this is made; `wait` passes its progress on and returns the export's path.

    Arrow IPC files first (the fastest route measured, bench/routes.md); an nsys too old
    to know that type is asked for SQLite instead. `cancel` stops nsys and removes the
    folder: on any error, at exit for an export nobody used, and by the caller once it has
    read the export. (A process killed outright leaves its folder to the next open's sweep
    of the cache, `Cache._sweep_temps`.)"""

    def __init__(self, report: Path, workdir: Path) -> None:
        nsys = find_nsys()
        if nsys is None:
            raise missing_nsys(report)
        self.report, self.nsys = report, nsys
        self.size = report.stat().st_size
        workdir.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(dir=workdir, prefix=f".tmp-{os.getpid()}-export-"))
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        #: stopped, or read already: a later open starts an export of its own
        self.spent = False
        _RUNNING.add(self)
        self._start("arrowdir")

    def _start(self, kind: str) -> None:
        self.kind = kind
        self.out = self.folder / ("export" if kind == "arrowdir" else "export.sqlite")
        self._run = _Run()
        self._began = time.monotonic()
        try:
            self._proc = subprocess.Popen(
                _command(self.nsys, kind, self.out, self.report),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        except OSError as e:
            self.cancel()
            raise MissingToolError(f"{self.nsys}: cannot run ({e.strerror or e})") from e
        assert self._proc.stdout is not None
        self._reader = threading.Thread(
            target=_pump, args=(self._proc.stdout, self._run), daemon=True
        )
        self._reader.start()

    def wait(self, say: OnProgress) -> Path:
        """The export's path once nsys is done, reporting its own progress (or the time so
        far) twice a second."""
        try:
            while True:
                rc, text = self._finish(say)
                if rc == 0 and self.out.exists():
                    return self.out
                if self.kind == "arrowdir" and rc > 0 and _TYPE_REJECTED.search(text):
                    shutil.rmtree(self.out, ignore_errors=True)
                    self._start("sqlite")
                    continue
                raise BadReportError(f"{self.report}: nsys export failed: {_why(rc, text)}")
        except BaseException:
            self.cancel()
            raise

    def _finish(self, say: OnProgress) -> tuple[int, str]:
        proc, reader = self._proc, self._reader
        assert proc is not None and proc.stdout is not None and reader is not None
        try:
            while True:
                self._report(say)
                try:
                    proc.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    continue
        except BaseException:
            self.cancel()  # nsys stopped first, so that the reader sees the end of its output
            raise
        finally:
            reader.join(timeout=5)
            proc.stdout.close()
        return proc.returncode, self._run.text()

    def _report(self, say: OnProgress) -> None:
        run = self._run
        detail = f"{time.monotonic() - self._began:.0f} s, report {self.size / 2**20:.0f} MiB"
        if run.percent >= 0:
            detail = f"{run.events:,} events, {detail}"
        phase = f"nsys export → {self.kind}"
        say(Progress(phase, max(run.percent, 0), 100 if run.percent >= 0 else 0, detail))

    def cancel(self) -> None:
        """Stop nsys if it still runs, close its output and remove its folder (again:
        nothing happens)."""
        self.spent = True
        _RUNNING.discard(self)
        proc = self._proc
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if self._reader is not None:
                self._reader.join(timeout=5)
            if proc.stdout is not None:
                proc.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


#: exports not yet cancelled: stopped when the process exits
_RUNNING: set[Export] = set()


@atexit.register
def _cancel_running() -> None:
    for job in list(_RUNNING):
        job.cancel()


def run_export(report: Path, workdir: Path, progress: OnProgress) -> Path:
    """Export `report` into a new folder under `workdir` now; returns the export's path."""
    return Export(report, workdir).wait(progress)


def export_root(cache_dir: Path | None, use_cache: bool) -> Path:
    """Where exports are made: beside the cache entries (same file system), else in the
    temporary folder."""
    if use_cache:
        return (cache_dir or default_root()) / "exports"
    return Path(tempfile.gettempdir()) / "exports"


def export_ahead(report: Path, cache_dir: Path | None, use_cache: bool) -> Export | None:
    """Start the export a `.nsys-rep` will need before the caller imports what it needs
    (the viewer: ~0.5 s), so that both happen at once; None when it will not need one (an
    export beside it, a cache entry) or cannot start one now (the loader then says why)."""
    try:
        if det.detect(report) != det.NSYS_REP or find_nsys() is None:
            return None
        if sibling_export(report) is not None:
            return None
        if use_cache:
            key = CacheKey.for_source(report, det.NSYS_REP)
            if ((cache_dir or default_root()) / key.dirname / MANIFEST).exists():
                return None
        return Export(report, export_root(cache_dir, use_cache))
    except (OSError, TuiperfError):
        return None


def _why(rc: int, text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines:
        return lines[-1]
    return f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
