"""torch.optim.Adam(foreach=False) on a timm ViT-S/16 (152 parameter tensors).

Library: timm (create_model('vit_small_patch16_224'), random weights) and torch.optim.Adam
with foreach=False, as code written for older PyTorch versions, or for debugging, or
copied from a per-parameter optimizer, has it: Adam then runs a Python loop over the
parameters and launches about a dozen small element-wise kernels for each of them.
bf16 autocast, batch 64 of synthetic images on the GPU, `loss.item()` every 10 steps.

Expected bottleneck: the CPU launching the optimizer: ~2000 tiny kernels a step from a
Python loop, each far shorter than its launch; the GPU idles through the optimizer phase.

--fix: torch.optim.Adam(fused=True): one fused multi-tensor kernel (a few launches)
for all the parameters.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: a tiny ViT on the CPU, foreach=True in place of fused
there (smoke test).
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
    p.add_argument("--fix", action="store_true", help="Adam(fused=True)")
    p.add_argument("--steps", type=int, default=10, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()

    if CUDA:
        size, batch, arch = 224, 64, "vit_small_patch16_224"
        model = timm.create_model(arch, num_classes=1000)
    else:
        size, batch, arch = 64, 4, "vit_tiny_patch16_224"
        model = timm.create_model(arch, num_classes=1000, img_size=size)
    model = model.to(DEV).train()
    if args.fix:
        opt = torch.optim.Adam(
            model.parameters(), lr=1e-4, **({"fused": True} if CUDA else {"foreach": True})
        )
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
    x = torch.randn(batch, 3, size, size, device=DEV)
    y = torch.randint(0, 1000, (batch,), device=DEV)

    total = args.warmup + args.steps
    t0 = 0.0
    for i in range(total):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with torch.autocast(DEV.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (i + 1) % 10 == 0:
            print(f"step {i} loss {loss.item():.4f}")
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    n = sum(1 for _ in model.parameters())
    kind = ("fused" if CUDA else "foreach") if args.fix else "foreach=False"
    print(f"{arch} batch {batch} params {n} Adam {kind}")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
