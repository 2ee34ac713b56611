"""A long run of small kernels, for timing `nsys export` and tuiperf's first open of a
large `.nsys-rep` (issue 20).

Each step is an NVTX range `step N` holding a small MLP forward/backward/SGD plus a burst of
tiny in-place kernels, so that the report has about --kernels kernels in all.

usage: python many_kernels.py --kernels 1000000
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=1_000_000)
    ap.add_argument("--burst", type=int, default=400)
    args = ap.parse_args()
    dev = torch.device("cuda")
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    z = torch.zeros(1024, device=dev)
    per_step = args.burst + 20  # the MLP step is about 20 kernels
    steps = max(1, args.kernels // per_step)
    t0 = time.perf_counter()
    for i in range(steps):
        torch.cuda.nvtx.range_push(f"step {i}")
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
        for _ in range(args.burst):
            z.add_(1.0)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"{steps} steps in {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
