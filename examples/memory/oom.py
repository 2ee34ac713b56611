"""Out of memory, with the snapshot dumped at the OOM: the process may use a small share
of the GPU (torch.cuda.set_per_process_memory_fraction), and the batch doubles every
step until an allocation fails. The except block dumps the snapshot (its trace ends with
the `oom` entry: the request and what CUDA had free) and prints PyTorch's peaks.

    python oom.py OUT_DIR
"""

from __future__ import annotations

import torch
from common import finish, model, start_recording

FRACTION = 0.02  # of an H200's 141 GB: about 2.8 GB
WIDTH = 2048


def main() -> None:
    torch.cuda.set_per_process_memory_fraction(FRACTION)
    start_recording()
    net = model(WIDTH, depth=8)
    batch = 256
    step = 0
    try:
        while True:
            with torch.cuda.nvtx.range(f"step {step}"):
                x = torch.randn(batch, WIDTH, device="cuda")
                net(x).square().mean().backward()  # activations grow with the batch
            batch *= 2
            step += 1
    except torch.OutOfMemoryError as e:
        finish("oom", failed_batch=batch, steps=step, error=str(e).splitlines()[0])


if __name__ == "__main__":
    main()
