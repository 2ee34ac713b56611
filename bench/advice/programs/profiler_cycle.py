"""A timm ViT-S/16 training loop profiled with torch.profiler's schedule (Kineto trace).

Library: timm (create_model('vit_small_patch16_224'), create_optimizer_v2 AdamW) and
torch.profiler, as its tutorial does it: profile(activities=[CPU, CUDA],
schedule=schedule(skip_first=W, wait=1, warmup=1, active=3, repeat=1),
on_trace_ready=tensorboard_trace_handler(DIR, use_gzip=True)) with prof.step() at the end
of each iteration. The handler writes DIR/<worker>.<timestamp>.pt.trace.json.gz when the
active window closes. bf16 autocast, batch 128 of synthetic images already on the GPU,
`loss.item()` every step (a typical logging loop). No nsys needed.

Expected bottleneck: the GPU (a healthy compute-bound loop); the per-step `loss.item()`
adds a small gap per step. The profiler adds its own CPU overhead inside the active steps
and the trace export at the end of the last active step.

--active N: the number of recorded steps (default 3; capture.sh also runs --active 1).
--no-profiler: the same loop and steps without the profiler (the real step time).
--fix: nothing: no fix variant (the flag is accepted and ignored).

Prints STEADY_STEP_MS (wall time of the steps after skip_first, i.e. wait + warmup +
active (+ any extra --steps), synchronized at both ends) and STEPS. Without CUDA: a tiny
ViT on the CPU (smoke test; the trace then holds CPU events only).
"""

from __future__ import annotations

import argparse
import time

import timm
import torch
import torch.nn.functional as F
from timm.optim import create_optimizer_v2
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="no fix for this program (ignored)")
    p.add_argument("--active", type=int, default=3)
    p.add_argument(
        "--steps",
        type=int,
        default=None,
        help="steps after skip_first (default: wait + warmup + active)",
    )
    p.add_argument("--warmup", type=int, default=3, help="skip_first steps")
    p.add_argument("--trace-dir", default="./profiler_traces")
    p.add_argument("--no-profiler", action="store_true")
    args = p.parse_args()
    if args.fix:
        print("profiler_cycle has no fix variant: running it unchanged")
    steps = args.steps or (2 + args.active)

    if CUDA:
        size, batch, arch = 224, 128, "vit_small_patch16_224"
        model = timm.create_model(arch, num_classes=1000)
    else:
        size, batch, arch = 64, 4, "vit_tiny_patch16_224"
        model = timm.create_model(arch, num_classes=1000, img_size=size)
    model = model.to(DEV).train()
    opt = create_optimizer_v2(model, "adamw", lr=5e-4, weight_decay=0.05)
    x = torch.randn(batch, 3, size, size, device=DEV)
    y = torch.randint(0, 1000, (batch,), device=DEV)

    if args.no_profiler:
        prof = None
    else:
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if CUDA else [])
        prof = profile(
            activities=acts,
            schedule=schedule(
                skip_first=args.warmup, wait=1, warmup=1, active=args.active, repeat=1
            ),
            on_trace_ready=tensorboard_trace_handler(
                args.trace_dir, worker_name="profiler_cycle", use_gzip=True
            ),
        )
        prof.start()

    t0 = 0.0
    for i in range(args.warmup + steps):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with torch.autocast(DEV.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"step {i} loss {loss.item():.4f}")
        if prof is not None:
            prof.step()
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / steps
    if prof is not None:
        prof.stop()
    print(f"{arch} batch {batch} profiler {'off' if prof is None else f'active={args.active}'}")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
