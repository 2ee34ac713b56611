"""Four kinds of kernel for Nsight Compute captures (issue 24: memory chart, roofline,
baselines, source hot spots).

One call of each, between torch.cuda.profiler.start() and stop(), after a warm-up, so that
`ncu --profile-from-start off` sees exactly these launches:

    gemm         a 4096x4096 matmul in the chosen dtype (fp32 with TF32 off, or bf16)
    elementwise  y = x * 2 + 1 over 64M elements (PyTorch's vectorized elementwise kernel)
    reduction    a row sum of a 16384x4096 matrix (PyTorch's reduce kernel)
    triton       a fused GELU*x+1 under torch.compile (an Inductor/Triton kernel, with line info)

usage: python kernels.py --dtype fp32|bf16
The pair (fp32, bf16) is the before/after for the baseline comparison.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F


def fused(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x) * x + 1.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    args = ap.parse_args()
    dt = torch.float32 if args.dtype == "fp32" else torch.bfloat16
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    a = torch.randn(4096, 4096, device=dev, dtype=dt)
    b = torch.randn(4096, 4096, device=dev, dtype=dt)
    x = torch.randn(64 * 1024 * 1024, device=dev, dtype=dt)
    m = torch.randn(16384, 4096, device=dev, dtype=dt)
    t = torch.randn(8192, 4096, device=dev, dtype=dt)
    compiled = torch.compile(fused)
    for _ in range(2):  # warm-up: cuBLAS heuristics, the compile and its autotuning
        a @ b
        x * 2 + 1
        m.sum(dim=1)
        compiled(t)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    a @ b
    x * 2 + 1
    m.sum(dim=1)
    compiled(t)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print("done", args.dtype)


if __name__ == "__main__":
    main()
