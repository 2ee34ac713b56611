"""What the run already does, read from its kernel names: precision, compilation, CUDA
graphs, the optimizer's implementation, training or inference.

Advice must not name a change the run has made already (autocast in a bf16 run,
`fused=True` for a fused optimizer, torch.compile for a compiled model), and must speak of
inference levers when there is no backward pass. Pure data: no printing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.budget.steps import BACKWARD_KERNEL, OPTIMIZER_KERNEL
from tuiperf.model import arrays as A

#: matrix-multiply and convolution kernels (cuBLAS, CUTLASS, cuDNN, Hopper's nvjet)
GEMM = re.compile(r"gemm|conv|fprop|dgrad|wgrad|nvjet|cutlass|xmma|matmul|Kernel2", re.I)
#: GEMMs on tensor cores in a low precision (bf16/fp16/fp8/int8) or TF32
LOW_PRECISION = re.compile(
    r"tf32|bf16|f16|fp16|half|hmma|gmma|s1688|s16816|i8|int8|e4m3|e5m2", re.IGNORECASE
)
#: Hopper's cuBLAS JIT GEMMs name their half-precision types by one letter (`_h_`, `_v_`)
NVJET_LOW = re.compile(r"nvjet_.*_[hv]_", re.IGNORECASE)
#: fp32 GEMMs on the CUDA cores (FFMA, SIMT)
FP32_SIMT = re.compile(r"sgemm|ffma|f32f32_f32f32_f32|scudnn", re.IGNORECASE)
#: a fused optimizer (one kernel set for all parameters: torch's fused=True, apex)
FUSED_OPTIMIZER = re.compile(r"fused_?adam|FusedAdam|fused_?sgd|FusedSgd|fused_?lamb", re.I)
#: torch.compile's generated kernels
TRITON = re.compile(r"^triton_|\btriton_", re.I)
#: convolution kernels (cuDNN's implicit GEMMs and their backward passes)
CONV = re.compile(r"conv|fprop|dgrad|wgrad", re.IGNORECASE)
#: cuDNN's NCHW<->NHWC conversions around convolutions on NCHW tensors
LAYOUT_CONVERSION = re.compile(r"nchwToNhwc|nhwcToNchw|nchw2nhwc|nhwc2nchw", re.IGNORECASE)
#: a GEMM on TF32 tensor cores: the run allows TF32 (a global switch cuBLAS/cuDNN obey)
TF32 = re.compile(r"tf32", re.IGNORECASE)
#: layout conversions under this share of kernel time: none worth a change (the
#: layout_conversion rule's own bar, MIN_KERNEL_SHARE)
LAYOUT_NEGLIGIBLE = 0.01
#: at least this share of GEMM time in low precision: the run already uses it
ALREADY_SHARE = 0.8


@dataclass(frozen=True)
class RunFacts:
    gemm_ns: int  # GEMM/conv kernel time
    low_precision_ns: int  # of it, on tensor cores in bf16/fp16/TF32/fp8
    fp32_simt_ns: int  # of it, fp32 on the CUDA cores
    compiled: bool  # torch.compile's Triton kernels ran
    graph_ns: int  # CUDA graph executions traced whole (kernels inside not traced)
    graph_kernels: int  # kernels traced inside graphs (--cuda-graph-trace=node)
    fused_optimizer: bool
    backward: bool  # backward-pass kernels ran
    optimizer: bool  # optimizer kernels ran
    conv: bool = False  # convolution kernels ran
    layout_share: float = 0.0  # NCHW<->NHWC conversion kernels' share of kernel time
    tf32: bool = False  # some GEMM ran on TF32 tensor cores: TF32 is allowed

    @property
    def low_precision(self) -> bool:
        """The GEMMs already run in a low precision (or TF32) on tensor cores."""
        return self.gemm_ns > 0 and self.low_precision_ns >= ALREADY_SHARE * self.gemm_ns

    @property
    def channels_last(self) -> bool:
        """Convolutions with no layout conversions around them: the tensors are already
        in the layout cuDNN's kernels want (channels_last, or NCHW kernels that need none)."""
        return self.conv and self.layout_share < LAYOUT_NEGLIGIBLE

    @property
    def already(self) -> frozenset[str]:
        """The switches the run has on: low_precision, tf32, channels_last, compiled,
        graphs, fused_optimizer."""
        have = {
            "low_precision": self.low_precision,
            "tf32": self.tf32,
            "channels_last": self.channels_last,
            "compiled": self.compiled,
            "graphs": self.graphs,
            "fused_optimizer": self.fused_optimizer,
        }
        return frozenset(k for k, on in have.items() if on)

    @property
    def graphs(self) -> bool:
        return self.graph_ns > 0 or self.graph_kernels > 0

    @property
    def inference(self) -> bool:
        """No backward pass and no optimizer: the run does not train. Not said when CUDA
        graphs were traced whole: the kernels inside them (a captured backward pass and
        optimizer step among them) are not in the report."""
        hidden = self.graph_ns > 0 and self.graph_kernels == 0
        return not (self.backward or self.optimizer or hidden)


def run_facts(ctx: Ctx) -> RunFacts:
    cache = ctx.__dict__.setdefault("_run_facts", [])
    if not cache:
        cache.append(_read(ctx))
    return cache[0]


def _read(ctx: Ctx) -> RunFacts:
    k = ctx.table("kernels")
    dur = A.ints(k, "duration") if k.num_rows else np.zeros(0, np.int64)
    gemm = A.name_mask(k, "name", GEMM) if k.num_rows else np.zeros(0, bool)
    low = (
        gemm & (A.name_mask(k, "name", LOW_PRECISION) | A.name_mask(k, "name", NVJET_LOW))
        if k.num_rows
        else gemm
    )
    simt = gemm & ~low & A.name_mask(k, "name", FP32_SIMT) if k.num_rows else gemm
    g = ctx.table("graphs")
    layout = A.name_mask(k, "name", LAYOUT_CONVERSION) if k.num_rows else gemm
    total = int(dur.sum())
    node = A.ints(k, "graph_node_id", -1) if "graph_node_id" in k.schema.names else dur * 0 - 1
    return RunFacts(
        gemm_ns=int(dur[gemm].sum()),
        low_precision_ns=int(dur[low].sum()),
        fp32_simt_ns=int(dur[simt].sum()),
        compiled=bool(k.num_rows and A.name_mask(k, "short_name", TRITON).any()),
        graph_ns=int(A.ints(g, "duration").sum()) if g.num_rows else 0,
        graph_kernels=int((node >= 0).sum()),
        fused_optimizer=bool(k.num_rows and A.name_mask(k, "name", FUSED_OPTIMIZER).any()),
        backward=bool(k.num_rows and A.name_mask(k, "name", BACKWARD_KERNEL).any()),
        optimizer=bool(k.num_rows and A.name_mask(k, "name", OPTIMIZER_KERNEL).any()),
        conv=bool(k.num_rows and A.name_mask(k, "name", CONV).any()),
        layout_share=float(dur[layout].sum()) / total if total else 0.0,
        tf32=bool((gemm & A.name_mask(k, "name", TF32)).any()) if k.num_rows else False,
    )
