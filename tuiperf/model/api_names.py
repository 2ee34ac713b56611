"""CUDA API names as `nsys stats` prints them (the summaries and the events table agree)."""

from __future__ import annotations

import re

_API_SUFFIX = re.compile(r"_v\d{4}$")


def api_display_name(name: str) -> str:
    """nsys stats strips a trailing `_v` + four digits (`cudaLaunchKernel_v7000`)."""
    return _API_SUFFIX.sub("", name)
