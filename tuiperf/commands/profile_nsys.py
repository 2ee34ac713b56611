"""Nsight Systems for `tuiperf profile`: where nsys is, what it supports, the flags it gets.

The flags are what tuiperf's analysis reads: CUDA API and GPU activity, NVTX ranges and the
OS runtime calls (`-t cuda,nvtx,osrt`), no CPU context switches. Where `nsys profile --help`
offers `--python-backtrace` (nsys 2025.3 does, older ones do not), the Python stack of each
CUDA API call is recorded too; nsys records those only with CPU sampling
(`--sample=process-tree`) and CUDA backtraces (`--cudabacktrace=all`) on, and its SQLite
export holds their frames only with `--include-json=true` (tests/data/graphs/README.md,
"Python backtraces"). Where the help offers `--python-sampling` (2025.3 does), Python's
own stack is sampled too (`--python-sampling=true`: NVTX marks of the `Python Periodic
Sampling` domain, read as Python CPU samples; issue 34); that also needs `--sample=
process-tree`. With neither, sampling stays off (`--sample=none`). Context switches stay
off (`--cpuctxsw=none`): nsys 2025.3 writes SCHED_EVENTS with CPU sampling on anyway
(docs/formats-cpu-samples.md), which is what tuiperf's thread state reads.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tuiperf import settings

#: where Nsight Systems installs (newest version first within each pattern)
USUAL_PLACES = (
    "/opt/nvidia/nsight-systems*/bin/nsys",
    "/opt/nvidia/nsight-systems*/*/bin/nsys",
    "/usr/local/cuda/bin/nsys",
    "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
)
#: what `find_nsys` looks at, for the message that says none was found
WHERE = "$TUIPERF_NSYS, $NSYS, PATH, /opt/nvidia/nsight-systems*, /usr/local/cuda/bin"


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_nsys() -> str | None:
    """$TUIPERF_NSYS (set but not runnable: no nsys, on purpose), $NSYS, PATH, then the
    usual install folders."""
    for var, val in settings.nsys_variables():
        if val:
            found = val if _runnable(val) else shutil.which(val)
            if found or var == "TUIPERF_NSYS":
                return found
    on_path = shutil.which("nsys")
    if on_path:
        return on_path
    for pattern in USUAL_PLACES:
        for cand in sorted(glob.glob(pattern), reverse=True):
            if _runnable(cand):
                return cand
    return None


@dataclass(frozen=True)
class NsysInfo:
    path: str
    version: str
    python_backtrace: bool  # `nsys profile --python-backtrace`
    include_json: bool  # `nsys export --include-json`
    python_sampling: bool = False  # `nsys profile --python-sampling`


def _output(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout + res.stderr


def probe(nsys: str) -> NsysInfo:
    """Ask nsys what it is and which of the options tuiperf wants it has."""
    version = _output([nsys, "--version"]).strip().splitlines()
    helps = _output([nsys, "profile", "--help"])
    return NsysInfo(
        path=nsys,
        version=version[0] if version else "version unknown",
        python_backtrace="--python-backtrace" in helps,
        include_json="--include-json" in _output([nsys, "export", "--help"]),
        python_sampling="--python-sampling" in helps,
    )


def profile_argv(info: NsysInfo, out_base: Path, steps: bool, program: list[str]) -> list[str]:
    """`nsys profile` of `program` into `out_base`.nsys-rep (never over an existing file);
    `steps`: only between cudaProfilerStart and Stop (tuiperf.torch.profile_steps)."""
    argv = [info.path, "profile", "-t", "cuda,nvtx,osrt", "--cpuctxsw=none"]
    sampling = info.python_backtrace or info.python_sampling
    argv += ["--sample=process-tree"] if sampling else ["--sample=none"]
    if info.python_backtrace:
        argv += ["--cudabacktrace=all", "--python-backtrace=cuda"]
    if info.python_sampling:
        argv += ["--python-sampling=true"]
    if steps:
        argv += ["--capture-range=cudaProfilerApi", "--capture-range-end=stop"]
    return [*argv, "-o", str(out_base), "-f", "false", *program]


def export_argv(info: NsysInfo, report: Path) -> list[str]:
    """The SQLite export beside the report (tuiperf opens it in place of the report)."""
    argv = [info.path, "export", "--type", "sqlite", "--force-overwrite", "false"]
    if info.include_json:
        argv += ["--include-json=true"]
    return [*argv, "-o", str(report.with_suffix(".sqlite")), str(report)]
