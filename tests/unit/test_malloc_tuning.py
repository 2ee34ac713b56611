"""No process-wide tuning from library code: opening a report as a library changes neither
glibc's malloc, numpy's huge-page setting nor the environment (there used to be such
tuning here; its measurements are in bench/notes.md and bench/ab_simplify.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_LIBRARY_PROBE = """
import os
import sys
from pathlib import Path
import numpy as np
from tuiperf.load.open import OpenOptions, open_trace
toggle = (getattr(np, "_core", None) or np.core).multiarray._set_madvise_hugepage
before = toggle(True)  # returns the setting it replaces
toggle(before)
env = dict(os.environ)
open_trace(Path(sys.argv[1]), OpenOptions(use_cache=False))
print(toggle(before) == before, dict(os.environ) == env)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
def test_the_library_leaves_the_process_alone(nsys_dir) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _LIBRARY_PROBE, str(nsys_dir / "vit_range.sqlite")],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True True"
