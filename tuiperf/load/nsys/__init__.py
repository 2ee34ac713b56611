"""Nsight Systems input: run `nsys export` for a `.nsys-rep` (rep), read the export's tables
from SQLite pages or parquet/arrow files (source, sqlite_pages), and turn them into the
canonical tables (tables, with ids, nvtx_depth, pybt, assemble; CPU samples and thread
state: samples, py_samples, sched) and the capture's metadata (meta)."""
