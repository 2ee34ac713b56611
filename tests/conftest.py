"""Shared fixtures: real reports from tests/data, decompressed once per session."""

from __future__ import annotations

import lzma
import shutil
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
NSYS_DATA = DATA / "nsys"
#: the read-only shared fixtures beside the checkout (CI has them too)
SHARED = REPO.parent / "shared" / "fixtures"

NSYS_REPORTS = ("cnn_osrt", "vit_amp", "lstm", "vit_range")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Never touch the user's cache: every test session gets its own."""
    root = tmp_path_factory.getbasetemp() / "tuiperf-cache"
    monkeypatch.setenv("TUIPERF_CACHE_DIR", str(root))
    monkeypatch.delenv("TUIPERF_NSYS", raising=False)
    monkeypatch.delenv("TUIPERF_NO_CACHE", raising=False)


@pytest.fixture(scope="session")
def nsys_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with every bundled nsys export decompressed (read-only files)."""
    out = tmp_path_factory.mktemp("nsys")
    for src in NSYS_DATA.glob("*.sqlite.xz"):
        dst = out / src.name[:-3]
        dst.write_bytes(lzma.decompress(src.read_bytes()))
        dst.chmod(0o444)
    for src in NSYS_DATA.glob("*.tar.xz"):
        with tarfile.open(src) as tar:
            tar.extractall(out, filter="data")
    return out


@pytest.fixture(scope="session")
def reference_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reference")
    for src in (NSYS_DATA / "reference").iterdir():
        if src.suffix == ".xz":
            (out / src.name[:-3]).write_bytes(lzma.decompress(src.read_bytes()))
        else:
            shutil.copy(src, out / src.name)
    return out


def nsys_path(nsys_dir: Path, name: str) -> Path:
    return nsys_dir / f"{name}.sqlite"
