"""A data-parallel training loop for per-rank captures on ONE GPU (issue 23).

Each rank (torchrun sets RANK, LOCAL_RANK, WORLD_SIZE) trains an MLP on cuda:0 and all-reduces
its gradients every step with torch.distributed, backend gloo by default (gloo works with
several ranks on one GPU; NCCL needs a GPU per rank). Each step is an NVTX range `step N`;
the all-reduce is inside an NVTX range `allreduce`.

A straggler is planted: rank STRAGGLER (default 1) does EXTRA more forward/backward passes
per step (more GPU work before the collective), so the other ranks wait in the all-reduce.

usage:
    torchrun --nproc-per-node 2 train_ranks.py [--steps N] [--straggler R] [--extra K]
             [--kineto DIR]   (torch.profiler per rank into DIR/rank<R>.kineto.json)
    python train_ranks.py --backend nccl   (world size 1: real NCCL kernels on one GPU)
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def mlp(dim: int, depth: int) -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(dim, dim), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(dim, 10))


def step(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    passes: int,
    world: int,
) -> float:
    opt.zero_grad(set_to_none=True)
    for _ in range(passes):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
    torch.cuda.nvtx.range_push("allreduce")
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    off = 0
    for g in grads:
        n = g.numel()
        g.copy_(flat[off : off + n].view_as(g))
        off += n
    torch.cuda.nvtx.range_pop()
    opt.step()
    return float(loss.item())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--straggler", type=int, default=1)
    ap.add_argument("--extra", type=int, default=3)
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--kineto", default="")
    args = ap.parse_args()
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    torch.manual_seed(rank)
    model = mlp(1024, 6).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 1024, device=dev)
    y = torch.randint(0, 10, (512,), device=dev)
    passes = 1 + (args.extra if rank == args.straggler else 0)
    prof = None
    if args.kineto:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.start()
    t0 = time.perf_counter()
    for i in range(args.steps):
        torch.cuda.nvtx.range_push(f"step {i}")
        loss = step(model, opt, x, y, passes, world)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / args.steps
    if prof is not None:
        prof.stop()
        os.makedirs(args.kineto, exist_ok=True)
        prof.export_chrome_trace(os.path.join(args.kineto, f"rank{rank}.kineto.json"))
    print(
        f"rank {rank}/{world} backend {args.backend} passes {passes} "
        f"step {dt * 1e3:.2f} ms loss {loss:.4f}",
        flush=True,
    )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
