"""torch.compile(model) of an HF GPT-2 (4 layers), plain training loop with NVTX step ranges.

Library: transformers (GPT2LMHeadModel from GPT2Config(n_layer=4), random weights) and
torch.compile (default mode, inductor). The loop is hand-written as in many users'
scripts: bf16 autocast, torch.optim.AdamW (default: foreach), grad clipping,
`loss.item()` every step for the log, and `torch.cuda.nvtx.range_push(f"step {i}")` /
`range_pop()` around each step so that nsys shows the steps. Batch 16 x 512 random tokens.

Expected bottleneck: in a whole-program capture, the first step: compilation (Dynamo +
inductor, seconds of CPU with the GPU idle; shorter when the inductor cache on disk is
warm). In the steady steps: the GPU, on compiled (Triton + cuBLAS) kernels; the per-step
`loss.item()` and clip_grad_norm_ leave small gaps. Nothing big to fix in steady state.

--fix: nothing: this program has no fix variant (the flag is accepted and ignored).

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. Without CUDA: a tiny GPT-2 on the CPU (smoke test).
"""

from __future__ import annotations

import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")


def nvtx_push(name: str) -> None:
    if CUDA:
        torch.cuda.nvtx.range_push(name)


def nvtx_pop() -> None:
    if CUDA:
        torch.cuda.nvtx.range_pop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="no fix for this program (ignored)")
    p.add_argument("--steps", type=int, default=10, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0, help="batch size on the GPU (0: 16)")
    p.add_argument(
        "--mode", default="default", help='torch.compile mode ("reduce-overhead": CUDA graphs)'
    )
    args = p.parse_args()
    if args.fix:
        print("compile_default has no fix variant: running it unchanged")

    if CUDA:
        cfg = GPT2Config(n_layer=4)
        batch, seq = (args.batch or 16), 512
    else:
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=2, n_positions=128, vocab_size=1024)
        batch, seq = 2, 32
    model = GPT2LMHeadModel(cfg).to(DEV)
    model.train()
    model = torch.compile(model, mode=None if args.mode == "default" else args.mode)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator(device=DEV).manual_seed(0)

    total = args.warmup + args.steps
    t0 = 0.0
    for i in range(total):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        nvtx_push(f"step {i}")
        if args.mode == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()
        x = torch.randint(0, cfg.vocab_size, (batch, seq), device=DEV, generator=g)
        with torch.autocast(DEV.type, dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {i} loss {loss.item():.4f}")
        nvtx_pop()
    if CUDA:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / args.steps
    print(f"gpt2 n_layer {cfg.n_layer} batch {batch}x{seq} compiled (mode {args.mode})")
    print(f"STEADY_STEP_MS {ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
