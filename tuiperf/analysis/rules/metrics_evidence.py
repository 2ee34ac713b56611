"""What nsys's GPU metrics (`--gpu-metrics-devices`) add to the kernel-time findings: how
much of the steady steps the tensor cores worked, against how busy the GPU was (issue 34
item 2). Kernel names say which GEMMs run on the CUDA cores and kernel times how long they
run; only the metrics say whether the tensor cores did anything while the GPU was busy.

The means are those of the `gpu_metrics` summary's "Steady Mean" column: the plain mean of
the samples inside the step budget's steady steps, all GPUs' samples pooled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.metrics_report import steady_windows
from tuiperf.model.gpu_metrics import series

#: (metric, unit) as the gpu_metrics table names them, by the key the finding's metrics use
METRICS = {
    "tensor_active_pct": ("Tensor Active", "%"),
    "gr_active_pct": ("GR Active", "%"),
    "sm_active_pct": ("SMs Active", "%"),
    "sm_issue_pct": ("SM Issue", "%"),
    "dram_read_pct": ("DRAM Read Bandwidth", "%"),
}
#: the tensor cores are "idle while the GPU is busy" when Tensor Active is under this share
#: of GR Active (steady-step means). Measured on the H200 (tests/data/gpu_metrics): BERT in
#: FP32, its GEMMs on the CUDA cores, 1.3% / 80.7% = 1.6%; the same with bf16 autocast +
#: TF32, 10.3% / 41.5% = 25%; a bf16 ViT, 33.7% / 99.8% = 34%. 5% sits 3x above the first
#: and 5x below the others.
IDLE_TENSOR_SHARE = 0.05


@dataclass(frozen=True)
class StepMetrics:
    """Steady-step means of the metrics above (% of peak), and how many samples each had."""

    samples: int
    means: dict[str, float]

    @property
    def tensor(self) -> float:
        return self.means["tensor_active_pct"]

    @property
    def busy(self) -> float:
        return self.means["gr_active_pct"]

    @property
    def tensor_of_busy(self) -> float:
        """Tensor Active as a share of GR Active (0 when the GPU is idle)."""
        return self.tensor / self.busy if self.busy > 0 else 0.0

    @property
    def idle_tensor(self) -> bool:
        """Tensor cores all but idle while the GPU works (never said of an idle GPU: 0 is
        not under 5% of 0)."""
        return self.tensor < IDLE_TENSOR_SHARE * self.busy


def steady_metrics(ctx: Ctx) -> StepMetrics | None:
    """The steady steps' means; None without GPU metrics, steps, or a sample inside them
    for each of the metrics."""
    if not ctx.trace.has("gpu_metrics"):
        return None
    windows = steady_windows(ctx.budget)
    got: dict[str, list[np.ndarray]] = {k: [] for k in METRICS}
    keys = {v: k for k, v in METRICS.items()}
    for s in series(ctx.trace):
        key = keys.get((s.metric, s.unit))
        if key is not None and s.device in windows:
            got[key].append(s.inside(*windows[s.device]))
    values = {k: np.concatenate(v) if v else np.zeros(0) for k, v in got.items()}
    if any(len(v) == 0 for v in values.values()):
        return None
    n = len(values["tensor_active_pct"])
    return StepMetrics(n, {k: float(v.mean()) for k, v in values.items()})


def tensor_text(m: StepMetrics | None, idle: str, working: str) -> str:
    """The sentence a finding gains ("" without metrics): the means, then `idle` or
    `working` (the rule's reading of them), either may be ""."""
    if m is None:
        return ""
    d = m.means
    text = (
        f" GPU metrics over the steady steps ({m.samples:,} samples): tensor cores active "
        f"{m.tensor:.1f}% of the time while the GPU is busy {m.busy:.1f}% (SMs active "
        f"{d['sm_active_pct']:.1f}%, SM issue {d['sm_issue_pct']:.1f}%, DRAM read "
        f"{d['dram_read_pct']:.1f}%)"
    )
    tail = idle if m.idle_tensor else working
    return text + (f": {tail}" if tail else ".")


def tensor_metrics(m: StepMetrics | None) -> dict[str, object]:
    """The finding's metrics entries (none without metrics)."""
    if m is None:
        return {}
    out: dict[str, object] = {k: round(v, 3) for k, v in m.means.items()}
    out["metric_samples"] = m.samples
    out["tensor_idle"] = m.idle_tensor
    return out
