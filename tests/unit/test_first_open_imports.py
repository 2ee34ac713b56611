"""A first open (conversion into an empty cache, then the summary) imports no pandas.

pyarrow imports pandas, when it is installed, from `pa.array`, `pa.scalar` (any Python
value given to a compute function), `to_numpy` and `fill_null`: a third of a second on
an H100 VM, 0.17 s here, on the critical path of every first open of an export. The
readers, the assembler, the cache writer, the `nsys stats` summaries and the analysis
(the viewer's advice worker) build their arrays on buffers instead (model/arrays.py).
Each check runs in a fresh interpreter, so a pandas imported by another test does not
hide one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import needs

SOURCES = [
    "vit_range.sqlite", "cnn_osrt.sqlite", "lstm.sqlite", "vit_amp.sqlite",
    "h100_2gpu_1s.sqlite", "cnn_osrt_arrowdir", "cnn_osrt_parquetdir",
]  # fmt: skip


#: `tuiperf ARGS` in a fresh interpreter that says at the end whether pandas was imported
_CLI = (
    "import sys\n"
    "from tuiperf.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('PANDAS', 'pandas' in sys.modules, file=sys.stderr)\n"
    "raise SystemExit(code)\n"
)


def _tuiperf(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", _CLI, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "args",
    [["summary", "-r", "kern"], ["summary"], ["convert"], ["analyze"]],
    ids=["summary-kern", "summary", "convert", "analyze"],
)
@pytest.mark.parametrize("name", SOURCES)
def test_first_open_does_not_import_pandas(
    name: str, args: list[str], nsys_dir: Path, tmp_path: Path
) -> None:
    needs.module("pandas")  # the dev install has it: the check below means something
    source = nsys_dir / name
    if not source.exists():
        pytest.skip(f"{name} is not among the bundled reports")
    out = _tuiperf(*args, str(source), "--cache-dir", str(tmp_path), "-q")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "PANDAS False" in out.stderr, f"{name} {args}: pandas imported"


def test_diff_does_not_import_pandas(nsys_dir: Path, tmp_path: Path) -> None:
    needs.module("pandas")
    a, b = nsys_dir / "vit_range.sqlite", nsys_dir / "vit_amp.sqlite"
    out = _tuiperf("diff", str(a), str(b), "--cache-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "PANDAS False" in out.stderr, "diff imported pandas"
