"""DistributedDataParallel over the gloo backend, world size 1, on the one GPU.

Library: torch.distributed + torch.nn.parallel.DistributedDataParallel with
torchvision's resnet50 (weights=None), the way a script written for CPU clusters (or
copied from a gloo example) runs on a GPU box: init_process_group("gloo",
init_method="file://...", rank=0, world_size=1), DDP(model, device_ids=[0]). bf16
autocast, channels_last, SGD momentum, batch 64 of synthetic 224x224 images kept on the
GPU, `loss.item()` every 10 steps.

Expected bottleneck: gradient all-reduce through gloo. Gloo all-reduces CUDA tensors by
staging each 25 MB gradient bucket through host memory (device-to-host copy, host
all-reduce, host-to-device copy) with the CPU waiting on those copies; ~100 MB of fp32
gradients a step, serialized after the backward, even though world size is 1.

--fix: init_process_group("nccl"): NCCL all-reduces the buckets on the GPU (an NCCL
kernel per bucket, overlapped with the backward). Everything else unchanged.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: gloo on the CPU, 64x64 images (smoke test; --fix stays
on gloo there).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda:0" if CUDA else "cpu")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="backend nccl instead of gloo")
    p.add_argument("--steps", type=int, default=10, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0, help="batch size on the GPU (0: default)")
    args = p.parse_args()

    backend = "nccl" if (args.fix and CUDA) else "gloo"
    init_file = os.path.join(tempfile.mkdtemp(prefix="ddp_"), "init")
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=0, world_size=1)
    if CUDA:
        torch.cuda.set_device(0)

    size, batch = (224, 64) if CUDA else (64, 4)
    batch = args.batch if (args.batch and CUDA) else batch
    model = torchvision.models.resnet50(weights=None).to(DEV, memory_format=torch.channels_last)
    ddp = DDP(model, device_ids=[0] if CUDA else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    crit = nn.CrossEntropyLoss()
    x = torch.randn(batch, 3, size, size, device=DEV).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device=DEV)

    total = args.warmup + args.steps
    t0 = 0.0
    for i in range(total):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with torch.autocast(DEV.type, dtype=torch.bfloat16):
            loss = crit(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (i + 1) % 10 == 0:
            print(f"step {i} loss {loss.item():.4f}")
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    dist.destroy_process_group()
    print(f"resnet50 DDP backend {backend} world_size 1 batch {batch}")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
