"""Findings engine and the numbers behind it: rules over a Trace (and ncu metrics) that say
what to change, the step budget, the comparison of two reports, the ranks of one run.
Numbers only: every text for people is in tuiperf.report.

    analysis/
      diff/        two reports compared (compare)                    | ranks/  several ranks
      ─────────
      engine.py    every rule over a trace (and an ncu report), ranked
      ─────────
      rules/       the timeline rules: nsys parity, PyTorch, budget,  | ncu/  ncu rules,
                   comm, gloo, kernels; call sites, run facts         |       the roofline
      ─────────
      budget/      steps, step budget, context (Ctx), comm, comm_names, cpu_hotspot,
                   rows (the budget for scripts), savings (findings ranked by the budget)
      ─────────
      trace_ctx · interval_sets · fixes · kernel_levers · order · index
      intervals · findings

A module imports only from its own floor and those below (import-linter `analysis-floors`,
exhaustive): rooms on one floor never import each other, and rules/, ncu/ and ranks/ are
independent even through other modules (`analysis-rooms`). A module used by several rooms
sits at the bottom: findings (what a rule produces), fixes (the fix texts: timeline, ncu
and budget rules all cite them), kernel_levers (PyTorch rules and ncu rules), order (the
generic finding order), index (findings by event, for the viewer), trace_ctx (the arrays
every rule derives from a trace), intervals and interval_sets. context is in budget/
because Ctx computes the steps and the budget; engine is a floor of its own because it
runs both rule rooms, and diff is above it because it runs the engine on both sides.
"""
