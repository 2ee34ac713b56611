"""ResNet-18 fed by DataLoader workers with big float batches copied from pageable memory.

Library: torch.utils.data.DataLoader (8 worker processes) and torchvision's resnet18
(weights=None). The Dataset holds uint8 images in memory and returns each as a
normalized float32 3x224x224 tensor; batch 64, so every batch the workers hand over is
38.5 MB of float32 in shared memory. The loop copies it with `x.to("cuda")` from that
pageable (not pinned) memory. bf16 autocast + channels_last on the GPU (a fast model),
SGD momentum, `loss.item()` every 10 steps.

Expected bottleneck: the hand-over. Each step the main process takes a 38.5 MB batch
from the workers' queue and makes a synchronous pageable host-to-device copy of it,
which blocks the CPU until the GPU has finished the work queued before it and the bytes
went through a staging buffer: the CPU cannot queue the next step ahead and the GPU idles
during every copy.

--fix: DataLoader(pin_memory=True) and `x.to("cuda", non_blocking=True)`: the pin-memory
thread stages batches into page-locked memory ahead of time and the copy is an
asynchronous DMA on the stream.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: 64x64 images, batch 4 (smoke test).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")


class ImagePool(Dataset):
    """n samples drawn from a pool of uint8 images, float32-normalized per sample."""

    def __init__(self, n: int, pool: int, size: int):
        g = torch.Generator().manual_seed(0)
        self.n = n
        self.pool = torch.randint(0, 256, (pool, 3, size, size), dtype=torch.uint8, generator=g)
        self.labels = torch.randint(0, 1000, (n,), generator=g)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        img = self.pool[i % len(self.pool)].float().div_(255).sub_(0.45).div_(0.225)
        return img, self.labels[i]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="pin_memory=True + non_blocking copies")
    p.add_argument("--steps", type=int, default=20, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0, help="batch size on the GPU (0: default)")
    args = p.parse_args()

    size, batch, workers = (224, 64, 8) if CUDA else (64, 4, 2)
    batch = args.batch if (args.batch and CUDA) else batch
    total = args.warmup + args.steps
    ds = ImagePool(total * batch, 256, size)
    loader = DataLoader(
        ds,
        batch_size=batch,
        shuffle=True,
        num_workers=workers,
        pin_memory=args.fix and CUDA,
        drop_last=True,
    )
    model = torchvision.models.resnet18(weights=None).to(DEV, memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    crit = nn.CrossEntropyLoss()

    t0 = 0.0
    for i, (x, y) in enumerate(loader):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        x = x.to(DEV, non_blocking=args.fix).contiguous(memory_format=torch.channels_last)
        y = y.to(DEV, non_blocking=args.fix)
        with torch.autocast(DEV.type, dtype=torch.bfloat16):
            loss = crit(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (i + 1) % 10 == 0:
            print(f"step {i} loss {loss.item():.4f}")
        if i + 1 == total:
            break
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    mb = batch * 3 * size * size * 4 / 1e6
    print(
        f"resnet18 batch {batch} ({mb:.1f} MB float32) workers {workers} "
        f"pin_memory {loader.pin_memory}"
    )
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
