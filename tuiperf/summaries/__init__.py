"""The summary reports: `nsys stats`-style tables, one row per name, computed from a Trace.

`tuiperf summary` prints these (as a table, CSV or JSON). The package imports nothing
itself: `summary` resolves a name and prints a report kept in the cache without loading
pyarrow or numpy, so each module is imported on use.

- `names`: the report names and their aliases (plain Python: resolved before anything loads).
- `table`: `Column` (a column's header as `nsys stats` prints it, its key and format) and
  `StatsTable` (a report's values as Arrow, one column per `Column`); the bottom of the
  package, which every module below builds on (no two of them import each other).
- `stats`: the `nsys stats` reports themselves (kernels, API, memory, NVTX,
  OS runtime), built on `tuiperf.model.groupstats` (the per-group statistics, which the
  events table's by-name view shares and so stays in model/).
- `gpu_trace`: `cuda_gpu_trace`, every kernel, memcpy and memset in start order.
- `ops`: `op_sum`, torch.profiler's CPU operator summary (TensorBoard's Operator view).
- `cpu_samples`: `cpu_samples`, CPU samples by function (self and total), per thread.
- `reports`: a report by name (the `nsys stats` ones plus `op_sum`), and `compute_cached`,
  which keeps each result in the trace's cache entry: as Arrow beside the tables, and as
  JSON through `stored`.
- `rows`: `StoredReport`, the same report as plain Python rows (read back from that JSON).
- `stored`: that JSON copy in the cache entry: written after a compute, found again from
  the report path alone, without loading a table.
- `cells`: a `StatsTable`'s values as the strings `nsys stats --format csv` writes.

Layering: above `model` (Trace) and `load` (the cache entry), below `report` and the
commands; the order of the floors is in `tuiperf/__init__.py`.
"""
