"""The training steps and where their time goes (numbers only, no text): the step structure
(steps), the step budget, its parts adding up to each step's wall time exactly
(step_budget, with the NCCL kernel names it and comm share: comm_names), the context every
rule reads (context.Ctx: the trace, its steps and its budget, each computed once),
communication hidden or exposed per device and step (comm), where a CPU-bound loop spends
its host time (cpu_hotspot: torch.profiler's operators; step_samples: CPU samples), how long
the training thread was off its CPU (descheduled), the budget as summary rows (rows), GPU
busy and the budget's parts over any time window (window: range statistics) and the
findings ranked by the share of the step they can remove (savings).

context sits here, not at the top of analysis/: Ctx computes the steps and the budget, so
it imports both, and comm and cpu_hotspot read a Ctx. The rooms above (rules, ncu, ranks,
diff) read a Ctx; the shared modules below (trace_ctx, intervals, findings, fixes, …)
import no room.

Inside, as floors (import-linter's `budget-floors` in pyproject.toml, exhaustive: a new
module must take a floor): what reads a Ctx or a Budget (comm, cpu_hotspot, descheduled,
rows, savings, step_samples, window; none imports another), then context, then
step_budget, then steps and comm_names."""
