"""Shared fixtures: real reports from tests/data, decompressed once per session."""

from __future__ import annotations

import atexit
import functools
import lzma
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
NSYS_DATA = DATA / "nsys"

NSYS_REPORTS = ("cnn_osrt", "vit_amp", "lstm", "vit_range")


@functools.cache
def unpacked_nsys() -> Path:
    """tests/data/nsys decompressed once per test process into a private temporary folder:
    every `<name>.sqlite` (read-only files), the arrowdir/parquetdir exports, and
    `reference/` (the `nsys stats` CSVs). Everything comes from the checkout itself."""
    out = Path(tempfile.mkdtemp(prefix="tuiperf-tests-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    for src in NSYS_DATA.glob("*.sqlite.xz"):
        dst = out / src.name[:-3]
        dst.write_bytes(lzma.decompress(src.read_bytes()))
        dst.chmod(0o444)
    for src in NSYS_DATA.glob("*.tar.xz"):
        with tarfile.open(src) as tar:
            tar.extractall(out, filter="data")
    ref = out / "reference"
    ref.mkdir()
    for src in (NSYS_DATA / "reference").iterdir():
        if src.suffix == ".xz":
            (ref / src.name[:-3]).write_bytes(lzma.decompress(src.read_bytes()))
        else:
            shutil.copy(src, ref / src.name)
    return out


def nsys_report(name: str) -> Path:
    """The bundled SQLite export `name` (e.g. "cnn_osrt"), decompressed."""
    return unpacked_nsys() / f"{name}.sqlite"


def nsys_reference(name: str) -> Path:
    """A bundled `nsys stats` reference CSV, e.g. "stats_cnn_osrt_cuda_gpu_kern_sum.csv"."""
    return unpacked_nsys() / "reference" / name


def _isolate(mp: pytest.MonkeyPatch, factory: pytest.TempPathFactory, config: str) -> None:
    """Never touch the user's cache (one for the test session) nor their config."""
    mp.setenv("TUIPERF_CACHE_DIR", str(factory.getbasetemp() / "tuiperf-cache"))
    mp.setenv("TUIPERF_CONFIG_DIR", str(factory.mktemp(config)))
    mp.delenv("TUIPERF_NSYS", raising=False)
    mp.delenv("TUIPERF_NO_CACHE", raising=False)


@pytest.fixture(scope="session", autouse=True)
def _private_cache_for_the_session(tmp_path_factory: pytest.TempPathFactory):
    """Set before any fixture of a wider scope than a test runs (a module-scoped fixture
    that opens a report would otherwise write into the user's cache)."""
    with pytest.MonkeyPatch.context() as mp:
        _isolate(mp, tmp_path_factory, "session-config")
        yield


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Again for each test, with a fresh config: a lane layout one test saves (`c` folds a
    group) is never the next test's."""
    _isolate(monkeypatch, tmp_path_factory, "config")


@pytest.fixture(scope="session")
def nsys_dir() -> Path:
    """A folder with every bundled nsys export decompressed (read-only files)."""
    return unpacked_nsys()


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    return unpacked_nsys() / "reference"


def nsys_path(nsys_dir: Path, name: str) -> Path:
    return nsys_dir / f"{name}.sqlite"
