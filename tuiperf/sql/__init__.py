"""`tuiperf sql`: DuckDB over a report's canonical Arrow tables, read-only (docs/sql.md).

- `views`: the documented views (`kernels`, `copies`, `api`, ...), their columns and units;
- `tables`: the derived tables behind `steps`, `budget`, `findings` and `ncu_metrics`;
- `session`: a locked-down DuckDB connection with one schema per report.

DuckDB is an extra (`pip install 'tuiperf[sql]'`), imported only by `session`.
"""
