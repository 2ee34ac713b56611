"""The report bundled with the package: what `tuiperf` opens with no argument."""

from __future__ import annotations

from pathlib import Path


def sample_path() -> Path:
    return Path(__file__).resolve().parent / "sample" / "vit_range"
