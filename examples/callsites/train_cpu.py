"""A small training loop profiled by torch.profiler with Python stacks, on the CPU.

`python examples/callsites/train_cpu.py OUT.json.gz` writes the trace kept as
tests/data/kineto/kineto_callsites_cpu.json.gz: 3 profiled steps (after 1 of warm-up) of a
two-layer MLP with SGD, recorded with `with_stack=True, record_shapes=True`. Each step reads
the loss with `.item()` on the line marked `# SYNC_LINE` (the tests find it by that mark).
Kineto records each Python function at its first line (its `def`), not at the line that
made the call: the `.item()` shows as `read_loss`, the function holding that line.
"""

from __future__ import annotations

import gzip
import sys
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule

WARMUP_STEPS = 1
ACTIVE_STEPS = 3


def model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))


def compute_loss(net: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(net(x), y)


def read_loss(loss: torch.Tensor) -> float:
    return loss.item()  # SYNC_LINE


def step(
    net: torch.nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor
) -> float:
    loss = compute_loss(net, x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return read_loss(loss)


def train(out: Path) -> None:
    torch.manual_seed(0)
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
    raw = Path(tempfile.mkdtemp()) / "trace.json"
    plan = schedule(wait=0, warmup=WARMUP_STEPS, active=ACTIVE_STEPS, repeat=1)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=plan,
        with_stack=True,
        record_shapes=True,
        on_trace_ready=lambda p: p.export_chrome_trace(str(raw)),
    ) as prof:
        for _ in range(WARMUP_STEPS + ACTIVE_STEPS):
            step(net, opt, x, y)
            prof.step()
    out.write_bytes(gzip.compress(raw.read_bytes(), 9, mtime=0))


if __name__ == "__main__":
    train(Path(sys.argv[1]))
