"""Loaders: each turns a path into canonical Arrow tables (no UI imports).

One room per input format, one for the cache, and at the top what they share:

    load/
      open.py        any timeline report -> Trace, through the cache (picks nsys or kineto)
      detect.py      what a path holds, from its bytes
      progress.py    Progress steps the loaders report
      dictcols.py    id columns -> compact dictionary-encoded strings
      nesting.py     per-thread nesting depth of ranges (nvtx table)
      nsys/          Nsight Systems: `nsys export` runs, SQLite/parquet/arrow exports -> tables
      ncu/           Nsight Compute: .ncu-rep (ncu_report) and CSV exports -> KernelMetrics,
                     source hot spots; the bundled labels.json and sections.json
      kineto/        torch.profiler Chrome trace JSON -> tables
      cache/         the conversion cache: keys, Arrow IPC store, the file sink

Where a module lives is decided by who imports it: a module used by one format lives in that
format's room (sqlite_pages and assemble serve only nsys); one used by several formats, or by
open.py itself, stays at the top. The formats never import each other (import-linter
contract `load-formats`); they sit above cache/ and the top helpers, and below open.py
(`load-floors`).
"""
