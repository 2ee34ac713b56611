"""Shared by the memory capture programs: recording, a small model, and the numbers the
tests compare with (`expect_<name>.json`: PyTorch's own peaks at the end of the run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
#: trace entries kept by the allocator's ring buffer (a few thousand per step here)
MAX_ENTRIES = 200_000


def start_recording() -> None:
    torch.cuda.memory._record_memory_history(max_entries=MAX_ENTRIES)


def model(width: int = 1024, depth: int = 6) -> torch.nn.Module:
    layers: list[torch.nn.Module] = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    return torch.nn.Sequential(*layers).cuda()


def finish(name: str, **extra: object) -> None:
    """Dump the snapshot, then write and print what PyTorch says the peaks were."""
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(str(OUT / f"{name}.pickle"))
    stats = torch.cuda.memory_stats()
    facts = {
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "requested_bytes_peak": stats.get("requested_bytes.all.peak"),
        "torch": torch.__version__,
        **extra,
    }
    (OUT / f"expect_{name}.json").write_text(json.dumps(facts, indent=1) + "\n")
    print(json.dumps(facts))
