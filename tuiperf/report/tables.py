"""Rich tables for the headless commands. Names from reports are data, never markup."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Literal, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tuiperf.model import fmt
from tuiperf.report.plain import for_text, unbounded

if TYPE_CHECKING:
    from tuiperf.model.ncu.link_facts import LinkFacts
    from tuiperf.model.ncu.metrics import KernelMetrics
    from tuiperf.summaries.rows import ReportRows

_NAME_LIMIT = 200


def make_console(out: TextIO, width: int | None = None) -> Console:
    """A console for `out`: its terminal's width (or `width`); a pipe or a file gets lines
    that neither wrap nor end in spaces (report.plain)."""
    stream, width = for_text(out, width)
    return Console(
        file=stream, width=width, highlight=False, markup=False, emoji=False, soft_wrap=False
    )


def cell(value: object, kind: str, header: str, limit: int | None = _NAME_LIMIT) -> Text:
    if value is None:
        return Text("")
    if kind == "str":
        return Text(fmt.clean(str(value), limit))
    if kind == "pct":
        return Text(fmt.percent(float(value)))  # type: ignore[arg-type]
    if "(ns)" in header:
        return Text(fmt.duration(value))  # type: ignore[arg-type]
    if "(MB" in header:
        return Text(fmt.size(float(value) * 1e6))  # type: ignore[arg-type]
    if kind == "int":
        return Text(fmt.count(int(value)))  # type: ignore[call-overload]
    return Text(f"{float(value):,.1f}")  # type: ignore[arg-type]


#: columns dropped first when the terminal is narrow (the op summary's averages and
#: GPU total last: they follow from the columns kept)
_OPTIONAL = ("stddev_ns", "min_ns", "max_ns", "med_ns", "stddev_mb", "min_mb", "max_mb", "med_mb",
             "avg_total_ns", "avg_self_ns", "gpu_total_ns")  # fmt: skip
_NAME_MIN = 24


def _label(header: str) -> str:
    return header.replace(" (ns)", "").replace(" (MB)", "").replace("Time (%)", "Time")


def stats_table(
    table: ReportRows, top: int = 20, title: str | None = None, width: int = 120
) -> Table:
    """The report as a Rich table: numbers sized to fit, the name column takes the rest
    (for a pipe, report.plain: as wide as its longest name, none cut)."""
    n = table.num_rows if not top else min(top, table.num_rows)
    head = table.head(n)
    columns = list(table.columns)
    last = columns[-1].key
    piped = unbounded(width)
    limit = None if piped else _NAME_LIMIT
    widths = {
        c.key: max(
            [len(_label(c.header))]
            + [cell(r[c.key], c.fmt, c.header, limit).cell_len for r in head]
        )
        for c in columns
        if c.key != last
    }
    for key in _OPTIONAL:
        if sum(widths.values()) + 3 * len(columns) + _NAME_MIN <= width:  # 3: padding, rule
            break
        if key in widths:
            widths.pop(key)
            columns = [c for c in columns if c.key != key]
    t = Table(
        title=Text(fmt.clean(title)) if title else None,
        title_justify="left",
        header_style="bold",
        expand=not piped,
        pad_edge=False,
        box=box.SIMPLE_HEAD,
    )
    for c in columns:
        if c.key == last and piped:
            t.add_column(_label(c.header), no_wrap=True)
        elif c.key == last:
            t.add_column(_label(c.header), overflow="ellipsis", no_wrap=True, ratio=1, min_width=8)
        else:
            just: Literal["left", "right"] = "left" if c.fmt == "str" else "right"
            t.add_column(_label(c.header), justify=just, no_wrap=True, width=widths[c.key])
    for row in head:
        t.add_row(*[cell(row[c.key], c.fmt, c.header, limit) for c in columns])
    return t


def print_stats(
    out: TextIO,
    table: ReportRows,
    top: int = 20,
    width: int | None = None,
    title: str | None = None,
) -> None:
    console = make_console(out, width)
    if table.num_rows == 0:
        console.print(Text(f"{title or table.report}: no rows (the report has no such events)"))
        return
    console.print(stats_table(table, top, title, width=console.width))


def print_info(console: Console, info: dict[str, object]) -> None:
    def line(label: str, value: object) -> None:
        # a long value wraps under itself (a hanging indent), not under the labels
        width = max(console.width - 12, 20)
        parts = textwrap.wrap(fmt.clean(str(value)), width, break_on_hyphens=False) or [""]
        console.print(Text.assemble((f"{label:<12}", "bold"), parts[0]), soft_wrap=True)
        for part in parts[1:]:
            console.print(Text(" " * 12 + part), soft_wrap=True)

    line("source", info["source"])
    version = info["tool_version"] or ("version unknown" if info.get("reader_version") else "")
    line("format", f"{info['format']} · {info['tool']} {version}".strip())
    if info.get("reader_version"):
        line("reader", f"ncu_report {info['reader_version']}")
    for d in info["devices"] or []:  # type: ignore[attr-defined]
        parts = [f"{d['device']}: {d.get('name') or 'unknown GPU'}"]
        if d.get("sm_count"):
            parts.append(f"{d['sm_count']} SMs")
        if d.get("total_memory"):
            parts.append(fmt.size(d["total_memory"]))
        line("device", " · ".join(parts))
    for p in info["processes"]:  # type: ignore[attr-defined]
        n = sum(t["pid"] == p["pid"] for t in info["threads"])  # type: ignore[attr-defined]
        line("process", f"{p['pid']} {p['name']} · {n} named threads")
    rng = info.get("time_range_ns")
    if rng:
        lo, hi = int(rng[0]), int(rng[1])  # type: ignore[index]
        line("time range", f"{fmt.timestamp(lo)} – {fmt.timestamp(hi)} ({fmt.duration(hi - lo)})")
    if info.get("capture"):
        label = "sections" if info.get("tool") == "Nsight Compute" else "traced"
        line(label, ", ".join(info["capture"]))  # type: ignore[arg-type]
    rows = info["rows"]
    line("rows", ", ".join(f"{k} {v:,}" for k, v in rows.items() if v))  # type: ignore[attr-defined]
    seen: set[str] = set()
    for d in info.get("diagnostics") or []:  # type: ignore[attr-defined]
        short = fmt.clean(d, 100)
        if short not in seen:
            seen.add(short)
            line("note", short)
    cache = info.get("cache")
    line(
        "cache",
        f"{cache} ({'reused' if info.get('from_cache') else 'written now'})"
        if cache
        else "not cached (--no-cache)",
    )


def print_link(console: Console, facts: LinkFacts, km: KernelMetrics, width: int = 60) -> None:
    """How the ncu results of `km` link to the trace's launches (`LinkFacts`)."""
    console.print(Text.assemble(("link        ", "bold"), fmt.clean(facts.summary_line())))
    t = Table(box=None, pad_edge=False, header_style="bold", show_edge=False)
    t.add_column("ncu ID", justify="right", no_wrap=True)
    t.add_column("Kernel", overflow="ellipsis", no_wrap=True, max_width=width)
    t.add_column("Launches", justify="right", no_wrap=True)
    t.add_column("Profiled at", justify="right", no_wrap=True)
    t.add_column("Matched by", overflow="fold")
    for kid in km.kernel_ids():
        k = km.kernel(kid)
        name = Text(fmt.clean(k.name or k.display_name or "", 200))
        link = facts.kernels.get(kid)
        if link is None:
            t.add_row(str(kid), name, "0", "", Text("unmatched: no launch in the trace"))
            continue
        t.add_row(str(kid), name, f"{link.launches:,}", link.profiled_at(), Text(link.match_short))
    console.print(t)
    if facts.unmatched_nsys:
        console.print(
            Text(f"{len(facts.unmatched_nsys):,} kernel names of the trace have no ncu result")
        )
