"""A timm ResNet-50 loop that reads several metrics with .item() every step.

Library: timm (create_model('resnet50'), random weights). bf16 autocast, channels_last,
SGD momentum, batch 64 of synthetic images on the GPU. After each step the loop logs, as
many hand-written loops do: `torch.isfinite(loss).item()` (a NaN guard before backward),
the loss, top-1 accuracy and max softmax probability via `.item()`, and the gradient
norm returned by clip_grad_norm_ via `.item()`: five host syncs a step, spread through
the step.

Expected bottleneck: host synchronisation. Each `.item()` waits for the GPU to drain,
so the CPU never queues work ahead: the CPU's launch time and the GPU's run time add up
instead of overlapping, and the GPU idles after each sync until the next launch.

--fix: keep the metrics as GPU tensors (accumulated on the device), no NaN guard per
step, and read them with one `.item()`-style transfer every 10 steps (the log interval).

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: 64x64 images, batch 4 (smoke test).
"""

from __future__ import annotations

import argparse
import time

import timm
import torch
import torch.nn.functional as F

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="metrics on the GPU, read every 10 steps")
    p.add_argument("--steps", type=int, default=15, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0, help="batch size on the GPU (0: default)")
    args = p.parse_args()

    size, batch = (224, 64) if CUDA else (64, 4)
    batch = args.batch if (args.batch and CUDA) else batch
    model = timm.create_model("resnet50", num_classes=1000)
    model = model.to(DEV, memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x = torch.randn(batch, 3, size, size, device=DEV).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device=DEV)

    total = args.warmup + args.steps
    hist: dict[str, list[float]] = {"loss": [], "acc": [], "pmax": [], "gnorm": []}
    acc_dev = torch.zeros(4, device=DEV)
    t0 = 0.0
    for i in range(total):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with torch.autocast(DEV.type, dtype=torch.bfloat16):
            out = model(x)
            loss = F.cross_entropy(out, y)
        if not args.fix and not torch.isfinite(loss).item():
            raise FloatingPointError(f"non-finite loss at step {i}")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        with torch.no_grad():
            acc = (out.argmax(1) == y).float().mean()
            pmax = out.float().softmax(1).amax(1).mean()
        if args.fix:
            acc_dev += torch.stack([loss.detach().float(), acc, pmax, gnorm.float()])
            if (i + 1) % 10 == 0:
                vals = (acc_dev / 10).tolist()
                acc_dev.zero_()
                print(
                    f"step {i} loss {vals[0]:.4f} acc {vals[1]:.3f} "
                    f"pmax {vals[2]:.4f} gnorm {vals[3]:.3f}"
                )
        else:
            hist["loss"].append(loss.item())
            hist["acc"].append(acc.item())
            hist["pmax"].append(pmax.item())
            hist["gnorm"].append(gnorm.item())
            if (i + 1) % 10 == 0:
                print(
                    f"step {i} " + " ".join(f"{k} {sum(v[-10:]) / 10:.4f}" for k, v in hist.items())
                )
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    print(f"timm resnet50 batch {batch} syncs/step {'0.1' if args.fix else '5'}")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
