"""`tuiperf ranks`: several ranks of one distributed run compared (numbers only; the command
prints them).

    ranks/
      summary.py    the map step: one rank's report reduced to plain numbers (RankResult)
      split.py      one report holding several ranks: a trace per process that ran GPU work
      pool.py       the map step over many reports: in process, a process pool, or Dask
      assemble.py   the reduce step: rank numbers, a common clock, the table, the straggler
      waits.py      who waits in which collective of the step
      merge.py      every rank on one timeline (one Trace on the aligned clock)

The room reads budget/ (steps, step budget, comm) and load/ (to open each report); it never
imports the rules, the ncu room or diff (`analysis-floors`, `analysis-rooms`)."""
