"""How kineto_sgd_per_param.json.gz and kineto_sgd_foreach.json.gz were made.

Run on a machine with a CUDA GPU and PyTorch: `python make_optimizer_traces.py OUTDIR`.
One small training loop over 60 parameters of 64 floats (a batch of 32,768: each step's
activations, about 8 MB, get a block of their own from the caching allocator), profiled
for 4 steps after 2 of warm-up, two ways:

* `sgd_per_param`: SGD with momentum and `foreach=False` (one update per tensor: three
  tiny kernels per parameter in each optimizer step), and `torch.cuda.empty_cache()` at the
  end of every step (the caching allocator hands the activations' block back, so each
  step allocates it again with cudaMalloc and frees it with cudaFree).
* `sgd_foreach`: the same loop with `foreach=True` and no `empty_cache()`.

The tiny_optimizer_kernels and alloc_churn rules fire on the first and not on the second
(tests/unit/test_analysis_optimizer_alloc.py). Made with torch 2.11.0+cu130 on an H200.
"""

from __future__ import annotations

import gzip
import sys
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule

PARAMS = 60
WIDTH = 64
BATCH = 32768
WARMUP_STEPS = 2
ACTIVE_STEPS = 4


def trace(out: Path, *, foreach: bool, churn: bool) -> None:
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(WIDTH, device="cuda")) for _ in range(PARAMS)]
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9, foreach=foreach)
    x = torch.randn(WIDTH, BATCH, device="cuda")
    raw = Path(tempfile.mkdtemp()) / "trace.json"
    plan = schedule(wait=1, warmup=WARMUP_STEPS - 1, active=ACTIVE_STEPS, repeat=1)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=plan,
        on_trace_ready=lambda p: p.export_chrome_trace(str(raw)),
    ) as prof:
        for _ in range(WARMUP_STEPS + ACTIVE_STEPS):
            loss = (torch.stack(params) @ x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            loss.item()
            if churn:
                torch.cuda.empty_cache()
            prof.step()
    out.write_bytes(gzip.compress(raw.read_bytes(), 9, mtime=0))


def main() -> None:
    folder = Path(sys.argv[1])
    trace(folder / "kineto_sgd_per_param.json.gz", foreach=False, churn=True)
    trace(folder / "kineto_sgd_foreach.json.gz", foreach=True, churn=False)


if __name__ == "__main__":
    main()
