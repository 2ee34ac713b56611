"""Findings name the source lines behind them, where the report has Python stacks (issue 22).

A rule hands over the rows its finding is about; when the report has call stacks
(model.callsites) the finding gets a sentence naming the user's lines that issued most of
them, a `call_sites` metric, and a `site` column in its evidence. Without stacks nothing
changes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.findings import Finding
from tuiperf.model.timeline import callsites as C

#: lines named in a finding's message
SHOWN = 3


def name_sites(f: Finding, ctx: Ctx, table: str, rows: np.ndarray, lead: str) -> Finding:
    """Add `lead` + the top user lines of `rows` of `table` (e.g. "Called from") to `f`.

    The evidence gets a `site` column when its rows are rows of `table`."""
    if not C.has_stacks(ctx.trace):
        return f
    sites = C.sites_of(ctx.trace, table, rows)
    if not sites:
        return f
    f.message += f" {lead}: {C.sites_text(sites, SHOWN)}."
    f.metrics["call_sites"] = [
        {"file": s.file, "line": s.line, "function": s.function, "count": n} for s, n in sites
    ]
    _site_column(f, ctx, table)
    return f


def name_modules(f: Finding, ctx: Ctx, table: str, rows: np.ndarray) -> Finding:
    """The nn.Module(s) whose calls issued `rows` (Kineto with_stack), else their lines."""
    if not C.has_stacks(ctx.trace):
        return f
    mods = C.modules_of(ctx.trace, table, rows)
    if not mods:
        return name_sites(f, ctx, table, rows, "Launched from")
    shown = ", ".join(f"{m} {n:,}x" for m, n in mods[:SHOWN])
    f.message += f" Inside module{'s' if len(mods) > 1 else ''}: {shown}."
    f.metrics["modules"] = [{"module": m, "count": n} for m, n in mods]
    return name_sites(f, ctx, table, rows, "Launched from")


def _site_column(f: Finding, ctx: Ctx, table: str) -> None:
    ev = f.evidence
    if "site" in ev.rows.column_names or ev.rows.num_rows == 0:
        return
    if set(ev.rows["table"].unique().to_pylist()) != {table}:
        return
    rows = np.asarray(ev.rows["row"].fill_null(-1).to_numpy(), np.int64)
    texts = C.site_texts(ctx.trace, table, rows)
    ev.rows = ev.rows.append_column("site", pa.array(texts, pa.string()))
    ev.headers["site"] = "Source line"
