"""HF transformers.Trainer fine-tuning BERT-base for sequence classification, plain fp32.

Library: transformers (Trainer, BertForSequenceClassification, BertConfig). The model is
built from BertConfig() (bert-base-uncased's shape, random weights: no network), trained
on random token ids (seq 128, batch 32, 2 labels) with TrainingArguments left at their
defaults for precision: no bf16, no fp16, no tf32. PyTorch's default keeps
torch.backends.cuda.matmul in full fp32, so every Linear runs as an FP32 GEMM on the CUDA
cores (SIMT `sgemm`/`ffma` kernels), not on the tensor cores.

Expected bottleneck: GPU compute in FP32 GEMMs (CUDA cores).

--fix: TrainingArguments(tf32=True): the same fp32 model and master weights, GEMMs on the
tensor cores in TF32. (bf16=True would go further; tf32 is the smallest change.)

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends of the window) and STEPS. Without CUDA: a tiny config on the CPU (smoke test).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from torch.utils.data import Dataset
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

CUDA = torch.cuda.is_available()


class RandomSentences(Dataset):
    def __init__(self, n: int, seq: int, vocab: int):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(1000, vocab, (n, seq), generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {
            "input_ids": self.ids[i],
            "attention_mask": torch.ones_like(self.ids[i]),
            "labels": self.labels[i],
        }


class SteadyTimer(TrainerCallback):
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
    p.add_argument("--fix", action="store_true", help="TrainingArguments(tf32=True)")
    p.add_argument("--steps", type=int, default=15, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()

    if CUDA:
        cfg = BertConfig(num_labels=2)
        seq, batch = 128, 32
    else:
        cfg = BertConfig(
            num_labels=2,
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=128,
        )
        seq, batch = 32, 4
    total = args.warmup + args.steps
    model = BertForSequenceClassification(cfg)
    data = RandomSentences(total * batch, seq, cfg.vocab_size)
    timer = SteadyTimer(args.warmup, args.steps)
    targs = TrainingArguments(
        output_dir=tempfile.mkdtemp(prefix="bert_fp32_"),
        per_device_train_batch_size=batch,
        max_steps=total,
        learning_rate=2e-5,
        tf32=True if (args.fix and CUDA) else None,
        use_cpu=not CUDA,
        logging_steps=10,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=targs, train_dataset=data, callbacks=[timer])
    trainer.train()
    if CUDA:  # torch 2.11 refuses the legacy getter once the new TF32 API was used
        try:
            print("matmul fp32_precision:", torch.backends.cuda.matmul.fp32_precision)
        except (AttributeError, RuntimeError) as e:
            print("matmul fp32_precision: unknown", e)
    print(f"batch {batch}x{seq} TrainingArguments.tf32 {targs.tf32}")
    print(f"STEADY_STEP_MS {timer.ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
