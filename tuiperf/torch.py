"""Profile a few training steps with torch.profiler and write a trace tuiperf opens.

    import tuiperf.torch

    with tuiperf.torch.profile_steps("train.pt.trace.json.gz", steps=5) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
            if prof.done:
                break

    # then: tuiperf train.pt.trace.json.gz

CPU activity is always recorded; CUDA activity when a GPU is available, and then
each step is also an NVTX range (`step N`), so the same loop run under
`nsys profile` shows its steps. Python stacks and input shapes are recorded unless
`with_stack=False` / `record_shapes=False`. The trace is written once the active steps
are recorded (or when the block ends early, with the steps recorded so far), through a
temporary file renamed into place; a `.gz` name writes gzip. A block that ends
during the waiting or warm-up steps has recorded nothing: no trace is written, and
a warning on stderr says so. Needs the `torch` extra: `pip install tuiperf[torch]`.

Under `tuiperf profile` (which sets the variables below for the program it runs):
TUIPERF_PROFILE_STEPS=N records N steps instead of `steps`; TUIPERF_PROFILE=torch
writes the trace to TUIPERF_PROFILE_OUT instead of `path`; TUIPERF_PROFILE=nsys runs
no torch.profiler at all (Nsight Systems records) and calls cudaProfilerStart when the
recorded steps begin and cudaProfilerStop when they end, for `nsys profile
--capture-range=cudaProfilerApi`.

`python -m tuiperf.torch SCRIPT ARGS...` (or `-m MODULE ARGS...`) runs a whole program
under torch.profiler (stacks and shapes) and writes TUIPERF_PROFILE_OUT, even when the
program fails or is interrupted: `tuiperf profile` uses it for programs without
`profile_steps`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from tuiperf import settings

#: the key of the untraced step time (ns) in a trace's metadata / an NVTX mark's text
UNTRACED_KEY = "tuiperf_untraced_step_ns"


def _torch() -> Any:
    try:
        import torch
        import torch.profiler
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("tuiperf.torch needs PyTorch: pip install 'tuiperf[torch]'") from e
    return torch


def _activities(torch: Any) -> list[Any]:
    acts = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts


class StepProfiler:
    """What `profile_steps` returns; call `step()` once at the end of every step."""

    def __init__(self, path: Path, steps: int, wait: int, warmup: int, nvtx: bool | None,
                 timed: int = 0, **profiler_args: Any) -> None:  # fmt: skip
        if steps < 1 or wait < 0 or warmup < 0 or timed < 0:
            raise ValueError("steps must be >= 1, wait, warmup and timed >= 0")
        self.path = Path(path)
        self.steps, self.wait, self.warmup = steps, wait, warmup
        #: steps after `wait` timed with nothing recording: what a step costs untraced
        self.timed = timed
        self._t0 = 0.0
        #: their mean wall time (ns), once timed (synchronized at both ends)
        self.untraced_step_ns: int | None = None
        self._args = profiler_args
        self._nvtx = nvtx
        self._prof: Any = None
        self._step = 0
        self._range_open = False
        self.written = False
        #: under `tuiperf profile` with Nsight Systems: no torch.profiler, a capture range
        self.nsys = False
        self._capturing = False

    @property
    def total_steps(self) -> int:
        """Steps the loop should run: waiting, timed, warm-up and recorded ones."""
        return self.wait + self.timed + self.warmup + self.steps

    @property
    def _first_recorded(self) -> int:
        return self.wait + self.timed + self.warmup

    @property
    def done(self) -> bool:
        return self._step >= self.total_steps

    def __enter__(self) -> StepProfiler:
        torch = _torch()
        cuda = torch.cuda.is_available()
        self._nvtx = cuda if self._nvtx is None else (self._nvtx and cuda)
        if self.nsys:
            self._prof = _NsysRange(torch)
            self._capture()
            self._push()
            return self
        sched = torch.profiler.schedule(wait=self.wait + self.timed, warmup=self.warmup,
                                        active=self.steps, repeat=1)  # fmt: skip
        self._prof = torch.profiler.profile(activities=_activities(torch), schedule=sched,
                                            on_trace_ready=self._save, **self._args)  # fmt: skip
        self._prof.__enter__()
        self._time()
        self._push()
        return self

    def step(self) -> None:
        """Mark the end of one training step."""
        if self._prof is None:
            raise RuntimeError("StepProfiler.step() outside its `with` block")
        if self.done:
            return
        self._pop()
        self._step += 1
        self._time()
        self._prof.step()
        self._capture()
        self._say_untraced()
        if not self.done:
            self._push()

    def _time(self) -> None:
        """Time the `timed` steps after `wait`: nothing records them (torch.profiler waits,
        Nsight Systems' capture range has not started)."""
        if not self.timed or self._step not in (self.wait, self.wait + self.timed):
            return
        torch = _torch()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        now = time.perf_counter()
        if self._step == self.wait:
            self._t0 = now
        else:
            self.untraced_step_ns = round((now - self._t0) * 1e9 / self.timed)

    def _say_untraced(self) -> None:
        """Put the untraced step time into the recording, as its first step begins: the
        trace's metadata (torch.profiler) or an NVTX mark (Nsight Systems)."""
        if self.untraced_step_ns is None or self._step != self._first_recorded:
            return
        value = str(self.untraced_step_ns)
        if self.nsys:
            if self._capturing:
                # a torch built without NVTX raises: the mark is then left out
                with contextlib.suppress(RuntimeError, AttributeError):
                    _torch().cuda.nvtx.mark(f"{UNTRACED_KEY}={value}")
        else:
            self._prof.add_metadata(UNTRACED_KEY, value)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self._pop()
        if self._prof is None:
            return
        if self.nsys:
            self._capture(end=True)
        else:
            self._prof.__exit__(kind, exc, tb)
        self._prof = None
        if not self.written:
            self._warn_unwritten()

    def _capture(self, end: bool = False) -> None:
        """Nsight Systems mode: cudaProfilerStart as the recorded steps begin, Stop after."""
        if not self.nsys:
            return
        recording = not end and self._first_recorded <= self._step < self.total_steps
        if recording and not self._capturing:
            self._capturing = self._prof.start()
        elif not recording and self._capturing:
            self._prof.stop()
            self._capturing = False
            self.written = True

    def _warn_unwritten(self) -> None:
        """Say on stderr that the block ended before any step was recorded."""
        what = "no steps captured" if self.nsys else f"no trace written to {self.path}"
        if self.nsys and self._step >= self._first_recorded:
            print(f"tuiperf.torch: {what}: Nsight Systems' capture range starts with "
                  "cudaProfilerStart, and torch sees no GPU", file=sys.stderr)  # fmt: skip
            return
        print(
            f"tuiperf.torch: {what}: the block ended after "
            f"{self._step} of its {self.wait} waiting, {self.timed} timed and {self.warmup} "
            "warm-up steps, "
            f"before any step was recorded (run {self.total_steps} steps, until `prof.done`, "
            "or pass smaller wait/warmup)",
            file=sys.stderr,
        )

    def _push(self) -> None:
        if self._nvtx:
            _torch().cuda.nvtx.range_push(f"step {self._step}")
            self._range_open = True

    def _pop(self) -> None:
        if self._range_open:
            _torch().cuda.nvtx.range_pop()
            self._range_open = False

    def _save(self, prof: Any) -> None:
        if self.written:
            return
        write_trace(prof, self.path)
        self.written = True


class _NsysRange:
    """Stands where the torch.profiler would: Nsight Systems records, between
    cudaProfilerStart and cudaProfilerStop (needs CUDA: without it nothing starts)."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch

    def step(self) -> None:
        pass

    def start(self) -> bool:
        if not self._torch.cuda.is_available():
            return False
        self._torch.cuda.synchronize()
        self._torch.cuda.profiler.start()
        return True

    def stop(self) -> None:
        self._torch.cuda.synchronize()
        self._torch.cuda.profiler.stop()


def write_trace(prof: Any, path: Path) -> None:
    """`prof.export_chrome_trace` to `path` (gzip for a `.gz` name) through a temporary
    file in the same folder, renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = ".json.gz" if path.name.endswith(".gz") else ".json"
    fd, tmp = tempfile.mkstemp(prefix=".tuiperf-", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it private
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def profile_steps(path: str | os.PathLike[str], steps: int = 5, *, wait: int = 1,
                  warmup: int = 1, timed: int = 3, nvtx: bool | None = None,
                  record_shapes: bool = True,
                  profile_memory: bool = False, with_stack: bool = True,
                  **profiler_args: Any) -> StepProfiler:  # fmt: skip
    """Profile `steps` training steps after `wait` skipped, `timed` timed with nothing
    recording (their mean goes into the trace, so tuiperf can say what the capture adds to
    a step) and `warmup` unrecorded ones.

    `nvtx` (default: when CUDA is available) pushes an NVTX range per step.
    `with_stack` and `record_shapes` (both on by default) record each operator's Python
    stack and input shapes. Other keyword arguments go to `torch.profiler.profile`.
    Under `tuiperf profile`, its variables override `steps` and `path` (module docstring).
    """
    mode = settings.profile_mode()
    env_steps, env_out = settings.profile_steps(), settings.profile_out()
    if env_steps is not None:
        steps = env_steps
    if mode == "torch" and env_out:
        path = env_out
    prof = StepProfiler(Path(path), steps, wait, warmup, nvtx, timed, record_shapes=record_shapes,
                        profile_memory=profile_memory, with_stack=with_stack,
                        **profiler_args)  # fmt: skip
    prof.nsys = mode == "nsys"
    return prof


# -- python -m tuiperf.torch: a whole program under torch.profiler ------------------


def _run_program(argv: list[str]) -> None:
    """Run `SCRIPT ARGS` or `-m MODULE ARGS` as `python` would, as __main__."""
    import runpy

    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
    runpy.run_path(argv[0], run_name="__main__")


def main(argv: list[str]) -> int:
    """Profile the whole program `argv` (stacks and shapes); write TUIPERF_PROFILE_OUT."""
    if not argv or (argv[0] == "-m" and len(argv) < 2):
        print("usage: python -m tuiperf.torch SCRIPT [ARGS...] | -m MODULE [ARGS...]",
              file=sys.stderr)  # fmt: skip
        return 2
    out = Path(settings.profile_out() or "tuiperf_trace.pt.trace.json.gz")
    try:
        torch = _torch()
    except ImportError:
        print(f"tuiperf.torch: {sys.executable} cannot import torch: run the program with "
              "a Python that has PyTorch, or install Nsight Systems", file=sys.stderr)  # fmt: skip
        return 2
    prof = torch.profiler.profile(activities=_activities(torch), record_shapes=True,
                                  with_stack=True)  # fmt: skip
    prof.__enter__()
    try:
        _run_program(argv)
    except KeyboardInterrupt:  # Ctrl-C: keep what ran, exit as an interrupted program does
        return 130
    finally:
        prof.__exit__(None, None, None)
        write_trace(prof, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
