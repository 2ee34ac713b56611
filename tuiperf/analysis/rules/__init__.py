"""The rules over a timeline report: evidence in the trace -> a Finding with its fix and
estimated saving (numbers and fix texts, no rendering; report/findings draws them).

    rules/
      nsys.py       the `nsys analyze` expert-system rules, with nsys's definitions
      pytorch.py    the PyTorch training-loop rules (they call the four below)
      budget.py     rules read off the step budget: CPU-bound issue, GPU- and copy-bound steps
      comm.py       exposed communication: collectives no compute hides
      gloo.py       gloo collectives staging GPU tensors through the host
      kernels.py    rules read off kernel names: CUDA graphs traced whole, misaligned GEMMs
      sites.py      the user's source lines behind a finding, where the report has stacks
      run_facts.py  what the run already does (precision, compile, graphs, optimizer)

They read a budget.context.Ctx and the shared modules at the top of analysis/ (findings,
fixes, kernel_levers, intervals). The ncu rules are in analysis/ncu/, which never imports
this room nor this room it (`analysis-rooms`); analysis/engine runs both.
"""
