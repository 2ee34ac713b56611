"""A small CNN trained on synthetic images, to try tuiperf on real profiles.

Profile with torch.profiler through tuiperf's helper, then open the trace:

    python examples/train.py --profile train.pt.trace.json.gz
    tuiperf train.pt.trace.json.gz

The same script runs under Nsight Systems or Nsight Compute (each step and phase
is an NVTX range when CUDA is available):

    nsys profile -t cuda,nvtx,osrt -o train python examples/train.py --steps 10
    ncu --nvtx --profile-from-start off -o train python examples/train.py --steps 2 --cuda-range

It runs on the CPU too (no NVTX or CUDA activity then). Needs PyTorch
(`pip install 'tuiperf[torch]'`).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class NoiseImages(Dataset):
    """Deterministic random images with a little CPU work per sample, like augmentation."""

    def __init__(self, count: int, size: int, classes: int) -> None:
        self.count, self.size, self.classes = count, size, classes

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        g = torch.Generator().manual_seed(i)
        img = torch.rand((3, self.size, self.size), generator=g)
        return (img - 0.5) / 0.25, i % self.classes


def conv_block(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            conv_block(3, 32, 1), conv_block(32, 64, 2), conv_block(64, 128, 2)
        )
        self.head = nn.Linear(128, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean((2, 3)))


@contextlib.contextmanager
def phase(name: str, nvtx: bool) -> Iterator[None]:
    """One named phase: a torch.profiler range, and an NVTX range on CUDA."""
    if nvtx:
        torch.cuda.nvtx.range_push(name)
    try:
        with torch.profiler.record_function(name):
            yield
    finally:
        if nvtx:
            torch.cuda.nvtx.range_pop()


def batches(loader: DataLoader) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    while True:
        yield from loader


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--steps",
        type=int,
        default=5,
        help="training steps to run; with --profile, the steps recorded, after 1 waiting, "
        "3 timed (nothing recording) and 1 warm-up step (so STEPS + 5 run)",
    )
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    ap.add_argument("--pin-memory", action="store_true", help="page-locked host batches")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--profile", metavar="TRACE", help="write a torch.profiler trace here")
    ap.add_argument(
        "--cuda-range",
        action="store_true",
        help="cudaProfilerStart/Stop around the steps (nsys/ncu capture ranges)",
    )
    args = ap.parse_args()

    dev = torch.device(args.device)
    nvtx = dev.type == "cuda"
    data = NoiseImages(64 * args.batch_size, args.image_size, 10)
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True, drop_last=True,
                        num_workers=args.workers, pin_memory=args.pin_memory)  # fmt: skip
    model = SmallCNN().to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step(x: torch.Tensor, y: torch.Tensor) -> float:
        with phase("data", nvtx):
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        with phase("forward", nvtx):
            loss = loss_fn(model(x), y)
        with phase("backward", nvtx):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with phase("optimizer", nvtx):
            opt.step()
        return loss.item()

    if args.cuda_range and nvtx:
        torch.cuda.cudart().cudaProfilerStart()
    t0 = time.perf_counter()
    it = batches(loader)
    if args.profile:
        import tuiperf.torch

        with tuiperf.torch.profile_steps(args.profile, steps=args.steps) as prof:
            while not prof.done:
                loss = step(*next(it))
                prof.step()
        ran = prof.total_steps
        note = (
            f" ({prof.wait} waiting, {prof.timed} timed, {prof.warmup} warm-up, "
            f"{prof.steps} recorded)"
        )
        print(f"trace: {args.profile}  (open it with: tuiperf {args.profile})")
    else:
        ran, note = args.steps, ""
        for n in range(args.steps):
            with phase(f"step {n}", nvtx):
                loss = step(*next(it))
    if nvtx:
        torch.cuda.synchronize()
    if args.cuda_range and nvtx:
        torch.cuda.cudart().cudaProfilerStop()
    print(f"{ran} steps{note} on {dev} in {time.perf_counter() - t0:.2f} s, loss {loss:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
