"""A healthy, GPU-bound loop: timm ViT-B/16, bf16 autocast, batch 256, fused AdamW.

Library: timm (create_model('vit_base_patch16_224'), random weights; its attention uses
F.scaled_dot_product_attention, i.e. flash attention). bf16 autocast, torch.optim.AdamW
(fused=True), synthetic images already on the GPU (no input pipeline), `loss.item()`
every 10 steps only.

Expected bottleneck: none worth fixing: the GPU is busy with bf16 tensor-core GEMMs and
flash attention nearly all the step; the CPU runs ahead. Advice should say so (or offer
only small wins: compile, a larger batch brings little).

--fix: nothing: no fix variant (the flag is accepted and ignored).

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: a tiny ViT on the CPU (smoke test).
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
    p.add_argument("--fix", action="store_true", help="no fix for this program (ignored)")
    p.add_argument("--steps", type=int, default=8, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()
    if args.fix:
        print("healthy has no fix variant: running it unchanged")

    if CUDA:
        size, batch, arch = 224, 256, "vit_base_patch16_224"
        model = timm.create_model(arch, num_classes=1000)
    else:
        size, batch, arch = 64, 4, "vit_tiny_patch16_224"
        model = timm.create_model(arch, num_classes=1000, img_size=size)
    model = model.to(DEV).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, fused=CUDA)
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
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (i + 1) % 10 == 0:
            print(f"step {i} loss {loss.item():.4f}")
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    print(f"{arch} batch {batch} bf16 fused AdamW")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
