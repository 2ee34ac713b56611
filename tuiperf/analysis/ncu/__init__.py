"""Nsight Compute analysis (numbers only; report/roofline and report/memory draw them): the
ncu rules, one finding per kernel and problem with the lever a PyTorch user can pull (rules),
and the roofline numbers of each kernel as ncu's roofline sections define them (roofline).

The rules read KernelMetrics (and, linked, a timeline's Ctx) and the shared modules at the
top of analysis/ (findings, fixes, kernel_levers); they never import the timeline rules of
analysis/rules/ nor these them (`analysis-rooms`); analysis/engine runs both."""
