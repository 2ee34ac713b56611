"""torchvision ResNet-50 trained the way torchvision's classification reference does it.

Library: torchvision (models.resnet50(weights=None)), with the loop of
references/classification/train.py at its defaults: cudnn.benchmark, batch 32,
SGD(lr 0.1, momentum 0.9, weight decay 1e-4), StepLR, CrossEntropyLoss,
DataLoader(num_workers=8, pin_memory=True),
`.to(device, non_blocking=True)`, no --amp, no channels_last, and per step the reference's
MetricLogger updates: loss.item(), then accuracy top-1/top-5 .item() (three host syncs a
step). Data: an in-memory synthetic uint8 image set (no download), converted to
normalized float per sample as ToTensor + Normalize would.

Expected bottleneck: GPU compute at fp32 (cuDNN convolutions in TF32, batch norm and
ReLU in fp32, NCHW layout), with the CPU close behind at batch 32 (three syncs a step
and ~500 eager kernel launches).

--fix: the reference's own switches, --amp (here bf16 autocast, no GradScaler needed)
and --channels-last: tensor-core convolutions in bf16 on NHWC, half the activation bytes.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: 64x64 images, batch 4 (smoke test).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset, RandomSampler

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


class SyntheticImages(Dataset):
    """uint8 images held in memory; float + normalize per sample (ToTensor, Normalize)."""

    def __init__(self, n: int, size: int, classes: int):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randint(0, 256, (n, 3, size, size), dtype=torch.uint8, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        return (self.x[i].float().div_(255) - MEAN) / STD, self.y[i]


def accuracy(output: torch.Tensor, target: torch.Tensor, topk=(1,)):
    """references/classification/utils.py's accuracy."""
    with torch.inference_mode():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target[None])
        return [correct[:k].flatten().sum(dtype=torch.float32) * (100.0 / batch_size) for k in topk]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="--amp (bf16) and --channels-last")
    p.add_argument("--steps", type=int, default=15, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0, help="batch size on the GPU (0: default)")
    args = p.parse_args()

    size, batch, workers = (224, 32, 8) if CUDA else (64, 4, 2)
    batch = args.batch if (args.batch and CUDA) else batch
    total = args.warmup + args.steps
    ds = SyntheticImages(total * batch, size, 1000)
    loader = DataLoader(
        ds,
        batch_size=batch,
        sampler=RandomSampler(ds),
        num_workers=workers,
        pin_memory=CUDA,
        drop_last=True,
    )
    # the reference's default (no --use-deterministic-algorithms)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50(weights=None).to(DEV)
    if args.fix:
        model = model.to(memory_format=torch.channels_last)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    meters = {"loss": 0.0, "acc1": 0.0, "acc5": 0.0}

    model.train()
    t0 = 0.0
    for i, (image, target) in enumerate(loader):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        image, target = image.to(DEV, non_blocking=True), target.to(DEV, non_blocking=True)
        if args.fix:
            image = image.contiguous(memory_format=torch.channels_last)
        with torch.autocast(DEV.type, dtype=torch.bfloat16, enabled=args.fix):
            output = model(image)
            loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        meters["loss"] += loss.item()
        meters["acc1"] += acc1.item()
        meters["acc5"] += acc5.item()
        if (i + 1) % 10 == 0:
            print(
                f"step {i + 1} loss {meters['loss'] / (i + 1):.4f} "
                f"lr {optimizer.param_groups[0]['lr']}"
            )
        if i + 1 == total:
            break
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    lr_scheduler.step()
    print(f"resnet50 batch {batch} amp_bf16 {args.fix} channels_last {args.fix}")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
