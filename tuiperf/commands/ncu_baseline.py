"""`tuiperf ncu A.ncu-rep --baseline B.ncu-rep`: each kernel of A against its kernel in B,
metric by metric (both values, the difference and the difference in percent)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.table import Table

    from tuiperf.model.ncu.baseline import KernelPair, MetricDelta
    from tuiperf.model.ncu.metrics import KernelMetrics

CSV_HEADER = [
    "ID",
    "Kernel Name",
    "Baseline ID",
    "Baseline Kernel Name",
    "Match",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Baseline Value",
    "Metric Value",
    "Difference",
    "Difference %",
    "Metric ID",
]


def pairs_for(current: KernelMetrics, baseline: KernelMetrics, ids: list[int]) -> list[KernelPair]:
    from tuiperf.model.ncu.baseline import match_kernels

    chosen = set(ids)
    return [p for p in match_kernels(current, baseline) if p.kernel_id in chosen]


def _deltas(
    current: KernelMetrics, baseline: KernelMetrics, p: KernelPair, details: str
) -> list[MetricDelta]:
    from tuiperf.model.ncu.baseline import compare

    if p.baseline_id is None:
        return []
    return compare(current, p.kernel_id, baseline, p.baseline_id, details)


def csv_rows(
    current: KernelMetrics, baseline: KernelMetrics, pairs: list[KernelPair], details: str
) -> list[list[Any]]:
    from tuiperf.model.ncu.metrics import format_exact

    rows = []
    for p in pairs:
        name = current.kernel(p.kernel_id).ncu_name
        bname = "" if p.baseline_id is None else baseline.kernel(p.baseline_id).ncu_name
        head = [p.kernel_id, name, "" if p.baseline_id is None else p.baseline_id, bname, p.match]
        for d in _deltas(current, baseline, p, details):
            b, c = d.baseline, d.current
            rows.append(
                [
                    *head,
                    d.section_name,
                    d.label,
                    d.unit,
                    "" if b is None else format_exact(b.value, b.text),
                    "" if c is None else format_exact(c.value, c.text),
                    "" if d.difference is None else format_exact(d.difference),
                    "" if d.percent is None else format_exact(d.percent),
                    d.name or "",
                ]
            )
    return rows


def write_csv(
    out: TextIO,
    current: KernelMetrics,
    baseline: KernelMetrics,
    pairs: list[KernelPair],
    details: str,
) -> None:
    from tuiperf.export import write_csv as write

    write(out, CSV_HEADER, csv_rows(current, baseline, pairs, details))


def write_json(
    out: TextIO,
    current: KernelMetrics,
    baseline: KernelMetrics,
    pairs: list[KernelPair],
    details: str,
) -> None:
    from tuiperf.export import write_json as write

    kernels = []
    for p in pairs:
        rows = [
            {
                "section": d.section_name,
                "metric": d.label,
                "metric_id": d.name,
                "unit": d.unit,
                "baseline": None if d.baseline is None else d.baseline.value,
                "value": None if d.current is None else d.current.value,
                "difference": d.difference,
                "difference_pct": d.percent,
            }
            for d in _deltas(current, baseline, p, details)
        ]
        kernels.append(
            {"id": p.kernel_id, "baseline_id": p.baseline_id, "match": p.match, "metrics": rows}
        )
    doc = {
        "source": current.meta.get("source"),
        "baseline": baseline.meta.get("source"),
        "kernels": kernels,
    }
    write(out, doc)


def _shown(v: float | None, unit: str) -> str:
    from tuiperf.model.ncu.metrics import display_unit, format_value

    if v is None:
        return ""
    value, u = display_unit(v, unit)
    return f"{format_value(value)} {u}".strip()


def _table(deltas: list[MetricDelta], section: str) -> Table:
    from rich.table import Table
    from rich.text import Text

    from tuiperf.model import fmt

    t = Table(title=Text(fmt.clean(section, 100), style="bold"), title_justify="left",
              header_style="bold", box=None, pad_edge=False, show_edge=False)  # fmt: skip
    t.add_column("Metric", overflow="fold", ratio=3)
    for head in ("Baseline", "Current", "Diff", "Diff %"):
        t.add_column(head, justify="right", overflow="fold", ratio=1)
    for d in deltas:
        b, c = d.baseline, d.current
        bs = "-" if b is None else (b.text or _shown(b.value, d.unit))
        cs = "-" if c is None else (c.text or _shown(c.value, d.unit))
        diff = "" if d.difference is None else _shown(d.difference, d.unit)
        pct = "" if d.percent is None else f"{d.percent:+.2f}%"
        sign = 0 if d.difference is None else (d.difference > 0) - (d.difference < 0)
        style = {1: "green", -1: "red"}.get(sign, "dim")
        t.add_row(Text(fmt.clean(d.label, 120)), Text(bs), Text(cs), Text(diff, style),
                  Text(pct, style))  # fmt: skip
    return t


def print_tables(
    out: TextIO,
    current: KernelMetrics,
    baseline: KernelMetrics,
    pairs: list[KernelPair],
    details: str,
    width: int | None = None,
) -> None:
    from rich.text import Text

    from tuiperf.model import fmt
    from tuiperf.report.tables import make_console

    console = make_console(out, width)
    console.print(Text(f"baseline: {baseline.meta.get('source') or '?'}", style="dim"))
    for p in pairs:
        k = current.kernel(p.kernel_id)
        console.print(Text(""))
        console.print(Text(f"[{k.id}] {fmt.clean(k.name or k.display_name, 120)}", "bold"))
        if p.baseline_id is None:
            console.print(Text(p.note, style="yellow"))
            continue
        b = baseline.kernel(p.baseline_id)
        line = f"baseline [{b.id}] {fmt.clean(b.name or b.display_name, 120)} ({p.match})"
        console.print(Text(line))
        if p.note:
            console.print(Text(f"note: {p.note}", style="yellow"))
        deltas = _deltas(current, baseline, p, details)
        for section in dict.fromkeys(d.section_name for d in deltas):
            console.print(Text(""))
            console.print(_table([d for d in deltas if d.section_name == section], section))
