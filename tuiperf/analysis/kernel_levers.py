"""What a PyTorch user can change about one kernel, by what kind of code it is and which
metric is off.

Most kernels of a training step are library code (cuDNN, cuBLAS, PyTorch's own elementwise
kernels, Triton kernels that torch.compile generated): nobody edits them. What acts on
their metrics is what the program asks of them: the memory format, the dtype, the shapes,
the batch, fusion. So a fix is chosen by (kind of kernel, kind of problem), and says
plainly when the kernel is a library's.
"""

from __future__ import annotations

import re

from tuiperf.analysis.findings import Fix

#: kind of kernel -> patterns of its (demangled) name, first match wins
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nccl", re.compile(r"nccl|allreduce|all_reduce|reducescatter|allgather", re.I)),
    ("triton", re.compile(r"^triton_|\btriton_", re.I)),
    (
        "conv",
        re.compile(
            r"cudnn|implicit_convolve|conv2d|convolve|fprop|dgrad|wgrad|bn_fw|bn_bw|"
            r"batch_norm|nchwToNhwc|nhwcToNchw|winograd",
            re.I,
        ),
    ),
    ("gemm", re.compile(r"gemm|cublas|cutlass|nvjet|xmma|Kernel2|matmul|sm\d+_", re.I)),
    (
        "elementwise",
        re.compile(
            r"elementwise|reduce_kernel|at::native|index_|scatter|gather|softmax|"
            r"layer_norm|dropout|cat_|copy_kernel|fill",
            re.I,
        ),
    ),
)

KIND_TEXT = {
    "conv": "cuDNN library code (convolution / normalisation): the kernel is not yours to "
    "change, what you ask of it is.",
    "gemm": "cuBLAS/CUTLASS library code (a matrix multiply): the kernel is not yours to "
    "change; its shapes and dtype are.",
    "elementwise": "one of PyTorch's own per-op kernels (elementwise, reduction, copy): one "
    "launch per op.",
    "triton": "a Triton kernel that torch.compile generated.",
    "nccl": "a communication (NCCL) kernel: its time is set by message sizes and overlap, "
    "not by its code.",
    "other": "library or custom code tuiperf does not recognise: change what you control "
    "around it (dtype, shapes, memory layout, batch).",
}


#: what tells a kernel's variants apart: tile and cluster shapes (128x256, 64x64_8x5,
#: tilesize32x32x8), operand layouts (_nt_, _tn), stage and warp counts
_VARIANT = re.compile(
    r"(?:tilesize|warpsize|cluster)?\d+x\d+(?:x\d+)*|_(?:nn|nt|tn|tt)(?=_|>|$)|stage\d+",
    re.IGNORECASE,
)


def kernel_family(name: str) -> str:
    """A kernel's name less what tells its variants apart (tile shapes, layouts, stages):
    the forward GEMM and its two backward products picked by one library are one family,
    so every finding counts a kernel's variants together the same way."""
    return _VARIANT.sub("#", name)


def kernel_kind(name: str) -> str:
    for kind, pattern in _KINDS:
        if pattern.search(name or ""):
            return kind
    return "other"


#: problem category -> words found in rule ids (ncu's and tuiperf's)
_CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("launch", ("LaunchConfiguration", "SmallGrid", "launch_shape", "tail_effect", "Tail")),
    ("occupancy", ("Occupancy", "occupancy")),
    ("access", ("Uncoalesced", "uncoalesced", "CacheAccess", "AccessPattern", "Sector")),
    ("compute", ("compute_bound", "HighPipe", "IssueSlot", "FPInstructions", "TensorCore")),
    ("memory", ("memory_bound", "DRAM", "Memory", "L2", "L1TEX", "SharedMem")),
)


def category(rule_id: str) -> str:
    """launch, occupancy, access, compute, memory, or latency (stalls and the rest)."""
    for cat, words in _CATEGORIES:
        if any(w in rule_id for w in words):
            return cat
    return "latency"


_CHANNELS_LAST = (
    "model = model.to(memory_format=torch.channels_last)\n"
    "x = x.to(memory_format=torch.channels_last)\n"
    "torch.backends.cudnn.benchmark = True  # cuDNN times its algorithms for your shapes\n"
    'with torch.autocast("cuda", dtype=torch.bfloat16):\n'
    "    loss = loss_fn(model(x), y)"
)
_TF32 = (
    'torch.set_float32_matmul_precision("high")  # TF32 tensor cores for fp32 matmuls\n'
    'with torch.autocast("cuda", dtype=torch.bfloat16):\n'
    "    loss = loss_fn(model(x), y)"
)
_COMPILE = (
    "model = torch.compile(model)  # fuses chains of elementwise ops into one kernel\n"
    "opt = torch.optim.AdamW(model.parameters(), fused=True)  # one kernel, not one per tensor"
)
_AUTOTUNE = 'model = torch.compile(model, mode="max-autotune")'

#: (kind, category) -> what to change; (kind, "*") covers the kind's other categories
_LEVERS: dict[tuple[str, str], str] = {
    ("conv", "launch"): "Too few blocks to fill the GPU: raise the batch size, and convert "
    "the model and inputs to channels_last, so cuDNN picks NHWC kernels that tile the work "
    "differently and the NCHW<->NHWC conversion kernels disappear.",
    ("conv", "access"): "NCHW tensors make cuDNN's NHWC kernels read strided data (and add "
    "layout-conversion kernels): convert the model and inputs to channels_last.",
    ("conv", "occupancy"): "Registers and shared memory are those of the algorithm cuDNN "
    "chose: let it benchmark algorithms for your shapes (cudnn.benchmark = True) and run "
    "convolutions in bf16 on channels_last tensors, where its tensor-core kernels fit.",
    ("conv", "compute"): "Put it on tensor cores: autocast to bf16/fp16 (fp32 convolutions "
    "use TF32 only with torch.backends.cudnn.allow_tf32 = True, the default).",
    ("conv", "*"): "Ask for less data movement: bf16 autocast halves the bytes, "
    "channels_last avoids layout-conversion passes, cudnn.benchmark picks the fastest "
    "algorithm; torch.compile fuses the batch-norm and activation around it.",
    ("gemm", "launch"): "The matrices are small for the GPU: more rows per matmul (a bigger "
    "batch or sequence), or many small matmuls grouped into one torch.bmm / fused by "
    "torch.compile.",
    ("gemm", "access"): "Pad the inner dimension to a multiple of 8 elements (bf16/fp16) or "
    "4 (fp32) and pass contiguous operands: a transposed or sliced view forces slower kernels.",
    ("gemm", "compute"): "Use tensor cores: TF32 for fp32 (set_float32_matmul_precision"
    '("high")) or bf16 autocast; sizes that are multiples of 16 get the fastest tiles.',
    ("gemm", "*"): "Give cuBLAS shapes and dtypes it is fast at: bf16 (or TF32 for fp32), "
    "dimensions that are multiples of 16, bigger matmuls (more arithmetic per byte).",
    ("elementwise", "launch"): "Each op runs over few elements: batch them. Per-parameter "
    "optimizer ops go to foreach=True / fused=True optimizers, chains of small ops to "
    "torch.compile (one kernel instead of one per op).",
    ("elementwise", "access"): "An input is a strided view (a permute or transpose): it is "
    "read with gaps. Make the hot tensor contiguous once, or keep one memory format end to "
    "end.",
    ("elementwise", "*"): "These kernels read and write every element once, so they are "
    "bound by memory: fuse chains of them with torch.compile (data read once), use bf16 "
    "(half the bytes), prefer in-place ops.",
    ("triton", "launch"): "Steps of many small generated kernels are launch-bound: "
    'torch.compile(mode="reduce-overhead") replays them as a CUDA graph.',
    ("triton", "*"): 'torch.compile(mode="max-autotune") searches block sizes, warps and '
    "stages for each generated kernel on your shapes.",
    ("nccl", "*"): "Overlap it with compute (DDP buckets: bucket_cap_mb, "
    "gradient_as_bucket_view=True) and avoid synchronising around it.",
    ("other", "*"): "Try bf16 autocast, sizes that are multiples of 16, contiguous inputs "
    "and a bigger batch; if it is your own CUDA extension, the ncu section names the metric.",
}
_SNIPPETS = {
    "conv": _CHANNELS_LAST,
    "gemm": _TF32,
    "elementwise": _COMPILE,
    "triton": _AUTOTUNE,
}


def lever(kind: str, cat: str) -> str:
    return _LEVERS.get((kind, cat)) or _LEVERS.get((kind, "*")) or _LEVERS[("other", "*")]


def fix_for_kernel(
    rule_id: str, kernel_name: str, section: str = "", low_precision: bool = False
) -> Fix:
    """The PyTorch-level change that acts on `rule_id`'s metric for this kind of kernel;
    with `low_precision` (the run's GEMMs already run in bf16/fp16/TF32) no autocast."""
    kind = kernel_kind(kernel_name)
    where = f" (ncu section: {section})" if section else ""
    text = f"It is {KIND_TEXT[kind]} {lever(kind, category(rule_id))}{where}"
    snippet = _SNIPPETS.get(kind, "")
    if low_precision:
        text += " The run already computes its matrix products in a low precision on tensor cores."
        snippet = "\n".join(
            ln for ln in snippet.splitlines() if "autocast" not in ln and "loss_fn(" not in ln
        )
    return Fix(text, snippet)
