"""GPU metrics as timeline lanes (issue 34 item 2): one sparkline per metric of the chosen
groups, under its GPU. A column shows the mean of the samples whose time falls in it; a
column with none (zoomed in past the sampling period) holds the last sample before it,
so the line does not flicker between samples. Levels are eighths of the metric's scale:
100 for a share of peak ("%"), else the metric's highest sample.

A frame costs two `searchsorted` calls and one cumulative sum lookup, whatever the number
of samples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.model.gpu_metrics import Series, series
from tuiperf.model.trace import Trace

LEVELS = 8
#: metric groups drawn by default, each its metrics (name, unit) and their lane labels
GROUPS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "sm": (("SMs Active", "%", "SM active"), ("SM Issue", "%", "SM issue")),
    "tensor": (("Tensor Active", "%", "tensor active"),),
    "dram": (
        ("DRAM Read Bandwidth", "%", "DRAM read"),
        ("DRAM Write Bandwidth", "%", "DRAM write"),
    ),
    "pcie": (("PCIe RX Throughput", "%", "PCIe RX"), ("PCIe TX Throughput", "%", "PCIe TX")),
}
#: NVLink metrics (named per link by nsys, not seen here) are drawn when present
NVLINK_PREFIX = "NVLink"


@dataclass(frozen=True)
class MetricLine:
    """One metric of one GPU, ready to draw: samples in time order and a running sum."""

    s: Series
    label: str
    scale: float
    cum: np.ndarray  # cum[i] = sum of the first i values

    @classmethod
    def of(cls, s: Series, label: str) -> MetricLine:
        top = float(s.values.max()) if len(s.values) else 0.0
        scale = 100.0 if s.unit == "%" else top
        return cls(s, label, scale, np.r_[0.0, np.cumsum(s.values)])

    def column_values(self, edges: np.ndarray) -> np.ndarray:
        """Per column [edges[k], edges[k+1]): the mean of its samples, else the last
        sample before it (NaN before the first sample and after the last)."""
        t = self.s.times
        lo = np.searchsorted(t, edges[:-1], "left")
        hi = np.searchsorted(t, edges[1:], "left")
        n = hi - lo
        mean = (self.cum[hi] - self.cum[lo]) / np.maximum(n, 1)
        held = self.s.values[np.maximum(lo - 1, 0)] if len(t) else np.zeros(len(lo))
        out = np.where(n > 0, mean, held)
        outside = (lo == 0) & (n == 0) | (lo >= len(t))
        return np.where(outside, np.nan, out)

    def levels(self, edges: np.ndarray) -> np.ndarray:
        """Per column 0..LEVELS (-1: no sample there): its value in eighths of the scale,
        rounded up, so any activity shows."""
        v = self.column_values(edges)
        if self.scale <= 0:
            return np.where(np.isnan(v), -1, 0).astype(np.int64)
        lv = np.ceil(np.clip(np.nan_to_num(v), 0, self.scale) * LEVELS / self.scale)
        return np.where(np.isnan(v), -1, lv).astype(np.int64)

    def text(self, value: float | None) -> str:
        """A value in the metric's unit: `37%`, `1,980 MHz`, `n/a`."""
        if value is None:
            return "n/a"
        unit = self.s.unit
        num = f"{value:,.0f}" if abs(value) >= 10 or value == 0 else f"{value:.1f}"
        return f"{num}%" if unit == "%" else f"{num} {unit}".rstrip()


def metric_lines(
    trace: Trace, groups: tuple[str, ...] | None = None
) -> dict[int, list[MetricLine]]:
    """Per device, the lines of the metrics in `groups` (default: every group) it has, in
    the groups' order, NVLink ones last."""
    chosen = tuple(GROUPS) if groups is None else groups
    want = [m for g in chosen for m in GROUPS.get(g, ())]
    out: dict[int, list[MetricLine]] = {}
    found = series(trace)
    for name, unit, label in want:
        for s in found:
            if s.metric == name and s.unit == unit:
                out.setdefault(s.device, []).append(MetricLine.of(s, label))
    for s in found:
        if s.metric.startswith(NVLINK_PREFIX) and (groups is None or "nvlink" in groups):
            out.setdefault(s.device, []).append(MetricLine.of(s, s.metric))
    return out
