"""Does an ncu_report module read metric units when a C++ library was loaded before it?

Nsight Compute 2025.3.1's ncu_report (the PyPI wheel ncu-report 2025.3.1, and the install's
extras/python module) crashes with SIGSEGV in `IMetric.unit()` when pyarrow's libarrow was
loaded first (with RTLD_LOCAL, as Python loads extension modules); making the already-loaded
libstdc++ global first (tuiperf.load.ncu.rep._share_libstdcxx) avoids it.

usage: python ncu_stdcxx_probe.py REPORT MODULE_DIR [PRELOAD_LIB|-] [promote]
prints `ok N` (N metrics read) or dies with the signal; run it once per combination.
"""

from __future__ import annotations

import ctypes
import os
import sys


def main() -> None:
    report, module_dir = sys.argv[1], sys.argv[2]
    preload = sys.argv[3] if len(sys.argv) > 3 else "-"
    if preload == "pyarrow":
        import pyarrow  # noqa: F401
    elif preload != "-":
        ctypes.CDLL(preload)  # RTLD_LOCAL, as an extension module's dependencies
    if "promote" in sys.argv[4:]:
        ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL | os.RTLD_NOLOAD)
    sys.path.insert(0, module_dir)
    import ncu_report

    ctx = ncu_report.load_report(report)
    action = ctx.range_by_idx(0).action_by_idx(0)
    n = 0
    for name in action.metric_names():
        m = action.metric_by_name(name)
        m.name(), m.unit(), m.value()
        n += 1
    print("ok", n, ncu_report.__file__, flush=True)


if __name__ == "__main__":
    main()
