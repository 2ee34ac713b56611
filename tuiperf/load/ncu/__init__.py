"""Nsight Compute input: open a `.ncu-rep` or an ncu CSV export as KernelMetrics through the
cache (open); read a report through NVIDIA's `ncu_report` (rep, with the Protocols in api and
the per-reader layout in layout, which falls back to the bundled sections.json), read ncu's
CSV pages (csv_export, with labels.json), and a kernel's source hot spots (source)."""
