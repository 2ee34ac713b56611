"""Order findings so the first one is the one worth doing first."""

from __future__ import annotations

from tuiperf.analysis.findings import Finding


def rank(findings: list[Finding], profiled_ns: int) -> list[Finding]:
    """Largest estimated saving first; findings without an estimate after those, by
    severity then count. Fills `est_saving_pct` (share of the profiled time)."""
    for f in findings:
        f.own_saving_ns = f.est_saving_ns
        if f.est_saving_ns is not None and profiled_ns > 0:
            f.est_saving_pct = round(100.0 * f.est_saving_ns / profiled_ns, 2)
    return sorted(findings, key=_key)


def _key(f: Finding) -> tuple[bool, int, int, int, str]:
    saving = f.est_saving_ns
    return (saving is None, -(saving or 0), -int(f.severity), -f.count, f.rule)
