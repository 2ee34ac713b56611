"""Normalized data and the pure logic over it (no UI imports).

    model/
      trace.py       Trace: the canonical Arrow tables of a timeline report and its metadata
      arrays.py      small numpy views over Arrow columns
      fmt.py         number and text formatting (CLI tables, viewer, exports)
      kinds.py       the event kinds of the events table (no pyarrow)
      columns.py     the events table's columns per kind: header, raw names, cell format
      describe.py    plain facts about a trace (devices, processes, time range, row counts)
      api_names.py   CUDA API names as `nsys stats` prints them
      groupstats.py  per-group duration statistics, the `nsys stats` way
      cpu_samples.py CPU samples counted by function: self and total, their stacks
      gpu_metrics.py GPU metrics samples per device and metric, as time series
      timeline/      over a Trace: lanes and their index, the viewport, queries of the events
                     table, what an event is (attribution, call sites, graph launches)
      ncu/           over KernelMetrics: the tables, kernel names across tools, groups, the
                     link to an nsys trace, the baseline comparison and the SOL verdict

timeline/ and ncu/ never import each other (import-linter contract `model-rooms`); both sit
on the generic modules at the top, which import neither (`model-floors`). The pieces that
both rooms or the summaries use stay at the top.
"""
