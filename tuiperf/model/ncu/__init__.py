"""Nsight Compute results as data (no UI imports): KernelMetrics and queries over its tables
(metrics); kernel names across ncu and nsys (names); launches grouped per kernel (groups);
which ncu result belongs to which launch of an nsys trace (link, and link_facts for the
headless commands); one kernel against a baseline report (baseline); a kernel's Speed Of
Light verdict, limiters and stalls (verdict)."""
