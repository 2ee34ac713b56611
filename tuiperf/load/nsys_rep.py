"""`.nsys-rep` reports: run `nsys export` once (when nsys is installed), then load that."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

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


def _supports_arrowdir(nsys: str) -> bool:
    try:
        out = subprocess.run(
            [nsys, "export", "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return "arrowdir" in (out.stdout + out.stderr)


def run_export(report: Path, workdir: Path, progress: OnProgress) -> Path:
    """Export `report` into a new folder under `workdir`; returns the export's path."""
    nsys = find_nsys()
    if nsys is None:
        raise missing_nsys(report)
    kind = "arrowdir" if _supports_arrowdir(nsys) else "sqlite"
    workdir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=workdir, prefix=f".tmp-{os.getpid()}-export-"))
    out = tmp / ("export" if kind == "arrowdir" else "export.sqlite")
    cmd = [nsys, "export", "--type", kind, "--force-overwrite", "true", "-o", str(out), str(report)]
    progress(Progress(f"export .nsys-rep → {kind} (nsys)"))
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise MissingToolError(f"{nsys}: cannot run ({e.strerror or e})") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if res.returncode != 0 or not out.exists():
        shutil.rmtree(tmp, ignore_errors=True)
        lines = [ln for ln in (res.stderr + res.stdout).splitlines() if ln.strip()]
        status = (
            f"killed by signal {-res.returncode}"
            if res.returncode < 0
            else f"exit status {res.returncode}"
        )
        why = lines[-1].strip() if lines else status
        raise BadReportError(f"{report}: nsys export failed: {why}")
    return out
