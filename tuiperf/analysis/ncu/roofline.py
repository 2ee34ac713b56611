"""Roofline numbers of Nsight Compute kernels, from the metrics of ncu's roofline sections
(GPU Speed Of Light Roofline Chart and its hierarchical variants), computed as those
sections define them:

* achieved FLOP/s per precision: (2 x FMA + ADD + MUL thread instructions per elapsed SMSP
  cycle; half precision counts 2 x 2 for its packed FMA) x the SMSP clock; tensor cores:
  `sm__ops_path_tensor_src_*.sum.per_second`;
* compute ceilings: the SM's peak thread instructions per cycle (x 2 for FMA, x 4 for the
  packed half FMA; dense tensor operations `..._sparsity_off`) x the SM clock of the kernel;
* memory ceilings: peak bytes per cycle x the unit's clock (DRAM, L2 -> SM crossbar,
  L1/TEX writeback); achieved bytes/s of the same counters;
* arithmetic intensity: FLOP/s over bytes/s of a level (DRAM unless said otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tuiperf.model.ncu.metrics import KernelMetrics

_SMSP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
_X = "derived__smsp__sass_thread_inst_executed_op_{}"
SMSP_CLOCK = "smsp__cycles_elapsed.avg.per_second"
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"

#: precision -> per-cycle achieved terms (metric, factor: already scaled by ncu when 1)
ACHIEVED: dict[str, tuple[tuple[str, ...], ...]] = {
    "FP32": ((_X.format("ffma_pred_on_x2"),), (_SMSP.format("fadd"), _SMSP.format("fmul"))),
    "FP64": ((_X.format("dfma_pred_on_x2"),), (_SMSP.format("dadd"), _SMSP.format("dmul"))),
    "FP16": ((_X.format("hfma_pred_on_x4"), _X.format("hadd_pred_on_x2"),
              _X.format("hmul_pred_on_x2")), ()),
}  # fmt: skip
#: tensor-core operations per second, by source type (summed into one point)
TENSOR_ACHIEVED = (
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum.per_second",
    "sm__ops_path_tensor_src_fp16.sum.per_second",
)
#: compute ceilings: (name, peak per cycle metrics tried in order)
COMPUTE_PEAKS = (
    ("FP16/BF16 tensor", (
        "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    )),
    ("FP16", ("derived__sm__sass_thread_inst_executed_op_hfma_pred_on_x4",)),
    ("FP32", ("derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",)),
    ("FP64", ("derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2",)),
)  # fmt: skip
#: memory levels: (name, achieved bytes/s, peak bytes per cycle, that unit's clock)
MEMORY = (
    ("L1", "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",
     "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained",
     "l1tex__cycles_elapsed.avg.per_second"),
    ("L2", "derived__lts__lts2xbar_bytes.sum.per_second",
     "derived__lts__lts2xbar_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"),
    ("DRAM", "dram__bytes.sum.per_second", "dram__bytes.sum.peak_sustained",
     "dram__cycles_elapsed.avg.per_second"),
)  # fmt: skip


@dataclass(frozen=True)
class Ceiling:
    name: str
    value: float  # FLOP/s for compute, byte/s for memory
    kind: str  # "compute" or "memory"


@dataclass
class KernelRoofline:
    kernel_id: int
    flops: dict[str, float] = field(default_factory=dict)  # precision -> achieved FLOP/s
    bandwidth: dict[str, float] = field(default_factory=dict)  # level -> achieved byte/s
    ceilings: list[Ceiling] = field(default_factory=list)

    @property
    def precision(self) -> str | None:
        """The precision with the most FLOP/s (the kernel's point on the chart)."""
        done = {p: v for p, v in self.flops.items() if v > 0}
        return max(done, key=lambda p: done[p]) if done else None

    @property
    def achieved(self) -> float:
        p = self.precision
        return 0.0 if p is None else self.flops[p]

    def intensity(self, level: str = "DRAM") -> float | None:
        """FLOP per byte moved at `level`; None without traffic or FLOPs there."""
        b = self.bandwidth.get(level)
        return None if not b or not self.achieved else self.achieved / b

    def ceiling(self, name: str) -> Ceiling | None:
        return next((c for c in self.ceilings if c.name == name), None)

    def bound(self, level: str = "DRAM") -> float | None:
        """The roof at the kernel's intensity: min(its compute peak, bandwidth x AI)."""
        ai, p = self.intensity(level), self.precision
        mem = self.ceiling(level)
        comp = self.ceiling("FP16/BF16 tensor" if p == "Tensor" else p or "")
        if ai is None or mem is None or comp is None:
            return None
        return min(comp.value, mem.value * ai)


def _v(km: KernelMetrics, kid: int, name: str) -> float | None:
    return km.value(kid, name)


def kernel_roofline(km: KernelMetrics, kid: int) -> KernelRoofline:
    """The kernel's achieved FLOP/s and bytes/s, and its device's ceilings; precisions or
    levels whose metrics the report lacks are left out."""
    out = KernelRoofline(kid)
    clock = _v(km, kid, SMSP_CLOCK)
    for prec, (scaled, plain) in ACHIEVED.items():
        terms = [_v(km, kid, n) for n in (*scaled, *plain)]
        if clock and any(t is not None for t in terms):
            out.flops[prec] = sum(t or 0.0 for t in terms) * clock
    tensor = [_v(km, kid, n) for n in TENSOR_ACHIEVED]
    if any(t is not None for t in tensor):
        out.flops["Tensor"] = sum(t or 0.0 for t in tensor)
    sm_clock = _v(km, kid, SM_CLOCK)
    for name, candidates in COMPUTE_PEAKS:
        peak = next((v for n in candidates if (v := _v(km, kid, n))), None)
        if peak and sm_clock:
            out.ceilings.append(Ceiling(name, peak * sm_clock, "compute"))
    for level, achieved, peak_name, clock_name in MEMORY:
        got, peak, hz = (_v(km, kid, n) for n in (achieved, peak_name, clock_name))
        if got is not None:
            out.bandwidth[level] = got
        if peak and hz:
            out.ceilings.append(Ceiling(level, peak * hz, "memory"))
    return out


def rooflines(km: KernelMetrics, kids: list[int]) -> list[KernelRoofline]:
    return [kernel_roofline(km, k) for k in kids]
