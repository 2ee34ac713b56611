"""Fixtures for the Nsight Compute tests: the real reports and CSV exports, decompressed.

The reports (ViT `--set full`, 7 kernels; LSTM default set, 30 kernels) and their CSV
pages (`details`, `details --print-units base`, `raw`) are kept xz-compressed in
tests/data/ncu. This module holds no tests, only helpers; each test module defines its `ncu_dir`
fixture with `decompress`.
"""

from __future__ import annotations

import csv
import lzma
from pathlib import Path

import pytest

from tests.conftest import DATA

NCU_DATA = DATA / "ncu"
REPORTS = ("vit_full", "lstm_basic")
PAGES = ("details", "details_base", "raw")


def decompress(factory: pytest.TempPathFactory) -> Path:
    """Every file of tests/data/ncu decompressed once per session, read-only."""
    out = factory.getbasetemp() / "ncu-data"
    done = out / ".complete"
    if done.exists():
        return out
    out.mkdir(exist_ok=True)
    for src in NCU_DATA.glob("*.xz"):
        dst = out / src.name[:-3]
        if dst.exists():
            dst.chmod(0o644)
        dst.write_bytes(lzma.decompress(src.read_bytes()))
        dst.chmod(0o444)
    done.touch()
    return out


def rep(ncu_dir: Path, name: str) -> Path:
    return ncu_dir / f"{name}.ncu-rep"


def page(ncu_dir: Path, name: str, page_name: str) -> Path:
    return ncu_dir / f"{name}.{page_name}.csv"


def csv_dicts(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


def close(a: float, b: float, printed_step: float) -> bool:
    """`a` (exact) rounds to the printed `b` within ncu's printed precision."""
    return abs(a - b) <= printed_step / 2 * 1.0001 + 1e-9 * max(abs(a), abs(b))
