"""tune_malloc: what a conversion process runs with from then on."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = """
import numpy as np
core = getattr(np, "_core", None) or np.core
core.multiarray._set_madvise_hugepage(True)  # numpy's own default on Linux
from tuiperf.load.malloc_tuning import tune_malloc
tune_malloc()
print(core.multiarray._set_madvise_hugepage(False))  # returns the setting it replaces
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
def test_numpy_stops_asking_for_huge_pages() -> None:
    # numpy madvises every array of 4 MiB or more for huge pages; with THP defrag on
    # `madvise` the first fault then compacts memory synchronously (seconds, measured)
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
