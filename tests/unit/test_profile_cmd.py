"""`tuiperf profile`: a real training script profiled end to end with torch.profiler on the
CPU (nsys hidden), and the Nsight Systems path through tests/unit/standin/nsys, a stand-in
that records the flags it gets and writes a real report and its real SQLite export."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import DATA, NSYS_DATA, REPO
from tests.support import needs
from tests.support.cli import PYTHON, assert_one_line_error
from tests.support.data import unxz

needs.module("torch")

STANDIN = Path(__file__).parent / "standin" / "nsys"

#: a small training loop; the `.item()` sync is on the line marked SYNC
TRAIN = """\
import sys
import torch


def train_step(model, opt, x, y):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()  # SYNC


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    print(train_step(model, opt, torch.randn(8, 16), torch.randn(8, 4)))
"""

#: the same loop driven by tuiperf.torch.profile_steps (its own path and steps)
TRAIN_STEPS = """\
import torch
import tuiperf.torch

model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with tuiperf.torch.profile_steps("own.pt.trace.json.gz", steps=9, wait=0, warmup=1) as prof:
    while not prof.done:
        loss = model(torch.randn(8, 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def tuiperf(cwd: Path, *args: str, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    full = {**os.environ, "TUIPERF_NSYS": str(cwd / "no-nsys-here"), **(env or {})}
    full["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPO), full.get("PYTHONPATH"))))
    return subprocess.run([PYTHON, "-m", "tuiperf", *args], capture_output=True,
                          text=True, cwd=cwd, env=full, timeout=300)  # fmt: skip


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- torch.profiler (no nsys) --------------------------------------------------------


@pytest.fixture(scope="module")
def whole_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    work = tmp_path_factory.mktemp("whole")
    write(work, "train.py", TRAIN)
    res = tuiperf(work, "profile", "--no-tui", "--no-cache", "--", PYTHON, "train.py", "4")
    return work, res


def test_whole_run_writes_a_trace_in_cwd_and_says_so(whole_run) -> None:  # type: ignore[no-untyped-def]
    work, res = whole_run
    assert res.returncode == 0, res.stderr
    report = work / "tuiperf_train_1.pt.trace.json.gz"
    assert report.is_file()
    assert "profiling with torch.profiler (Python stacks and input shapes, the whole run): " \
           "no nsys found" in res.stderr  # fmt: skip
    size = report.stat().st_size
    assert f"report: tuiperf_train_1.pt.trace.json.gz ({size / 1e3:.1f} kB)" in res.stderr
    losses = [ln for ln in res.stdout.splitlines() if re.fullmatch(r"\d+\.\d+", ln)]
    assert len(losses) == 4  # the program's own output, one line a step
    assert sorted(p.name for p in work.iterdir()) == ["train.py", report.name]


def test_whole_run_has_stacks_and_shapes(whole_run) -> None:  # type: ignore[no-untyped-def]
    from tuiperf.load.open import OpenOptions, open_trace

    work, _ = whole_run
    report = work / "tuiperf_train_1.pt.trace.json.gz"
    trace = open_trace(report, OpenOptions(use_cache=False))
    assert {"with_stack", "record_shapes", "python_function"} <= set(trace.meta.capture)
    events = json.loads(gzip.decompress(report.read_bytes()))["traceEvents"]
    frames = {e["name"] for e in events if e.get("cat") == "python_function"}
    assert any(f.startswith("train.py(") and f.endswith(": train_step") for f in frames), frames
    dims = [e["args"]["Input Dims"] for e in events
            if e.get("name") == "aten::linear" and "Input Dims" in e.get("args", {})]  # fmt: skip
    assert dims and dims[0][0] == [8, 16]  # the batch the script makes
    items = [e for e in events if e.get("name") == "aten::item"]
    assert len(items) == 4  # one a step, 4 steps (the program's argument reached it)


def test_no_tui_prints_what_analyze_prints(whole_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    work, res = whole_run
    report = work / "tuiperf_train_1.pt.trace.json.gz"
    alone = tuiperf(tmp_path, "analyze", str(report), "--no-cache")
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.startswith("tuiperf analyze")
    assert res.stdout.endswith(alone.stdout)


def test_a_second_run_does_not_overwrite(tmp_path: Path) -> None:
    write(tmp_path, "train.py", TRAIN)
    first = tmp_path / "tuiperf_train_1.pt.trace.json.gz"
    first.write_bytes(b"not mine to overwrite")
    (tmp_path / "tuiperf_train_2.sqlite").write_bytes(b"nor this")  # any file of the stem
    res = tuiperf(tmp_path, "profile", "--no-tui", "--no-cache", "--", PYTHON,
                  "train.py", "1")  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert first.read_bytes() == b"not mine to overwrite"
    assert (tmp_path / "tuiperf_train_3.pt.trace.json.gz").is_file()


def test_steps_of_profile_steps(tmp_path: Path) -> None:
    from tuiperf.load.open import OpenOptions, open_trace

    write(tmp_path, "loop.py", TRAIN_STEPS)
    res = tuiperf(tmp_path, "profile", "--steps", "2", "--no-tui", "--no-cache", "--",
                  PYTHON, "loop.py")  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "the steps of tuiperf.torch.profile_steps" in res.stderr
    assert not (tmp_path / "own.pt.trace.json.gz").exists()  # written where profile said
    trace = open_trace(tmp_path / "tuiperf_loop_1.pt.trace.json.gz", OpenOptions(use_cache=False))
    texts = trace.table("nvtx")["text"].cast("string").to_pylist()
    assert sorted(t for t in texts if t.startswith("ProfilerStep#")) == [
        "ProfilerStep#4",
        "ProfilerStep#5",
    ]  # --steps 2 (not the script's 9) after its 3 timed and 1 warm-up steps
    assert {"with_stack", "record_shapes"} <= set(trace.meta.capture)


def test_missing_script_is_one_line(tmp_path: Path) -> None:
    res = tuiperf(tmp_path, "profile", "--no-tui", "--", PYTHON, "nope.py")
    assert_one_line_error(res, 2)
    assert "nope.py: no such file" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_no_program_is_one_line(tmp_path: Path) -> None:
    assert_one_line_error(tuiperf(tmp_path, "profile", "--no-tui"), 2)


def test_not_python_without_nsys_is_one_line(tmp_path: Path) -> None:
    res = tuiperf(tmp_path, "profile", "--no-tui", "--", "true")
    assert_one_line_error(res, 2)
    assert "without nsys, tuiperf profile runs Python programs only" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_failing_program_keeps_what_was_captured(tmp_path: Path) -> None:
    write(tmp_path, "fails.py", TRAIN + "raise SystemExit(3)\n")
    res = tuiperf(tmp_path, "profile", "--no-tui", "--no-cache", "--", PYTHON,
                  "fails.py", "2")  # fmt: skip
    assert res.returncode == 1
    report = tmp_path / "tuiperf_fails_1.pt.trace.json.gz"
    assert report.is_file()
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("tuiperf: error: the program exited with status 3; what was "
                           "captured: tuiperf_fails_1.pt.trace.json.gz (")  # fmt: skip
    assert "Traceback" not in res.stderr
    assert "tuiperf analyze" not in res.stdout


def test_ctrl_c_is_clean_and_keeps_the_trace(tmp_path: Path) -> None:
    write(tmp_path, "slow.py", TRAIN + "open('started', 'w').close()\nimport time\n"
          "time.sleep(60)\n")  # fmt: skip
    env = {**os.environ, "TUIPERF_NSYS": str(tmp_path / "none")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPO), env.get("PYTHONPATH"))))
    proc = subprocess.Popen(
        [PYTHON, "-m", "tuiperf", "profile", "--no-tui", "--", PYTHON, "slow.py"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (tmp_path / "started").exists() and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "tuiperf: interrupted"
    assert "interrupted; what was captured: tuiperf_slow_1.pt.trace.json.gz" in err
    assert (tmp_path / "tuiperf_slow_1.pt.trace.json.gz").is_file()


def test_without_no_tui_the_viewer_opens_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tuiperf.cli import main
    from tuiperf.commands import open_tui

    write(tmp_path, "train.py", TRAIN)
    opened: list[list[str]] = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUIPERF_NSYS", str(tmp_path / "none"))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setattr(open_tui, "has_terminal", lambda: True)
    monkeypatch.setattr(open_tui, "run_open", lambda argv: opened.append(argv) or 0)
    assert main(["profile", "--no-cache", "--", PYTHON, "train.py", "1"]) == 0
    assert opened == [[str(tmp_path / "tuiperf_train_1.pt.trace.json.gz"), "--no-cache"]]


# -- Nsight Systems, through the stand-in --------------------------------------------


@pytest.fixture
def standin(tmp_path: Path) -> dict[str, str]:
    """The stand-in nsys, its real report (vit_range.nsys-rep) and the real SQLite export
    it hands out for it (the CPU-bound capture of tests/data/budget)."""
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "tuiperf_train_1.sqlite").write_bytes(
        unxz(DATA / "budget" / "cpu_bound.sqlite.xz").read_bytes()
    )
    return {
        "TUIPERF_NSYS": str(STANDIN),
        "STANDIN_EXPORTS": str(exports),
        "STANDIN_PROFILE_REPORT": str(NSYS_DATA / "vit_range.nsys-rep"),
        "STANDIN_ARGV_LOG": str(tmp_path / "argv.jsonl"),
    }


def logged(env: dict[str, str]) -> list[dict[str, object]]:
    return [json.loads(ln) for ln in Path(env["STANDIN_ARGV_LOG"]).read_text().splitlines()]


def test_nsys_flags_report_and_analysis(tmp_path: Path, standin: dict[str, str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    write(work, "train.py", TRAIN)
    res = tuiperf(work, "profile", "--no-tui", "--no-cache", "--", PYTHON, "train.py",
                  "2", env=standin)  # fmt: skip
    assert res.returncode == 0, res.stderr
    call, export_call = logged(standin)
    argv = call["argv"]
    assert isinstance(argv, list)
    assert argv[:4] == ["profile", "-t", "cuda,nvtx,osrt", "--cpuctxsw=none"]
    assert {"--sample=process-tree", "--cudabacktrace=all", "--python-backtrace=cuda"} <= set(argv)
    assert "--python-sampling=true" in argv  # issue 34: Python CPU samples
    assert not any(a.startswith("--capture-range") for a in argv)  # no profile_steps: all of it
    base = work / "tuiperf_train_1"
    i = argv.index("-o")
    assert argv[i : i + 4] == ["-o", str(base), "-f", "false"]
    assert argv[i + 4 :] == [PYTHON, "train.py", "2"]
    assert call["env"] == {"TUIPERF_PROFILE": "nsys"}
    assert "profiling with Nsight Systems (NVIDIA Nsight Systems version 2025.3.2" in res.stderr
    assert "CPU and Python sampling" in res.stderr
    report = base.with_suffix(".nsys-rep")
    assert digest(report) == digest(NSYS_DATA / "vit_range.nsys-rep")
    export = base.with_suffix(".sqlite")  # exported beside it, with the NVTX payloads' JSON
    want = ["export", "--type", "sqlite", "--force-overwrite", "false", "--include-json=true"]
    assert export_call["argv"] == [*want, "-o", str(export), str(report)]
    assert digest(export) == digest(Path(standin["STANDIN_EXPORTS"]) / "tuiperf_train_1.sqlite")
    alone = tuiperf(tmp_path, "analyze", str(report), "--no-cache", env=standin)
    assert alone.returncode == 0, alone.stderr
    assert "cpu_bound" in alone.stdout
    assert res.stdout.endswith(alone.stdout)


def test_nsys_steps_and_an_older_nsys(tmp_path: Path, standin: dict[str, str]) -> None:
    write(tmp_path, "train.py", TRAIN)
    env = {**standin, "STANDIN_NO_PYBT": "1"}
    res = tuiperf(tmp_path, "profile", "--steps", "3", "--no-tui", "--no-cache", "--",
                  "train.py", env=env)  # fmt: skip
    assert res.returncode == 0, res.stderr
    call, _ = logged(standin)
    argv = call["argv"]
    assert isinstance(argv, list)
    assert "--sample=none" in argv and not any("backtrace" in a for a in argv)
    assert not any("python-sampling" in a for a in argv)
    assert "--capture-range=cudaProfilerApi" in argv and "--capture-range-end=stop" in argv
    assert argv[-2:] == [PYTHON, "train.py"]  # a bare script runs with this Python
    assert call["env"] == {"TUIPERF_PROFILE": "nsys", "TUIPERF_PROFILE_STEPS": "3"}
    assert "no --python-backtrace" in res.stderr


def test_nsys_failing_program(tmp_path: Path, standin: dict[str, str]) -> None:
    write(tmp_path, "train.py", TRAIN + "raise SystemExit(5)\n")
    res = tuiperf(tmp_path, "profile", "--no-tui", "--", PYTHON, "train.py", "1",
                  env=standin)  # fmt: skip
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "tuiperf: error: nsys profile exited with status 5; what was captured: "
        "tuiperf_train_1.nsys-rep ("
    )


# -- the pieces ----------------------------------------------------------------------


def test_parse_target() -> None:
    from tuiperf.commands.profile_target import parse_target
    from tuiperf.errors import UsageError

    t = parse_target(["python3", "-u", "-X", "dev", "train.py", "--lr", "1"])
    assert (t.flags, t.script, t.args, t.name) == (("-u", "-X", "dev"), Path("train.py"),
                                                   ("--lr", "1"), "train")  # fmt: skip
    boot = t.torch_argv()
    assert boot[:4] == ["python3", "-u", "-X", "dev"] and boot[4] == "-c"
    assert boot[6:] == ["train.py", "--lr", "1"]
    m = parse_target(["/usr/bin/python3.12", "-m", "pkg.train_mod", "a"])
    assert (m.module, m.args, m.name) == ("pkg.train_mod", ("a",), "train_mod")
    assert parse_target(["run.py"]).argv == [PYTHON, "run.py"]
    other = parse_target(["torchrun", "--nproc-per-node", "2", "train.py"])
    assert other.python is None and other.name == "torchrun"
    with pytest.raises(UsageError):
        other.torch_argv()
    for bad in (["python", "-c", "print(1)"], ["python"], ["python", "-m"]):
        with pytest.raises(UsageError):
            parse_target(bad)


def test_report_base(tmp_path: Path) -> None:
    from tuiperf.commands.profile_target import report_base

    assert report_base(tmp_path, "t") == tmp_path / "tuiperf_t_1"
    (tmp_path / "tuiperf_t_1.nsys-rep").touch()
    (tmp_path / "tuiperf_t_2").mkdir()
    assert report_base(tmp_path, "t") == tmp_path / "tuiperf_t_3"
