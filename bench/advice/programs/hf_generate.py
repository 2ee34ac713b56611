"""HF GPT-2 inference with model.generate(), one prompt per call (batch 1).

Library: transformers (GPT2LMHeadModel from distilgpt2's shape, GPT2Config(n_layer=6),
random weights; model.generate with greedy decoding and the default dynamic KV cache),
in eval mode under torch.no_grad(), fp32 as loaded. Each call decodes 32 new tokens for
one 32-token prompt; one warm-up call, then --steps timed calls (default 2) (a "step" is one
generate() call). No training.

Expected bottleneck: the CPU. Each new token is one forward of a 6-layer model on a
single position: ~150 small kernels whose GPU time is a few microseconds each, behind
Python and generate()'s per-token bookkeeping (logits processors, stopping criteria, a
host sync per token to check for end of sequence). The GPU idles most of the time.

--fix: batch 16 prompts per generate() call: the per-token CPU cost is the same, the GPU
does 16 rows per kernel, so tokens/s rises ~16x for about the same call time
(TOKENS_PER_S is printed).

Prints STEADY_STEP_MS (wall time of the timed calls / their count, synchronized at both
ends), STEPS (calls), BATCH, TOKENS_PER_S. Without CUDA: a tiny config (smoke test).
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
    p.add_argument("--fix", action="store_true", help="16 prompts per generate() call")
    p.add_argument("--steps", type=int, default=2, help="timed generate() calls")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--new-tokens", type=int, default=32)
    args = p.parse_args()

    if CUDA:
        cfg = GPT2Config(n_layer=6)
    else:
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=2)
    batch, prompt_len = (16 if args.fix else 1), 32
    model = GPT2LMHeadModel(cfg).to(DEV).eval()
    g = torch.Generator().manual_seed(0)
    prompts = torch.randint(0, 50000, (batch, prompt_len), generator=g).to(DEV)
    mask = torch.ones_like(prompts)

    def generate() -> torch.Tensor:
        with torch.no_grad():
            return model.generate(
                input_ids=prompts,
                attention_mask=mask,
                max_new_tokens=args.new_tokens,
                min_new_tokens=args.new_tokens,
                do_sample=False,
                pad_token_id=cfg.eos_token_id,
            )

    for _ in range(args.warmup):
        out = generate()
    if CUDA:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        out = generate()
    if CUDA:
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    new = out.shape[1] - prompt_len
    print(f"gpt2 n_layer {cfg.n_layer} batch {batch} new tokens {new} per call")
    print(f"STEADY_STEP_MS {dt * 1e3 / args.steps:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")
    print(f"TOKENS_PER_S {batch * new * args.steps / dt:.0f}")


if __name__ == "__main__":
    main()
