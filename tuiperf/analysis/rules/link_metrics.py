"""What nsys's GPU metrics (`--gpu-metrics-devices`) add to a copy finding: how full the
PCIe link was while the flagged copies ran (issue 34 item 2). A copy's duration alone
cannot tell a saturated link (only fewer bytes help) from a slow source (pageable memory,
staged by the CPU: pinning helps)."""

from __future__ import annotations

import numpy as np

from tuiperf.analysis.trace_ctx import TraceCtx
from tuiperf.model import arrays as A
from tuiperf.model.gpu_metrics import series

#: the PCIe RX share of peak (mean over the copies' samples) from which the link, not the
#: copy's source, is what limits host-to-device copies
SATURATED_PCT = 70.0
RX = ("PCIe RX Throughput", "%")


def pcie_rx_during(ctx: TraceCtx, rows: np.ndarray) -> tuple[int, float, float] | None:
    """(samples, mean, highest) of PCIe RX over the samples inside memcpy `rows` (on
    their own GPU); None without those metrics or without a sample inside."""
    if not ctx.trace.has("gpu_metrics") or len(rows) == 0:
        return None
    t = ctx.table("memcpy")
    start, end = A.ints(t, "start")[rows], A.ints(t, "end")[rows]
    dev = A.ints(t, "device", -1)[rows]
    got: list[np.ndarray] = []
    for s in series(ctx.trace):
        if (s.metric, s.unit) != RX:
            continue
        mine = dev == s.device
        if mine.any():
            got.append(s.inside(start[mine], end[mine]))
    v = np.concatenate(got) if got else np.zeros(0)
    return (len(v), float(v.mean()), float(v.max())) if len(v) else None


def pcie_text(got: tuple[int, float, float] | None) -> str:
    """The sentence a copy finding gains ("" without metrics)."""
    if got is None:
        return ""
    n, mean, top = got
    head = (f" GPU metrics: PCIe RX averaged {mean:.0f}% of the link's peak during these "
            f"copies (highest {top:.0f}%, {n:,} samples)")  # fmt: skip
    if mean >= SATURATED_PCT:
        return (
            head + ": the link is near full, so pinning alone will not make them much "
            "faster; copy fewer bytes (smaller dtypes, decode on the GPU)."
        )
    return head + ": the link is not the limit, the pageable staging through the CPU is."
