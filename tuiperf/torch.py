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
`nsys profile` shows its steps. The trace is written once the active steps are
recorded (or when the block ends early, with the steps recorded so far), through a
temporary file renamed into place; a `.gz` name writes gzip. A block that ends
during the waiting or warm-up steps has recorded nothing: no trace is written, and
a warning on stderr says so. Needs the `torch` extra: `pip install tuiperf[torch]`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any


def _torch() -> Any:
    try:
        import torch
        import torch.profiler
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("tuiperf.torch needs PyTorch: pip install 'tuiperf[torch]'") from e
    return torch


class StepProfiler:
    """What `profile_steps` returns; call `step()` once at the end of every step."""

    def __init__(self, path: Path, steps: int, wait: int, warmup: int, nvtx: bool | None,
                 **profiler_args: Any) -> None:  # fmt: skip
        if steps < 1 or wait < 0 or warmup < 0:
            raise ValueError("steps must be >= 1, wait and warmup >= 0")
        self.path = Path(path)
        self.steps, self.wait, self.warmup = steps, wait, warmup
        self._args = profiler_args
        self._nvtx = nvtx
        self._prof: Any = None
        self._step = 0
        self._range_open = False
        self.written = False

    @property
    def total_steps(self) -> int:
        """Steps the loop should run: waiting, warm-up and recorded ones."""
        return self.wait + self.warmup + self.steps

    @property
    def done(self) -> bool:
        return self._step >= self.total_steps

    def __enter__(self) -> StepProfiler:
        torch = _torch()
        cuda = torch.cuda.is_available()
        acts = [torch.profiler.ProfilerActivity.CPU]
        if cuda:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        self._nvtx = cuda if self._nvtx is None else (self._nvtx and cuda)
        sched = torch.profiler.schedule(wait=self.wait, warmup=self.warmup, active=self.steps,
                                        repeat=1)  # fmt: skip
        self._prof = torch.profiler.profile(activities=acts, schedule=sched,
                                            on_trace_ready=self._save, **self._args)  # fmt: skip
        self._prof.__enter__()
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
        self._prof.step()
        if not self.done:
            self._push()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self._pop()
        prof, self._prof = self._prof, None
        if prof is not None:
            prof.__exit__(kind, exc, tb)
            if not self.written:
                self._warn_unwritten()

    def _warn_unwritten(self) -> None:
        """Say on stderr that the block ended before any step was recorded."""
        print(
            f"tuiperf.torch: no trace written to {self.path}: the block ended after "
            f"{self._step} of its {self.wait} waiting and {self.warmup} warm-up steps, "
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        suffix = ".json.gz" if self.path.name.endswith(".gz") else ".json"
        fd, tmp = tempfile.mkstemp(prefix=".tuiperf-", suffix=suffix, dir=self.path.parent)
        os.close(fd)
        try:
            prof.export_chrome_trace(tmp)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it private
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self.written = True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def profile_steps(path: str | os.PathLike[str], steps: int = 5, *, wait: int = 1,
                  warmup: int = 1, nvtx: bool | None = None, record_shapes: bool = True,
                  profile_memory: bool = False, with_stack: bool = False,
                  **profiler_args: Any) -> StepProfiler:  # fmt: skip
    """Profile `steps` training steps after `wait` skipped and `warmup` unrecorded ones.

    `nvtx` (default: when CUDA is available) pushes an NVTX range per step.
    Other keyword arguments go to `torch.profiler.profile`.
    """
    return StepProfiler(Path(path), steps, wait, warmup, nvtx, record_shapes=record_shapes,
                        profile_memory=profile_memory, with_stack=with_stack,
                        **profiler_args)  # fmt: skip
