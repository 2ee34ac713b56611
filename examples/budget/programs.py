"""Small PyTorch training programs, each with ONE planted bottleneck.

They are the source of the reports in tests/data/budget (captured by capture.sh on
one H200). Every program runs a few warm-up steps and then a few steady steps; each
step is an NVTX range `step N` with `data` / `forward` / `backward` / `optimizer`
children (the same names inside torch.profiler, through record_function), except
`no_nvtx`, which marks nothing at all. Every loop reads `loss.item()` once at the
end of each step, as most real loops do to log the loss.

    cpu_bound      tiny transformer, batch 8, per-parameter (non-foreach) Adam:
                   hundreds of microsecond kernels per step, the GPU waits for launches
    cpu_bound_fixed  the same with batch 128 (x16) and fused Adam
    data_bound     slow Dataset (0.5 ms sleep + augmentation per sample), 1 worker
    data_bound_fixed the same with 8 workers and pinned memory
    sync_bound     8-block fp32 MLP whose loop reads a dozen scalars a step (.item() per
                   block, loss, accuracy, grad norm) and calls torch.cuda.synchronize()
    gpu_bound      four 8192x8192 bf16 linear layers on 8192 tokens
    copy_bound     256 MiB pageable host->device copy per step into a small conv model
    no_nvtx        cpu_bound with no NVTX and no profiler markers

usage: python programs.py NAME [--steps N] [--warmup N] [--kineto OUT.json]
With no CUDA device the programs run on the CPU with tiny sizes (a smoke test).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, TensorDataset

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")
SMALL = not CUDA  # CPU smoke test: shrink everything


class Marks:
    """NVTX ranges (for nsys) plus record_function (for torch.profiler)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    @contextlib.contextmanager
    def range(self, name: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        if CUDA:
            torch.cuda.nvtx.range_push(name)
        try:
            with torch.profiler.record_function(name):
                yield
        finally:
            if CUDA:
                torch.cuda.nvtx.range_pop()


@dataclass
class Program:
    model: nn.Module
    opt: torch.optim.Optimizer
    data: Callable[[], tuple[torch.Tensor, torch.Tensor]]
    loss: Callable[[nn.Module, torch.Tensor, torch.Tensor], torch.Tensor]
    after_backward: Callable[[], None] = lambda: None
    after_optimizer: Callable[[], None] = lambda: None
    metrics: dict[str, float] = field(default_factory=dict)


def looping(loader: DataLoader) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """Next batch from the loader (restarting it when it runs out), moved to the device."""
    state: dict[str, Iterator] = {"it": iter(loader)}
    pinned = loader.pin_memory

    def next_batch() -> tuple[torch.Tensor, torch.Tensor]:
        try:
            x, y = next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            x, y = next(state["it"])
        return x.to(DEV, non_blocking=pinned), y.to(DEV, non_blocking=pinned)

    return next_batch


def cross_entropy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x), y)


# --- cpu_bound: small transformer, tiny batch, per-parameter optimizer ---------------


class TinyLM(nn.Module):
    def __init__(self, vocab: int, dim: int, depth: int, classes: int):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 4, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.enc(self.emb(x)).mean(1)))


def cpu_bound(batch: int = 8, fused: bool = False) -> Program:
    vocab, seq, n = 1000, 32, 4096
    dim, depth = (256, 4) if not SMALL else (32, 1)
    tokens = torch.randint(0, vocab, (n, seq))
    labels = torch.randint(0, 10, (n,))
    loader = DataLoader(
        TensorDataset(tokens, labels), batch_size=batch, shuffle=True, drop_last=True
    )
    model = TinyLM(vocab, dim, depth, 10).to(DEV)
    if fused and CUDA:
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, fused=True)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
    return Program(model, opt, looping(loader), cross_entropy)


# --- data_bound: slow Dataset, one worker ---------------------------------------------


class SlowImages(Dataset):
    """Each sample costs a 0.5 ms wait (a decode from slow storage) plus real augmentation."""

    def __init__(self, n: int, size: int, classes: int, wait_s: float):
        self.n, self.size, self.classes, self.wait_s = n, size, classes, wait_s

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        time.sleep(self.wait_s)
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, self.size + 16, self.size + 16, generator=g)
        top, left = (int(v) for v in torch.randint(0, 16, (2,), generator=g))
        x = x[:, top : top + self.size, left : left + self.size]
        if i % 2:
            x = x.flip(2)
        return (x - 0.5) / 0.25, i % self.classes


def conv_block(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class SmallCNN(nn.Module):
    def __init__(self, classes: int, width: int = 64):
        super().__init__()
        w = width
        self.stem = nn.Sequential(
            nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU()
        )
        self.body = nn.Sequential(
            conv_block(w, w, 1),
            conv_block(w, 2 * w, 2),
            conv_block(2 * w, 4 * w, 2),
            conv_block(4 * w, 8 * w, 2),
        )
        self.head = nn.Linear(8 * w, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(self.stem(x)).mean((2, 3)))


def data_bound(workers: int = 1, pin: bool = False) -> Program:
    size, batch = (128, 32) if not SMALL else (32, 4)
    ds = SlowImages(4096, size, 100, 0.0005)
    loader = DataLoader(
        ds,
        batch_size=batch,
        shuffle=True,
        drop_last=True,
        num_workers=workers,
        pin_memory=pin and CUDA,
        persistent_workers=workers > 0,
    )
    model = SmallCNN(100, 64 if not SMALL else 8).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return Program(model, opt, looping(loader), cross_entropy)


# --- sync_bound: scalars read back to the host many times a step ----------------------


class MetricMLP(nn.Module):
    """An MLP that logs each block's mean activation as a Python float (a host sync each)."""

    def __init__(self, dim: int, depth: int, classes: int, metrics: dict[str, float]):
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)
        )
        self.head = nn.Linear(dim, classes)
        self.metrics = metrics

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            self.metrics[f"act{i}"] = x.detach().abs().mean().item()
        return self.head(x)


def sync_bound() -> Program:
    # each block's matrix product (~0.25 ms) outlasts the CPU's launches of the block, so
    # the GPU only idles after each .item() drains its queue
    dim, depth, batch = (2048, 8, 1024) if not SMALL else (64, 2, 8)
    metrics: dict[str, float] = {}
    model = MetricMLP(dim, depth, 100, metrics).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs = torch.randn(8, batch, dim, device=DEV)
    ys = torch.randint(0, 100, (8, batch), device=DEV)
    count = [0]

    def data() -> tuple[torch.Tensor, torch.Tensor]:
        count[0] += 1
        return xs[count[0] % 8], ys[count[0] % 8]

    def loss(m: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = m(x)
        out = F.cross_entropy(logits, y)
        metrics["loss"] = out.item()
        metrics["acc"] = (logits.argmax(1) == y).float().mean().item()
        return out

    def after_backward() -> None:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        metrics["grad_norm"] = norm.item()

    def after_optimizer() -> None:
        if CUDA:
            torch.cuda.synchronize()  # "so the step timer is right"
        if not all(math.isfinite(v) for v in metrics.values()):
            raise FloatingPointError(metrics)

    return Program(model, opt, data, loss, after_backward, after_optimizer, metrics)


# --- gpu_bound: large bf16 matrix products ------------------------------------------


def gpu_bound() -> Program:
    dim, depth, tokens = (8192, 4, 8192) if not SMALL else (64, 2, 32)
    dtype = torch.bfloat16 if CUDA else torch.float32
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(dim, dim, bias=False), nn.GELU()]
    model = nn.Sequential(*layers).to(DEV, dtype)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, foreach=True)

    def data() -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(tokens, dim, device=DEV, dtype=dtype)
        return x, x

    def loss(m: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (m(x).float() - y.float()).pow(2).mean()

    return Program(model, opt, data, loss)


# --- copy_bound: big pageable host->device copies --------------------------------------


class PoolNet(nn.Module):
    def __init__(self, cin: int, classes: int):
        super().__init__()
        self.pool = nn.AvgPool2d(8)
        self.conv = nn.Conv2d(cin, 32, 3, 1, 1)
        self.head = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(F.relu(self.conv(self.pool(x))).mean((2, 3)))


def copy_bound() -> Program:
    shape = (64, 4, 512, 512) if not SMALL else (2, 4, 32, 32)  # 256 MiB of float32 on the GPU run
    host = [torch.rand(shape) for _ in range(2)]  # pageable (not pinned) on purpose
    labels = torch.randint(0, 10, (shape[0],))
    model = PoolNet(shape[1], 10).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    count = [0]

    def data() -> tuple[torch.Tensor, torch.Tensor]:
        count[0] += 1
        return host[count[0] % 2].to(DEV), labels.to(DEV)

    return Program(model, opt, data, cross_entropy)


PROGRAMS: dict[str, Callable[[], Program]] = {
    "cpu_bound": cpu_bound,
    "cpu_bound_fixed": lambda: cpu_bound(batch=128, fused=True),
    "data_bound": data_bound,
    "data_bound_fixed": lambda: data_bound(workers=8, pin=True),
    "sync_bound": sync_bound,
    "gpu_bound": gpu_bound,
    "copy_bound": copy_bound,
    "no_nvtx": cpu_bound,
}


def one_step(p: Program, marks: Marks) -> float:
    with marks.range("data"):
        x, y = p.data()
    with marks.range("forward"):
        loss = p.loss(p.model, x, y)
    with marks.range("backward"):
        p.opt.zero_grad(set_to_none=True)
        loss.backward()
        p.after_backward()
    with marks.range("optimizer"):
        p.opt.step()
        p.after_optimizer()
    return loss.item()  # the one host sync every loop has (logging the loss)


def make_profiler(path: str, skip: int) -> torch.profiler.profile:
    acts = [torch.profiler.ProfilerActivity.CPU]
    if CUDA:
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return torch.profiler.profile(
        activities=acts,
        schedule=torch.profiler.schedule(skip_first=skip, wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=lambda prof: prof.export_chrome_trace(path),
    )


def train(name: str, steps: int, warmup: int, kineto: str | None) -> None:
    torch.manual_seed(0)
    p = PROGRAMS[name]()
    p.model.train()
    marks = Marks(enabled=name != "no_nvtx")
    prof = None
    # torch.profiler skips the warm-up steps, then waits 1, warms up 1, records 3;
    # so ProfilerStep#N is `step N`
    if kineto:
        prof = make_profiler(kineto, warmup)
        prof.start()
    t0 = time.perf_counter()
    for step in range(warmup + steps):
        if step == warmup:
            if CUDA:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with marks.range(f"step {step}"):
            lv = one_step(p, marks)
        if prof is not None:
            prof.step()
    if CUDA:
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    if prof is not None:
        prof.stop()
    per_step = 1e3 * dt / steps
    print(f"{name}: {steps} steady steps in {dt:.3f} s ({per_step:.2f} ms/step), loss {lv:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("name", choices=sorted(PROGRAMS))
    ap.add_argument("--steps", type=int, default=15 if CUDA else 5)
    ap.add_argument("--warmup", type=int, default=3 if CUDA else 1)
    ap.add_argument("--kineto", help="write a torch.profiler chrome trace of steady steps here")
    a = ap.parse_args()
    train(a.name, a.steps, a.warmup, a.kineto)


if __name__ == "__main__":
    main()
