"""Fragmentation: tensors of changing sizes, every other one freed, then a request that
fits in the total cached free memory but in none of its pieces; the allocator has to
cudaMalloc a new segment (reserved far above allocated). Run once as is and once with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to see the finding's fix work.

    python fragmentation.py OUT_DIR [NAME]
"""

from __future__ import annotations

import sys

import torch
from common import finish, start_recording

MB = 1 << 20
ROUNDS = 8


def main() -> None:
    name = sys.argv[2] if len(sys.argv) > 2 else "fragmentation"
    start_recording()
    for step in range(ROUNDS):
        with torch.cuda.nvtx.range(f"step {step}"):
            size = (24 + 6 * step) * MB  # grows each round: the old holes are too small
            keep = []
            for i in range(12):
                t = torch.empty(size // 4, dtype=torch.float32, device="cuda")
                if i % 2 == 0:
                    keep.append(t)
                del t
            big = torch.empty(3 * size // 4, dtype=torch.float32, device="cuda")
            big.fill_(1.0)
            del big
            if step % 2:
                keep.clear()
    finish(name, rounds=ROUNDS)


if __name__ == "__main__":
    main()
