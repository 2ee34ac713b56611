"""torch.compile(mode="reduce-overhead") (CUDA graphs) on a small HF GPT-2, batch 8 x 128.

Library: transformers (GPT2LMHeadModel from a small GPT2Config: 2 layers, width 256,
vocab 8192, random weights) and torch.compile(model, mode="reduce-overhead"): inductor
kernels replayed through CUDA graphs (cudagraph trees), as the PyTorch docs suggest for
small, launch-bound models. Eager torch.optim.AdamW (foreach) after the graphed
forward/backward; `torch.compiler.cudagraph_mark_step_begin()` at the top of each step;
`loss.item()` every step for the log; NVTX `step N` ranges.

Expected bottleneck: the CPU. The graphs already cut the launches, but the model is so
small (batch 8 x 128 tokens) that a replay's GPU work is far below the per-step CPU
time (Python, cudagraph-tree bookkeeping, the eager optimizer's launches, the sync):
the GPU idles most of each step.

--fix: give the GPU work: batch 64 x 128 (8x the tokens per step, re-captured graphs).
Step time should grow far less than 8x, so tokens/s rises (TOKENS_PER_S is printed).

Capture it with nsys's default (whole graphs, no kernels inside) and with
`--cuda-graph-trace=node` (each kernel of the graph).

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends), STEPS, BATCH, TOKENS_PER_S. Without CUDA: plain inductor on the CPU (no CUDA
graphs there; smoke test).
"""

from __future__ import annotations

import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="batch 64 instead of 8")
    p.add_argument("--steps", type=int, default=20, help="steady steps")
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()

    cfg = GPT2Config(n_layer=2, n_embd=256, n_head=4, n_positions=256, vocab_size=8192)
    batch, seq = (64 if args.fix else 8), 128
    if not CUDA:
        cfg = GPT2Config(n_layer=1, n_embd=64, n_head=2, n_positions=64, vocab_size=512)
        batch, seq = (4 if args.fix else 2), 16
    model = GPT2LMHeadModel(cfg).to(DEV)
    model.train()
    mode = "reduce-overhead" if CUDA else "default"
    model = torch.compile(model, mode=mode)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    g = torch.Generator(device=DEV).manual_seed(0)

    total = args.warmup + args.steps
    t0 = 0.0
    for i in range(total):
        if i == args.warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        if CUDA:
            torch.cuda.nvtx.range_push(f"step {i}")
        torch.compiler.cudagraph_mark_step_begin()
        x = torch.randint(0, cfg.vocab_size, (batch, seq), device=DEV, generator=g)
        loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        lv = loss.item()
        if (i + 1) % 10 == 0:
            print(f"step {i} loss {lv:.4f}")
        if CUDA:
            torch.cuda.nvtx.range_pop()
    if CUDA:
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"gpt2-small-2L batch {batch}x{seq} mode {mode}")
    print(f"STEADY_STEP_MS {dt * 1e3 / args.steps:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")
    print(f"TOKENS_PER_S {batch * seq * args.steps / dt:.0f}")


if __name__ == "__main__":
    main()
