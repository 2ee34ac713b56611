"""Lightning ResNet-18 on CIFAR-sized images, precision="32-true".

Library: lightning (lightning.pytorch: LightningModule, Trainer, Callback) with
torchvision's resnet18 adapted to 32x32 inputs as Lightning's CIFAR-10 tutorial does
(3x3 stem, no max-pool), SGD + OneCycleLR, `self.log("train_loss", ...)` every step,
Trainer(max_steps=..., precision="32-true", logger=False, enable_checkpointing=False,
enable_progress_bar=False). Data: an in-memory random TensorDataset of 3x32x32 images
(no download), batch 256, DataLoader(num_workers=4).

Expected bottleneck: GPU time in fp32: at 32x32 resolution with no down-sampling stem
the activations are large (batch 256 x 64 channels x 32 x 32), so batch norm, ReLU and
the residual adds move fp32 bytes (memory-bound), and the convolutions run in TF32.

--fix: Trainer(precision="bf16-mixed"): autocast to bf16, half the activation traffic and
bf16 tensor-core convolutions.

Prints STEADY_STEP_MS (wall time of the steady steps / their count, synchronized at both
ends, from a Callback) and STEPS. Without CUDA: batch 8, on the CPU (smoke test).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning.pytorch as pl
except ImportError:  # the older package name
    import pytorch_lightning as pl

CUDA = torch.cuda.is_available()


def create_model() -> nn.Module:
    model = torchvision.models.resnet18(weights=None, num_classes=10)
    model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    model.maxpool = nn.Identity()
    return model


class LitResnet(pl.LightningModule):
    def __init__(self, lr: float, total_steps: int):
        super().__init__()
        self.save_hyperparameters()
        self.model = create_model()

    def forward(self, x):
        return F.log_softmax(self.model(x), dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.nll_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(
            self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=5e-4
        )
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, 0.1, total_steps=self.hparams.total_steps
        )
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": "step"},
        }


class SteadyTimer(pl.Callback):
    def __init__(self, warmup: int, steps: int):
        self.warmup, self.steps, self.t0, self.ms = warmup, steps, 0.0, float("nan")

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if trainer.global_step == self.warmup:
            if CUDA:
                torch.cuda.synchronize()
            self.t0 = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step == self.warmup + self.steps:
            if CUDA:
                torch.cuda.synchronize()
            self.ms = (time.perf_counter() - self.t0) * 1e3 / self.steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", action="store_true", help='precision="bf16-mixed"')
    p.add_argument("--steps", type=int, default=12, help="steady steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0, help="batch size on the GPU (0: default)")
    args = p.parse_args()

    batch, workers = (256, 4) if CUDA else (8, 2)
    batch = args.batch if (args.batch and CUDA) else batch
    total = args.warmup + args.steps
    g = torch.Generator().manual_seed(0)
    x = torch.randn(total * batch, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (total * batch,), generator=g)
    loader = DataLoader(
        TensorDataset(x, y), batch_size=batch, shuffle=True, num_workers=workers, drop_last=True
    )
    model = LitResnet(lr=0.05, total_steps=total + 1)
    timer = SteadyTimer(args.warmup, args.steps)
    precision = "bf16-mixed" if args.fix else "32-true"
    trainer = pl.Trainer(
        max_steps=total,
        accelerator="gpu" if CUDA else "cpu",
        devices=1,
        precision=precision,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[timer],
    )
    trainer.fit(model, loader)
    print(f"resnet18-cifar batch {batch} precision {precision}")
    print(f"STEADY_STEP_MS {timer.ms:.3f}")
    print(f"STEPS {args.steps}")
    print(f"BATCH {batch}")


if __name__ == "__main__":
    main()
