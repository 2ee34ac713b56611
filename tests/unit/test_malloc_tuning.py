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


_CLI_PROBE = """
import sys
from tuiperf.cli import main
main(["info", sys.argv[1]])  # a missing report: an error line, nothing converted
import numpy as np
core = getattr(np, "_core", None) or np.core
print(core.multiarray._set_madvise_hugepage(False))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
def test_every_command_runs_numpy_without_huge_pages(tmp_path) -> None:
    # the summary of a cached report imports numpy long after any reader is made
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    out = subprocess.run(
        [sys.executable, "-c", _CLI_PROBE, str(tmp_path / "missing.sqlite")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"
