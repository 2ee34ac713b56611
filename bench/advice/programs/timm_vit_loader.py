"""timm ViT-S/16 trained from a torchvision DataLoader with PIL augmentation, 2 workers.

Library: timm (create_model('vit_small_patch16_224'), timm.optim.create_optimizer_v2,
timm.loss.LabelSmoothingCrossEntropy) and torchvision (datasets.FakeData, transforms).
The input pipeline is the usual ImageNet one on PIL images: RandomResizedCrop(224),
RandomHorizontalFlip, ToTensor, Normalize, batch 128, DataLoader(num_workers=2,
pin_memory=False), `.cuda()` copies. bf16 autocast; the loss is read every 10 steps
(as timm's train.py logs at log_interval).

Expected bottleneck: the input pipeline. Two worker processes decode/augment ~128 PIL
images per step (FakeData makes each image from a random tensor, then the transforms),
far slower than the GPU's forward/backward: the training loop waits on the DataLoader.

--fix: DataLoader(num_workers=12, pin_memory=True, persistent_workers=True) and
`.cuda(non_blocking=True)`. Model, batch and transforms unchanged.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: small images, a tiny ViT, on the CPU (smoke test).
"""

from __future__ import annotations

import argparse
import time

import timm
import torch
from timm.loss import LabelSmoothingCrossEntropy
from timm.optim import create_optimizer_v2
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="12 workers, pinned, persistent")
    p.add_argument("--steps", type=int, default=15, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()

    if CUDA:
        size, batch, arch = 224, 128, "vit_small_patch16_224"
        model = timm.create_model(arch, num_classes=1000)
    else:
        size, batch, arch = 64, 4, "vit_tiny_patch16_224"
        model = timm.create_model(arch, num_classes=1000, img_size=size)
    total = args.warmup + args.steps
    tf = transforms.Compose(
        [
            transforms.RandomResizedCrop(size),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)),
        ]
    )
    ds = datasets.FakeData(
        size=total * batch, image_size=(3, size, size), num_classes=1000, transform=tf
    )
    if args.fix:
        loader = DataLoader(
            ds,
            batch_size=batch,
            shuffle=True,
            drop_last=True,
            num_workers=12 if CUDA else 2,
            pin_memory=CUDA,
            persistent_workers=True,
        )
    else:
        loader = DataLoader(
            ds, batch_size=batch, shuffle=True, drop_last=True, num_workers=2, pin_memory=False
        )

    model = model.to(DEV)
    opt = create_optimizer_v2(model, "adamw", lr=5e-4, weight_decay=0.05)
    crit = LabelSmoothingCrossEntropy(smoothing=0.1)
    model.train()
    t0 = 0.0
    for i, (x, y) in enumerate(loader):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        x = x.to(DEV, non_blocking=args.fix)
        y = y.to(DEV, non_blocking=args.fix)
        with torch.autocast(DEV.type, dtype=torch.bfloat16):
            out = model(x)
            loss = crit(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (i + 1) % 10 == 0:
            print(f"step {i + 1} loss {loss.item():.4f}")
        if i + 1 == total:
            break
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    print(f"{arch} batch {batch} workers {loader.num_workers} pin {loader.pin_memory}")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
