"""A training loop with a planted leak: every step keeps its output *with its autograd
graph* in a list (the saved activations of that forward pass stay alive), the mistake of
`history.append(out)` instead of `out.detach()`. `tuiperf memory leak.pickle` should name
the line marked LEAK as the memory creep, and its peaks equal the printed ones.

    python leak.py OUT_DIR        (NVTX `step N` ranges for nsys; see capture.sh)
    python leak.py OUT_DIR kineto (the same loop under torch.profiler, profile_memory=True:
                                  leak_kineto.json.gz and expect_leak_kineto.json)
"""

from __future__ import annotations

import contextlib
import gzip
import sys
from pathlib import Path

import torch
from common import OUT, finish, model, start_recording
from torch.profiler import ProfilerActivity, profile

STEPS = 12
BATCH, WIDTH = 64, 1024


def main() -> None:
    kineto = len(sys.argv) > 2 and sys.argv[2] == "kineto"
    prof = (
        profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            profile_memory=True,
            record_shapes=True,
            with_stack=True,
        )
        if kineto
        else contextlib.nullcontext()
    )
    with prof:
        alive = train()  # the model, optimizer and leaked outputs stay alive at the dump
    name = "leak_kineto" if kineto else "leak"
    if kineto:
        raw = OUT / "leak_kineto.json"
        prof.export_chrome_trace(str(raw))
        (OUT / "leak_kineto.json.gz").write_bytes(gzip.compress(raw.read_bytes(), 9, mtime=0))
        raw.unlink()
    finish(name, steps=STEPS, leak_file=__file__, leak_line=line_of("# LEAK:"))
    del alive


def train() -> tuple[object, ...]:
    start_recording()
    net = model(WIDTH)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    history = []
    for step in range(STEPS):
        with torch.cuda.nvtx.range(f"step {step}"):
            x = torch.randn(BATCH, WIDTH, device="cuda")
            out = net(x)
            loss = out.square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            history.append(net(x[:8]))  # LEAK: kept with its graph, never freed
    torch.cuda.synchronize()
    return net, opt, history


def line_of(marker: str) -> int:
    """The line of this file that holds `marker` (the planted leak)."""
    lines = Path(__file__).read_text().splitlines()
    return next(
        i
        for i, text in enumerate(lines, 1)
        if marker in text and "def " not in text and "line_of(" not in text
    )


if __name__ == "__main__":
    main()
