"""HF transformers.Trainer pre-training GPT-2 small (124M) from its config, bf16.

Library: transformers (Trainer, GPT2LMHeadModel, GPT2Config), as its examples do it:
Trainer + TrainingArguments(bf16=True, max_steps, logging_steps=10), a small dataset of
random token ids (seq 512, batch 16), default optimizer (AdamW from TrainingArguments),
no NVTX or timers of our own in the loop (a TrainerCallback only reads the clock).

Expected bottleneck: the GPU (compute). GPT-2's vocabulary, 50257, is odd: the LM head's
GEMMs (8192 x 768 x 50257, forward and both backward products) have a leading dimension
that is not a multiple of 8, so cuBLAS falls back to slow unaligned (`align1`/`align2`)
kernels, and the fp32 logits + cross-entropy over 50257 columns are large too.

--fix: pad the vocabulary to a multiple of 64, GPT2Config(vocab_size=50304) (what nanoGPT
does): aligned tensor-core GEMMs for the LM head. Nothing else changes.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, with
torch.cuda.synchronize() at both ends of the window) and STEPS. Without CUDA it runs a
tiny config on the CPU (a smoke test).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

CUDA = torch.cuda.is_available()


class RandomTokens(Dataset):
    def __init__(self, n: int, seq: int, vocab: int):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class SteadyTimer(TrainerCallback):
    """Clock the steps warmup..warmup+steps-1 (sync at both ends of the window)."""

    def __init__(self, warmup: int, steps: int):
        self.warmup, self.steps, self.t0, self.ms = warmup, steps, 0.0, float("nan")

    def on_step_begin(self, args, state, control, **kw):
        if state.global_step == self.warmup:
            if CUDA:
                torch.cuda.synchronize()
            self.t0 = time.perf_counter()

    def on_step_end(self, args, state, control, **kw):
        if state.global_step == self.warmup + self.steps:
            if CUDA:
                torch.cuda.synchronize()
            self.ms = (time.perf_counter() - self.t0) * 1e3 / self.steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help="vocab_size=50304 (multiple of 64)")
    p.add_argument("--steps", type=int, default=15, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0, help="batch size on the GPU (0: default)")
    args = p.parse_args()

    vocab = 50304 if args.fix else 50257
    if CUDA:
        cfg = GPT2Config(vocab_size=vocab)
        seq, batch = 512, (args.batch or 16)
    else:
        cfg = GPT2Config(vocab_size=vocab, n_layer=2, n_embd=64, n_head=2, n_positions=128)
        seq, batch = 32, 2
    total = args.warmup + args.steps
    model = GPT2LMHeadModel(cfg)
    data = RandomTokens(total * batch, seq, 50257)
    timer = SteadyTimer(args.warmup, args.steps)
    targs = TrainingArguments(
        output_dir=tempfile.mkdtemp(prefix="gpt2_trainer_"),
        per_device_train_batch_size=batch,
        max_steps=total,
        learning_rate=6e-4,
        warmup_steps=2,
        weight_decay=0.1,
        bf16=CUDA,
        use_cpu=not CUDA,
        logging_steps=10,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=targs, train_dataset=data, callbacks=[timer])
    trainer.train()
    print(f"vocab_size {vocab} batch {batch}x{seq} bf16 {CUDA}")
    print(f"STEADY_STEP_MS {timer.ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
