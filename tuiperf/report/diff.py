"""`tuiperf diff` as text (Rich) and CSV rows: the verdict line first, then the tables."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tuiperf.analysis.diff.compare import SAME, SHORT, UNKNOWN, Diff, Row, finding_status
from tuiperf.model import fmt
from tuiperf.report.mdfit import fit, text_bar

CSV_HEADER = [
    "section", "name", "detail", "unit", "before", "after", "change", "change_pct",
    "before_count", "after_count", "status",
]  # fmt: skip
#: rows per by-name table in text (the largest changes); csv and json hold them all
TEXT_ROWS = 10


def verdict_line(d: Diff) -> str:
    """One line: faster/slower/same, by how much per step, and the changes that explain it."""
    if d.verdict == UNKNOWN:
        return (
            "verdict: step time cannot be compared ("
            + "; ".join(
                side for side, s in (("before", d.before), ("after", d.after)) if not s.n_steps
            )
            + " has no steady steps)"
        )
    b, a = d.before.median_ns, d.after.median_ns
    head = (
        f"verdict: {d.verdict}: median step {fmt.duration(b)} → {fmt.duration(a)} "
        f"({_signed_ms(d.change_ns)} per step, {_signed_pct(d.change_pct)}); "
        f"noise ±{fmt.duration(d.noise_ns)} (larger step MAD)"
    )
    if d.verdict == SAME or not d.reasons:
        return head
    why = ", ".join(f"{SHORT[p]} {_signed_ms(c)}" for p, c, _ in d.reasons)
    return f"{head}; explained by: {why}"


def _signed_ms(ns: float) -> str:
    return f"{ns / 1e6:+.2f} ms"


def _signed_pct(p: float | None) -> str:
    return "" if p is None else f"{p:+.1f} %"


def value_text(r: Row, v: float | None) -> str:
    """One side's value of a row, in its unit (— when the name is missing there)."""
    if v is None:
        return "—"
    if r.unit == "ns":
        return fmt.duration(v)
    if r.unit == "pct":
        return f"{v:.1f} %"
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.1f}"


def change_text(r: Row) -> str:
    """The row's change, signed, in ms or percentage points (empty when one side lacks it)."""
    if r.before is None or r.after is None:
        return ""
    if r.unit == "ns":
        return _signed_ms(r.change)
    if r.unit == "pct":
        return f"{r.change:+.1f} pp"
    return f"{r.change:+,.1f}"


def _table(title: str, rows: list[Row], counts: bool, width: int, status: Any = None) -> Table:
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    name_w = max(16, min(70, width - (70 if counts else 46)))
    t.add_column("name", overflow="ellipsis", no_wrap=True, max_width=name_w)
    for c in ("before", "after", "change", *(("n before", "n after") if counts else ())):
        t.add_column(c, justify="right", no_wrap=True, min_width=8)
    t.add_column("status", no_wrap=True, min_width=8)
    for r in rows:
        cells = [
            fmt.clean(r.name, 120),
            value_text(r, r.before),
            value_text(r, r.after),
            change_text(r),
        ]
        if counts:
            cells += [_count(r.before_count), _count(r.after_count)]
        t.add_row(*cells, (status or (lambda x: x.status))(r))
    return t


def _count(v: float | None) -> str:
    return "—" if v is None else f"{v:,.1f}".removesuffix(".0")


def print_text(out: TextIO, d: Diff, width: int | None = None, rows: int = TEXT_ROWS) -> None:
    con = Console(
        file=out, width=width, highlight=False, markup=False, emoji=False, soft_wrap=False
    )
    con.print(Text(verdict_line(d)))
    for why in d.reasons:
        con.print(Text(f"  {SHORT[why[0]]}: {_signed_ms(why[1])} per step ({why[2]})"))
    con.print(Text(f"before: {d.before.path} — {_side_text(d.before)}"))
    con.print(Text(f"after:  {d.after.path} — {_side_text(d.after)}"))
    for n in d.notes:
        con.print(Text(f"note: {n}"))
    scope = "per steady step" if d.per_step else "whole report totals"
    con.print()
    con.print(_table("step and budget (mean per steady step)", d.budget, False, con.width))
    for title, section in (("kernels", d.kernels), ("memcpy/memset by kind and size", d.copies),
                           ("CUDA API", d.api)):  # fmt: skip
        con.print()
        con.print(_table(f"{title} ({scope}; largest changes)", section[:rows], True, con.width))
        apart = [r for r in section[rows:] if r.status in ("appeared", "vanished")]
        if apart:
            con.print(Text(f"  and {len(apart)} more names that appeared or vanished"))
    con.print()
    con.print(
        _table("findings (saving as % of step time)", d.findings, False, con.width, finding_status)
    )


def _side_text(s: Any) -> str:
    gpus = ", ".join(s.gpus) or "GPU unknown"
    if not s.n_steps:
        return f"{gpus}; no steady steps"
    where = f", in {s.sample.text()}" if s.sample is not None else ""
    return f"{gpus}; {s.n_steps} steady steps from {s.method}{where}"


def csv_rows(d: Diff) -> list[list[Any]]:
    out: list[list[Any]] = [[
        "verdict", d.verdict, verdict_line(d), "ns", d.before.median_ns or None,
        d.after.median_ns or None, d.change_ns, _r(d.change_pct), None, None, d.verdict,
    ]]  # fmt: skip
    for r in d.rows():
        j = r.to_json()
        status = finding_status(r) if r.section == "findings" else r.status
        out.append([*(j[k] for k in CSV_HEADER[:-1]), status])
    return out


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


# -- markdown ----------------------------------------------------------------------------
def _md(text: str, limit: int | None = 120) -> str:
    s = fmt.clean(text, limit)
    for ch in "\\`*_[]<>|#":
        s = s.replace(ch, "\\" + ch)
    return s


def markdown(d: Diff, rows: int = TEXT_ROWS, max_chars: int | None = None) -> str:
    """`diff --format markdown`: the verdict, the budget bars of both sides as text and the
    parts' changes, then the sections (findings, kernels, copies, API calls), the lower ones
    left out first under `max_chars`."""
    title = f"## tuiperf diff: {_md(d.before.path)} → {_md(d.after.path)}\n\n"
    verdict = f"**Verdict:** {_md(verdict_line(d).removeprefix('verdict: '), None)}\n\n"
    sides = "".join(
        f"- {what}: {_md(s.path)} — {_md(_side_text(s), None)}\n"
        for what, s in (("before", d.before), ("after", d.after))
    )
    notes = "".join(f"- note: {_md(n, None)}\n" for n in d.notes)
    bars = _md_bars(d)
    heads = [title + verdict + sides + notes + "\n" + bars, title + verdict + bars,
             title + verdict]  # fmt: skip
    scope = "per steady step" if d.per_step else "whole report totals"
    sections = [
        ("Step and budget (mean per steady step)", d.budget, ""),
        ("Findings (saving as % of step time; id: the finding)", d.findings, "id"),
        (f"Kernels ({scope}; largest changes)", d.kernels[:rows], ""),
        (f"Memcpy/memset by kind and size ({scope})", d.copies[:rows], ""),
        (f"CUDA API ({scope})", d.api[:rows], ""),
    ]
    items = [_md_rows(t, r, key) for t, r, key in sections if r]

    def dropped(n: int) -> str:
        return (
            f"*{fmt.plural(n, 'lower section')} left out to stay within {max_chars:,} "
            "characters; `tuiperf diff` without --max-chars shows all.*\n\n"
        )

    return fit(heads, items, dropped, (), max_chars)


def _md_bars(d: Diff) -> str:
    from tuiperf.analysis.budget.step_budget import PARTS, Parts

    lines = []
    for what, side in (("before", "before"), ("after", "after")):
        ns = {p: 0 for p in PARTS}
        for r in d.budget:  # a part's row: named as it is shown, its part in `detail`
            if r.section == "budget" and r.detail in ns:
                ns[r.detail] = round(getattr(r, side) or 0)
        wall = sum(ns.values())
        if wall > 0:
            bar, legend = text_bar(Parts(wall, ns)).split("\n")
            lines.append(f"{what:<6} {bar}\n       {legend}")
    return "```\n" + "\n".join(lines) + "\n```\n\n" if lines else ""


def _code(text: str) -> str:
    """A Markdown code span (backslashes are not escapes inside one: no backticks either)."""
    return "`" + fmt.clean(text, 120).replace("`", "'") + "`"


def _md_rows(title: str, rows: list[Row], key: str) -> str:
    """A section: its rows' before, after, change and status (`key` names the first column)."""
    counts = any(r.before_count is not None or r.after_count is not None for r in rows)
    head = ["id" if key else "name", "before", "after", "change"]
    head += ["n before", "n after"] if counts else []
    out = f"### {title}\n\n| " + " | ".join(head) + " | status |\n"
    out += "|:---|" + "---:|" * (len(head) - 1) + ":---|\n"
    for r in rows:
        name = _code(r.name) if key else _md(r.name)
        cells = [name, value_text(r, r.before), value_text(r, r.after), change_text(r)]
        if counts:
            cells += [_count(r.before_count), _count(r.after_count)]
        status = finding_status(r) if r.section == "findings" else r.status
        out += "| " + " | ".join(cells) + f" | {status} |\n"
    return out + "\n"
