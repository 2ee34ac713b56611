"""A small GPU training loop with two planted host-side costs, for call-site captures.

Each step copies a new batch from pageable host memory with `.to(device)` (the line marked
`# COPY_LINE`) and reads the loss with `.item()` (the line marked `# SYNC_LINE`), inside
NVTX ranges `step N`.

    python train_gpu.py --kineto OUT.json   torch.profiler, with_stack + record_shapes
    python train_gpu.py                     plain (run it under nsys --python-backtrace=cuda)
"""

from __future__ import annotations

import argparse

import torch
from torch.profiler import ProfilerActivity, profile, schedule

DEV = torch.device("cuda")


def batch(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(n, 1024)  # pageable host memory
    y = torch.randint(0, 10, (n,))
    return x.to(DEV), y.to(DEV)  # COPY_LINE


def read_loss(loss: torch.Tensor) -> float:
    return loss.item()  # SYNC_LINE


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--kineto", default="")
    args = ap.parse_args()
    net = torch.nn.Sequential(
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)
    ).to(DEV)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    prof = None
    if args.kineto:
        prof = profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=0, warmup=1, active=args.steps - 1),
            with_stack=True,
            record_shapes=True,
            # the cycle ends at the last prof.step(): write it then (a later export would
            # see the next, empty cycle)
            on_trace_ready=lambda p: p.export_chrome_trace(args.kineto),
        )
        prof.start()
    for i in range(args.steps):
        torch.cuda.nvtx.range_push(f"step {i}")
        x, y = batch(4096)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        read_loss(loss)
        torch.cuda.nvtx.range_pop()
        if prof is not None:
            prof.step()
    if prof is not None:
        prof.stop()
    print("done", flush=True)


if __name__ == "__main__":
    main()
