"""The summary reports' names and aliases (no pyarrow: `summary` resolves a name first)."""

from __future__ import annotations

#: the `nsys stats` reports tuiperf reproduces, then its own
REPORT_NAMES = (
    "cuda_gpu_kern_sum",
    "cuda_api_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "nvtx_sum",
    "osrt_sum",
    "cuda_gpu_trace",
    "op_sum",  # torch.profiler's CPU operator summary (TensorBoard's Operator view)
    "step_budget",  # where each training step's time goes
    "by_line",  # GPU time and syncs by source line (Python stacks)
    "cpu_samples",  # CPU samples by function: self and total, per thread
    "gpu_metrics",  # GPU metrics (nsys --gpu-metrics-devices): means per device and metric
)

#: the `nsys stats` reports of GPU work; nsys leaves whole CUDA graph executions
#: (CUPTI_ACTIVITY_KIND_GRAPH_TRACE) out of them, and so do these (with a note under the table)
GRAPHLESS_REPORTS = ("cuda_gpu_kern_sum", "cuda_gpu_trace")

#: what `--report` calls the range statistics (only over a time window: `summary --start`)
RANGE_NAMES = ("range", "range_stats", "window")

ALIASES = {
    "kern": "cuda_gpu_kern_sum",
    "kernels": "cuda_gpu_kern_sum",
    "api": "cuda_api_sum",
    "mem": "cuda_gpu_mem_time_sum",
    "memtime": "cuda_gpu_mem_time_sum",
    "memsize": "cuda_gpu_mem_size_sum",
    "nvtx": "nvtx_sum",
    "osrt": "osrt_sum",
    "trace": "cuda_gpu_trace",
    "gputrace": "cuda_gpu_trace",
    "ops": "op_sum",
    "budget": "step_budget",
    "lines": "by_line",
    "line": "by_line",
    "samples": "cpu_samples",
    "metrics": "gpu_metrics",
    # range statistics: only over a time window (`summary --start/--end`), not stored
    "range": "range_stats",
    "window": "range_stats",
}


def resolve(name: str) -> str | None:
    """The report a name or alias means (any case), or None."""
    key = name.strip().lower()
    return key if key in REPORT_NAMES else ALIASES.get(key)
