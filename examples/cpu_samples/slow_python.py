"""A GPU training loop held up by a slow pure-Python function inside every step (issue 34).

Each step builds its token batch with `make_tokens` (a pure-Python loop, tens of ms: the
line marked SLOW), copies it to the GPU, and trains a small transformer block on it
(bf16 autocast, AdamW). The GPU part takes a few ms, so the step is CPU-bound and nsys's
Python samples of the main thread inside the steps should be mostly `make_tokens`.

--fix: the same tokens from one vectorized torch expression on the GPU (no Python loop).
--copy-heavy: also copy a 256 MiB pageable tensor to the GPU each step (PCIe traffic for
the GPU-metrics lanes) — a different program, not a fix.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends) and STEPS. NVTX ranges `step N` mark the steps; torch.cuda.profiler.start()/stop()
bracket the steady steps (for `--capture-range=cudaProfilerApi`).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

VOCAB, BATCH, SEQ, WIDTH = 32000, 16, 256, 512
MOD = 1_000_003


def make_tokens(n: int, seed: int) -> list[int]:
    out = []
    s = seed
    for i in range(n):  # SLOW: one Python iteration per token, several times over
        s = (s * 31 + i) % MOD
        s = (s * 17 + 7) % MOD
        out.append(s % VOCAB)
    return out


def tokens_fast(n: int, seed: int, dev: torch.device) -> torch.Tensor:
    i = torch.arange(n, device=dev, dtype=torch.int64)
    return (i * 2654435761 + seed) % VOCAB


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, WIDTH)
        self.layer = torch.nn.TransformerEncoderLayer(WIDTH, 8, 4 * WIDTH, batch_first=True)
        self.head = torch.nn.Linear(WIDTH, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.layer(self.emb(ids)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true")
    p.add_argument("--copy-heavy", action="store_true")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=40, help="make_tokens calls per step")
    args = p.parse_args()
    dev = torch.device("cuda")
    net = Block().to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4, fused=True)
    host = torch.randn(64 << 20) if args.copy_heavy else None
    n = BATCH * SEQ
    total = args.warmup + args.steps
    t0 = 0.0
    for step in range(total):
        if step == args.warmup:
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            t0 = time.perf_counter()
        with torch.cuda.nvtx.range(f"step {step}"):
            if args.fix:
                ids = tokens_fast(n, step, dev).view(BATCH, SEQ)
            else:
                for r in range(args.reps):
                    toks = make_tokens(n, step * 97 + r)
                ids = torch.tensor(toks, dtype=torch.int64).view(BATCH, SEQ).to(dev)
            if host is not None:
                host.to(dev)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = net(ids)
                loss = F.cross_entropy(logits.view(-1, VOCAB).float(), ids.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    torch.cuda.profiler.stop()
    print(f"STEADY_STEP_MS {1000 * dt / args.steps:.3f}")
    print(f"STEPS {args.steps}")


if __name__ == "__main__":
    main()
