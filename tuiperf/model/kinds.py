"""The event kinds of the events table (no pyarrow: the CLI parser lists them)."""

from __future__ import annotations

#: the event kinds the table shows, in the order of their tabs
KINDS = ("kernels", "memcpy", "memset", "graphs", "api", "nvtx", "osrt")

#: tab labels
KIND_TITLES = {
    "kernels": "Kernels",
    "memcpy": "Memcpy",
    "memset": "Memset",
    "graphs": "Graphs",
    "api": "CUDA API",
    "nvtx": "NVTX",
    "osrt": "OS runtime",
}
