"""Titles, fix texts and PyTorch snippets, one entry per rule id."""

from __future__ import annotations

from tuiperf.analysis.findings import Fix

TITLES: dict[str, str] = {
    # nsys analyze parity
    "cuda_memcpy_async": "Async memcpy with pageable host memory",
    "cuda_memcpy_sync": "Synchronous memcpy",
    "cuda_memset_sync": "Synchronous memset",
    "cuda_api_sync": "CUDA synchronisation API calls",
    "gpu_gaps": "GPU idle gaps",
    "gpu_time_util": "Low GPU time utilisation",
    # PyTorch training rules
    "pageable_h2d_in_steps": "Pageable host-to-device copies in every training step",
    "dataloader_starvation": "GPU idle while the CPU fetches the next batch",
    "host_sync_per_step": "A host sync in every training step",
    "cpu_bound": "CPU-bound: the GPU waits for the CPU to issue work",
    "gpu_bound": "GPU-bound: the kernels themselves are the step",
    "copy_bound": "Copy-bound: the GPU spends the step on transfers",
    "idle_unexplained": "GPU idle time no rule explains",
    "layout_conversion": "NCHW↔NHWC layout conversion kernels",
    "top_kernel": "The kernel with the most GPU time",
    "fp32_no_tensor_cores": "FP32 GEMM/conv kernels without tensor cores",
    "tiny_optimizer_kernels": "Many tiny optimizer kernels",
    "alloc_churn": "cudaMalloc/cudaFree inside training steps",
    "exposed_comm": "Exposed communication: collectives no compute hides",
    "graphs_untraced": "CUDA graphs traced whole: their kernels are not in the report",
    "misaligned_gemm": "Misaligned or fallback matrix-multiply kernels",
    "gloo_staging": "Collectives over gloo copy GPU tensors through host memory",
    # readings of Nsight Compute sections
    "memory_bound": "Memory-bound kernel",
    "compute_bound": "Compute-bound kernel",
    "latency_bound": "Latency-bound kernel",
    "occupancy_limited": "Occupancy limited by the launch",
    "uncoalesced_access": "Uncoalesced global memory access",
    "small_grid": "Grid too small to fill the GPU",
    "tail_effect": "Tail effect: a partial last wave",
}

_PIN = """\
loader = torch.utils.data.DataLoader(ds, batch_size=bs, num_workers=8,
                                     pin_memory=True, persistent_workers=True)
for x, y in loader:
    x = x.to(device, non_blocking=True)
    y = y.to(device, non_blocking=True)"""

_SYNC = """\
running = torch.zeros((), device=device)
for step, (x, y) in enumerate(loader):
    loss = loss_fn(model(x), y)
    loss.backward(); opt.step(); opt.zero_grad()
    running += loss.detach()              # stays on the GPU: no sync
    if step % 100 == 0:
        print(running.item() / 100)       # one sync every 100 steps
        running.zero_()"""

_GRAPHS = """\
model = torch.compile(model, mode="reduce-overhead")   # CUDA graphs under the hood
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)   # or foreach=True"""

FIXES: dict[str, Fix] = {
    "cuda_memcpy_async": Fix(
        "Copy from pinned (page-locked) host memory so cudaMemcpyAsync is truly asynchronous: "
        "pin_memory=True in the DataLoader (or tensor.pin_memory()) and non_blocking=True.",
        _PIN,
    ),
    "cuda_memcpy_sync": Fix(
        "Use asynchronous copies from pinned memory (non_blocking=True) and sync only where "
        "the result is needed.",
        "y = x.pin_memory().to(device, non_blocking=True)",
    ),
    "cuda_memset_sync": Fix(
        "Use cudaMemsetAsync on a stream (torch.zero_() / torch.zeros on the device are "
        "already asynchronous) instead of cudaMemset on pinned or managed memory.",
        "buf = torch.zeros(n, device=device)   # async memset on the current stream",
    ),
    "cuda_api_sync": Fix(
        "Avoid blocking synchronisations: remove torch.cuda.synchronize() from the loop, "
        "wait on CUDA events (stream.wait_event) instead of the whole stream or device.",
        "torch.cuda.set_sync_debug_mode('warn')   # reports every implicit sync",
    ),
    "gpu_gaps": Fix(
        "Find what the CPU does during the gaps (OS runtime calls, NVTX ranges). In training "
        "loops the usual causes are data loading, host syncs and Python overhead.",
        "torch.cuda.nvtx.range_push('data'); batch = next(it); torch.cuda.nvtx.range_pop()",
    ),
    "gpu_time_util": Fix(
        "Keep the GPU fed: overlap data loading with compute, remove host syncs, batch more "
        "work per launch (larger batches, CUDA graphs, torch.compile).",
        "model = torch.compile(model)   # fewer, larger kernels; less Python per step",
    ),
    "pageable_h2d_in_steps": Fix(
        "Pin the batches: DataLoader(pin_memory=True) and .to(device, non_blocking=True), so "
        "the copy overlaps compute instead of blocking the CPU. Copies before the first step "
        "(model.to(device)) are one-off and harmless.",
        _PIN,
    ),
    "dataloader_starvation": Fix(
        "Make data loading keep up: more DataLoader workers, pinned memory, prefetching, "
        "persistent workers, and non-blocking copies; move heavy CPU transforms to the GPU.",
        """\
loader = torch.utils.data.DataLoader(
    ds, batch_size=bs, shuffle=True,
    num_workers=min(8, os.cpu_count()), pin_memory=True,
    prefetch_factor=4, persistent_workers=True)""",
    ),
    "host_sync_per_step": Fix(
        "Don't read GPU values on the CPU every step (loss.item(), .cpu(), print(loss), "
        "bool(tensor) in an if): accumulate on the GPU and sync every N steps.",
        _SYNC,
    ),
    "cpu_bound": Fix(
        "Give the GPU more work per CPU-issued kernel, in this order: a bigger batch; "
        'torch.compile(mode="reduce-overhead") or CUDA graphs; foreach/fused optimizers; '
        "fewer small ops.",
        _GRAPHS,
    ),
    "gpu_bound": Fix(
        "Make the kernels themselves faster: mixed precision (bf16/fp16 autocast) or TF32, "
        "channels_last for convolutions, torch.compile to fuse elementwise ops; profile the "
        "top kernels with Nsight Compute (tuiperf ncu).",
        """\
torch.set_float32_matmul_precision("high")          # TF32 tensor cores
with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
    loss = loss_fn(model(x), y)""",
    ),
    "copy_bound": Fix(
        "Move fewer bytes, or hide them: keep data on the GPU across steps, send compact "
        "dtypes (uint8 images, normalise on the GPU), and prefetch the next batch on a side "
        "stream with non_blocking=True so the copy overlaps compute.",
        """\
side = torch.cuda.Stream()
with torch.cuda.stream(side):
    nxt = next_batch.to(device, non_blocking=True)     # from pinned memory
torch.cuda.current_stream().wait_stream(side)""",
    ),
    "idle_unexplained": Fix(
        "Open the report in the TUI and look at the idle gaps of the steady steps (toggle "
        "the gap colours): what the CPU threads do there is not a known pattern. NVTX "
        "ranges around the loop's phases (data, forward, backward, optimizer) let the "
        "budget name more of it."
    ),
    "layout_conversion": Fix(
        "cuDNN runs convolutions in NHWC and converts NCHW tensors around each one. Keep the "
        "model and its inputs in channels_last so the conversions disappear.",
        """\
model = model.to(device, memory_format=torch.channels_last)
x = x.to(device, memory_format=torch.channels_last, non_blocking=True)""",
    ),
    "fp32_no_tensor_cores": Fix(
        "These FP32 GEMM/conv kernels run on the CUDA cores. Use mixed precision (autocast to "
        "bf16/fp16) or allow TF32 so they run on tensor cores.",
        """\
torch.backends.cuda.matmul.allow_tf32 = True      # or torch.set_float32_matmul_precision("high")
torch.backends.cudnn.allow_tf32 = True
with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
    loss = loss_fn(model(x), y)""",
    ),
    "tiny_optimizer_kernels": Fix(
        "The optimizer updates each parameter with its own small kernels. Use the foreach or "
        "fused implementation: a few kernels for all parameters.",
        "opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)   # or foreach=True",
    ),
    "graphs_untraced": Fix(
        "Capture again with kernel detail inside the graphs to see which kernels take their "
        "time (a little more tracing overhead per launch).",
        "nsys profile --cuda-graph-trace=node -t cuda,nvtx,osrt -o run python train.py",
    ),
    "misaligned_gemm": Fix(
        "Pad the dimension to a multiple of 8 (bf16/fp16; 4 for TF32), 64 for the best tiles: "
        "an odd vocabulary (50257 -> 50304), hidden size or sequence length. The padded "
        "logits/rows can be masked or dropped.",
        """config.vocab_size = 50304   # 50257 rounded up to a multiple of 64
model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=64)   # HF transformers""",
    ),
    "alloc_churn": Fix(
        "Steady-state steps should not call cudaMalloc/cudaFree: the caching allocator is "
        "being bypassed or keeps resizing. Keep tensor shapes stable, avoid "
        "torch.cuda.empty_cache() in the loop, and tune the allocator.",
        """\
# before the process starts:
#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
torch.cuda.memory._record_memory_history()   # find who allocates""",
    ),
}


_DDP = """\
model = torch.nn.parallel.DistributedDataParallel(
    model, device_ids=[local_rank],
    bucket_cap_mb=25,                 # try 10-100: smaller buckets start all-reducing sooner
    gradient_as_bucket_view=True)     # gradients live in the buckets: no copy in or out
# FSDP: FullyShardedDataParallel(model, forward_prefetch=True,
#                                backward_prefetch=BackwardPrefetch.BACKWARD_PRE)"""

FIXES["gloo_staging"] = Fix(
    "Use the NCCL backend for CUDA tensors: dist.init_process_group('nccl') reduces on the "
    "GPU with no copy to the host; keep gloo only for CPU tensors (a second process group).",
    """\
dist.init_process_group("nccl")                       # CUDA tensors: reduce on the GPU
cpu_group = dist.new_group(backend="gloo")            # only if CPU tensors need collectives""",
)

FIXES["exposed_comm"] = Fix(
    "Overlap communication with compute: let DDP all-reduce gradient buckets while backward "
    "runs (tune bucket_cap_mb; gradient_as_bucket_view=True avoids the bucket copies), with "
    "FSDP prefetch the next all-gather (forward_prefetch, backward_prefetch=BACKWARD_PRE); "
    "no torch.cuda.synchronize() or .item() around the all-reduce (it serialises the "
    "collective after all compute); NCCL, not gloo, for GPU tensors. When one rank is "
    "slower, the others' collective time is waiting: balance the work (tuiperf ranks).",
    _DDP,
)


FIXES.update(
    {
        "memory_bound": Fix(
            "The kernel is limited by memory traffic, not math. In PyTorch: fuse the elementwise "
            "ops around it (torch.compile), use lower precision (bf16/fp16 halves the bytes), and "
            "avoid extra copies (.contiguous(), dtype casts). In CUDA: reuse data in shared "
            "memory/registers, vectorise loads.",
            "model = torch.compile(model)   # fuses pointwise chains into one kernel",
        ),
        "compute_bound": Fix(
            "The kernel is limited by its math pipes. Use tensor cores (autocast bf16/fp16, TF32) "
            "and shapes that are multiples of 8/16 so cuBLAS/cuDNN pick tensor-core kernels.",
            """torch.backends.cuda.matmul.allow_tf32 = True
with torch.autocast("cuda", dtype=torch.bfloat16):
    out = model(x)""",
        ),
        "latency_bound": Fix(
            "Neither memory nor compute is near its peak: the warps mostly wait. Give the GPU more "
            "parallel work (larger batch, fused kernels) or raise occupancy; in CUDA, more "
            "independent instructions per thread (ILP) and fewer dependent loads.",
            "model = torch.compile(model, mode='max-autotune')",
        ),
        "occupancy_limited": Fix(
            "Too few warps fit on each SM because of the launch's registers, shared memory or "
            "block size. In CUDA: __launch_bounds__ / -maxrregcount, smaller shared-memory tiles, "
            "block sizes that are multiples of 32 and at least 128 threads. In PyTorch this is "
            "the kernel library's choice: try another algorithm (cudnn.benchmark, "
            "torch.compile max-autotune) or shapes.",
            "torch.backends.cudnn.benchmark = True   # lets cuDNN pick a better-fitting kernel",
        ),
        "uncoalesced_access": Fix(
            "Threads of a warp read scattered addresses, so most of each 32-byte sector is "
            "wasted. In PyTorch this is usually a non-contiguous or transposed tensor: call "
            ".contiguous() once, use channels_last for convolutions. In CUDA: make consecutive "
            "threads read consecutive addresses.",
            "x = x.contiguous(memory_format=torch.channels_last)",
        ),
        "small_grid": Fix(
            "The grid has fewer blocks than the GPU has SMs, so part of the GPU idles. Batch "
            "more work per launch (larger batch, torch.compile fusion, CUDA graphs for many "
            "small launches).",
            "model = torch.compile(model, mode='reduce-overhead')",
        ),
        "tail_effect": Fix(
            "The last wave of blocks only partly fills the GPU. Change the grid size (batch "
            "size or tile size) so the block count is a multiple of what one wave holds.",
            "# e.g. pick a batch size that makes the block count a multiple of the SM count",
        ),
    }
)


#: cuda_memcpy_async when none of the flagged copies is inside a training step: one-off
#: start-up copies (model.to(device), buffers) cost nothing per step, and the batches are
#: not among them, so pinning the DataLoader's batches would change nothing
START_UP_COPIES = Fix(
    "No change is needed in the training loop: every flagged copy happens outside the "
    "training steps (start-up copies such as model.to(device) and buffers), once per run. "
    "The batches are not among them; pin host tensors only if such copies ever move into "
    "the loop."
)


def fix_for(rule: str) -> Fix:
    return FIXES.get(rule, Fix(""))


def title_for(rule: str) -> str:
    return TITLES.get(rule, rule)
