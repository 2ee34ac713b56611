"""`tuiperf ncu REPORT`: Nsight Compute sections, metrics and rule results per kernel."""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tuiperf.commands.base import (
    Command,
    add_cache_args,
    add_second_report,
    end_progress,
    open_options,
    timeline_and_ncu,
)
from tuiperf.commands.width import width
from tuiperf.errors import BadReportError, UsageError

if TYPE_CHECKING:  # the parser is built for every command: rich and pyarrow load on use
    from rich.table import Table
    from rich.text import Text

    from tuiperf.model.ncu.link_facts import LinkFacts
    from tuiperf.model.ncu.metrics import Kernel, KernelMetrics, Section

#: a kernel and the sections shown for it
View = tuple[int, list["Section"]]

#: the columns of `--format csv`: ncu's details page spelling, then the metric's own name
CSV_HEADER = [
    "ID",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
    "Metric ID",
]


def prepare(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "report_path",
        metavar="REPORT",
        type=Path,
        help="an .ncu-rep, or an `ncu --csv --page details|raw` export",
    )
    add_second_report(p, "a timeline report (nsys, torch.profiler) the kernels ran in")
    p.add_argument(
        "-k",
        "--kernel",
        metavar="REGEX",
        help="only kernels whose name (short, demangled or mangled) matches",
    )
    p.add_argument(
        "--id",
        type=int,
        action="append",
        metavar="N",
        dest="ids",
        help="only the kernel with this ncu ID (repeatable)",
    )
    p.add_argument(
        "-s",
        "--section",
        action="append",
        metavar="NAME",
        help="only this section, by identifier or display name (repeatable)",
    )
    p.add_argument("--rules", action="store_true", help="only the rule results")
    _view_options(p)
    _output_options(p)
    add_cache_args(p)


def _view_options(p: argparse.ArgumentParser) -> None:
    """The charts and views beside the sections: roofline, memory chart, source, baseline."""
    p.add_argument(
        "--roofline",
        action="store_true",
        help="the roofline chart of the selected kernels (text, log-log; --width/--height)",
    )
    p.add_argument(
        "--memory-chart",
        action="store_true",
        help="the memory chart of each selected kernel: L1/TEX, shared, L2, DRAM, system",
    )
    p.add_argument(
        "--source",
        action="store_true",
        help="source hot spots of each selected kernel: source lines and SASS with the most "
        "warp-stall samples, and the rules that point at instructions (.ncu-rep only)",
    )
    p.add_argument("--height", type=int, metavar="ROWS", default=24,
                   help="chart height for --roofline (default 24)")  # fmt: skip
    p.add_argument(
        "--baseline",
        metavar="BASELINE",
        type=Path,
        help="compare each kernel with its kernel in this other .ncu-rep (or ncu CSV): "
        "matched by name, else by launch order; both values and the difference per metric",
    )


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--details",
        choices=("header", "all"),
        default="header",
        help="header metrics only, as ncu prints them (default), or all",
    )
    p.add_argument("-f", "--format", choices=("table", "csv", "json"), default="table")
    p.add_argument(
        "--csv", dest="format", action="store_const", const="csv", help="same as --format csv"
    )
    p.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    p.add_argument("--width", type=width, metavar="COLS", help="table width (default: terminal)")


def run(args: argparse.Namespace) -> int:
    from tuiperf.export import open_output
    from tuiperf.load.ncu.open import open_ncu

    timeline, ncu = timeline_and_ncu(args.report_path, args.second_path)
    if ncu is None:
        raise BadReportError(f"{args.report_path}: not an Nsight Compute report")
    km = open_ncu(ncu, open_options(args))
    facts = _link(timeline, km, args)
    end_progress(args)
    ids = select_kernels(km, args.kernel, args.ids)
    if args.baseline is not None:
        return _run_baseline(args, km, ids)
    if args.roofline or args.memory_chart or args.source:
        return _run_views(args, km, ids, ncu)
    sections = _section_filter(km, args.section)
    views = [(kid, _sections(km, kid, args, sections)) for kid in ids]
    if not ids:
        print("note: no kernel matches the selection", file=sys.stderr)
    with open_output(args.output) as out:
        if args.format == "csv":
            write_csv(out, km, views)
        elif args.format == "json":
            write_json(out, km, views, facts)
        else:
            print_tables(out, km, views, args.width, facts)
    return 0


def _run_baseline(args: argparse.Namespace, km: KernelMetrics, ids: list[int]) -> int:
    from tuiperf.commands import ncu_baseline as nb
    from tuiperf.export import open_output
    from tuiperf.load.ncu.open import open_ncu

    base = open_ncu(args.baseline, open_options(args))
    end_progress(args)
    pairs = nb.pairs_for(km, base, ids)
    if not ids:
        print("note: no kernel matches the selection", file=sys.stderr)
    with open_output(args.output) as out:
        if args.format == "csv":
            nb.write_csv(out, km, base, pairs, args.details)
        elif args.format == "json":
            nb.write_json(out, km, base, pairs, args.details)
        else:
            nb.print_tables(out, km, base, pairs, args.details, args.width)
    return 0


def _run_views(args: argparse.Namespace, km: KernelMetrics, ids: list[int], path: Path) -> int:
    """--roofline, --memory-chart, --source: text views, one after the other."""
    import shutil

    from tuiperf.export import open_output

    width = args.width or min(shutil.get_terminal_size((100, 24)).columns, 160)
    if not ids:
        print("note: no kernel matches the selection", file=sys.stderr)
        return 0
    blocks: list[list[str]] = []
    if args.roofline:
        from tuiperf.analysis.ncu.roofline import rooflines
        from tuiperf.report.roofline import plot

        names = {k: km.kernel(k).name or km.kernel(k).display_name for k in ids}
        blocks.append(plot(rooflines(km, ids), names, width, max(args.height, 12)))
    if args.memory_chart:
        from tuiperf.report.memory import chart_lines

        blocks += [chart_lines(km, k, width) for k in ids]
    if args.source:
        from tuiperf.load.ncu.source import read_hot_spots
        from tuiperf.report.source import source_lines_for

        blocks += source_lines_for(read_hot_spots(path, ids), width)
    with open_output(args.output) as out:
        for i, lines in enumerate(blocks):
            if i:
                out.write("\n")
            out.write("\n".join(lines) + "\n")
    return 0


def _link(timeline: Path | None, km: KernelMetrics, args: argparse.Namespace) -> LinkFacts | None:
    """The LinkFacts of `km` in the timeline report, when one was given."""
    if timeline is None:
        return None
    from tuiperf.load.open import open_trace
    from tuiperf.model.ncu.link_facts import link_facts

    return link_facts(open_trace(timeline, open_options(args)), km)


# --- selection -----------------------------------------------------------------------------


def select_kernels(km: KernelMetrics, pattern: str | None, ids: list[int] | None) -> list[int]:
    try:
        chosen = km.matching(pattern)
    except re.error as e:
        raise UsageError(f"--kernel {pattern!r}: not a regular expression ({e})") from e
    if ids:
        unknown = [i for i in ids if i not in set(km.kernel_ids())]
        if unknown:
            raise UsageError(
                f"--id {unknown[0]}: no such kernel; the report has IDs "
                f"{km.kernel_ids()[0]}–{km.kernel_ids()[-1]}"
            )
        chosen = [k for k in chosen if k in set(ids)]
    return chosen


def _section_filter(km: KernelMetrics, wanted: list[str] | None) -> set[str] | None:
    """Section ids the user asked for (by id or display name, case-insensitive)."""
    if not wanted:
        return None
    names = km.section_names()
    out = set()
    for w in wanted:
        hits = {
            sid
            for sid, name in names.items()
            if w.casefold() in (sid.casefold(), (name or "").casefold())
        }
        if not hits:
            known = ", ".join(sorted(names)) or "none"
            raise UsageError(f"--section {w!r}: no such section in this report; it has: {known}")
        out |= hits
    return out


def _sections(
    km: KernelMetrics, kid: int, args: argparse.Namespace, only: set[str] | None
) -> list[Section]:
    from dataclasses import replace

    secs = km.sections(kid, args.details)
    if only is not None:
        secs = [s for s in secs if s.id in only]
    if args.rules:
        secs = [replace(s, metrics=()) for s in secs if s.rules]
    return secs


# --- csv and json --------------------------------------------------------------------------


def _dims(d: tuple[int, int, int] | None) -> str:
    return "" if d is None else f"({d[0]}, {d[1]}, {d[2]})"


def _kernel_cells(k: Kernel) -> list[Any]:
    row = k.row
    return [
        k.id,
        k.ncu_name,
        _str(row.get("context")),
        _str(k.stream),
        _dims(k.block),
        _dims(k.grid),
        _str(k.device),
        row.get("cc") or "",
    ]


def _str(v: Any) -> str:
    return "" if v is None else str(v)


def csv_rows(km: KernelMetrics, views: list[View]) -> list[list[Any]]:
    """The long table: one row per kernel × section × metric, then the section's rules."""
    from tuiperf.model.ncu.metrics import format_exact

    rows = []
    for kid, secs in views:
        head = _kernel_cells(km.kernel(kid))
        for s in secs:
            for m in s.metrics:
                rows.append(
                    [
                        *head,
                        s.name,
                        m.title,
                        m.unit,
                        format_exact(m.value, m.text),
                        "",
                        "",
                        "",
                        "",
                        "",
                        m.name or "",
                    ]
                )
            for r in s.rules:
                rows.append(
                    [
                        *head,
                        s.id,
                        "",
                        "",
                        "",
                        r.rule_id,
                        r.code,
                        r.message,
                        r.speedup_type or "",
                        format_exact(r.speedup),
                        "",
                    ]
                )
    return rows


def write_csv(out: TextIO, km: KernelMetrics, views: list[View]) -> None:
    from tuiperf.export import write_csv as write

    write(out, CSV_HEADER, csv_rows(km, views))


def _num(v: float | None) -> float | None:
    return None if v is None or math.isnan(v) or math.isinf(v) else v


def kernel_json(km: KernelMetrics, kid: int, secs: list[Section]) -> dict[str, Any]:
    k = km.kernel(kid)
    row = {key: v for key, v in k.row.items() if not key.startswith(("grid_", "block_", "nvtx"))}
    row.update(
        grid=list(k.grid) if k.grid else None,
        block=list(k.block) if k.block else None,
        nvtx_push_pop=k.row.get("nvtx_push_pop") or [],
        nvtx_start_end=k.row.get("nvtx_start_end") or [],
        ncu_name=k.ncu_name,
    )
    row["sections"] = [
        {
            "id": s.id,
            "name": s.name,
            "order": s.order,
            "parent_id": s.parent_id,
            "metrics": [
                {
                    "name": m.name,
                    "label": m.label,
                    "unit": m.unit,
                    "value": m.text if m.value is None else _num(m.value),
                    "part": m.part,
                }
                for m in s.metrics
            ],
            "rules": [
                {
                    "rule_id": r.rule_id,
                    "rule_name": r.rule_name,
                    "type": r.type,
                    "title": r.title,
                    "message": r.message,
                    "speedup_type": r.speedup_type,
                    "speedup": _num(r.speedup),
                    "focus": [
                        {
                            "metric": f.metric,
                            "value": _num(f.value),
                            "severity": f.severity,
                            "info": f.info,
                        }
                        for f in r.focus
                    ],
                }
                for r in s.rules
            ],
        }
        for s in secs
    ]
    return row


def write_json(
    out: TextIO, km: KernelMetrics, views: list[View], facts: LinkFacts | None = None
) -> None:
    from tuiperf.export import write_json as write

    meta = km.meta
    kernels = [kernel_json(km, kid, secs) for kid, secs in views]
    doc: dict[str, Any] = {"source": meta.get("source"), "format": meta.get("format")}
    if facts is not None:
        for k in kernels:
            link = facts.kernels.get(k["id"])
            k["nsys"] = link.as_json() if link is not None else None
        doc["link"] = {key: v for key, v in facts.as_json().items() if key != "kernels"}
    doc["kernels"] = kernels
    write(out, doc)


# --- table ---------------------------------------------------------------------------------

_RULE_STYLE = {"OPT": "yellow", "WRN": "red", "ERR": "bold red", "INF": "cyan"}


def _kernel_header(k: Kernel) -> list[Text]:
    from rich.text import Text

    from tuiperf.model import fmt

    title = Text.assemble(
        (f"[{k.id}] ", "bold"), (fmt.clean(k.name or k.display_name, 120), "bold")
    )
    facts = [
        f"grid {_dims(k.grid)}" if k.grid else "",
        f"block {_dims(k.block)}" if k.block else "",
        f"{k.registers} regs" if k.registers is not None else "",
        fmt.duration(k.duration_ns) if k.duration_ns is not None else "",
        f"device {k.device}" if k.device is not None else "",
        f"stream {k.stream}" if k.stream is not None else "",
    ]
    lines = [title]
    if k.ncu_name != k.name:  # spelled as ncu's own CSV pages spell it
        lines.append(Text(fmt.clean(k.ncu_name, 400), style="dim"))
    lines.append(Text(" · ".join(f for f in facts if f)))
    if k.nvtx:
        lines.append(Text("NVTX " + " > ".join(fmt.clean(n, 60) for n in k.nvtx)))
    return lines


def _launch_line(facts: LinkFacts, kid: int) -> Text:
    from rich.text import Text

    link = facts.kernels.get(kid)
    if link is None:
        return Text("nsys: unmatched (no launch of this kernel in the timeline)", style="yellow")
    at = link.profiled_at("?")
    return Text(f"nsys: {link.launches:,} launches; the profiled one at {at} ({link.match})")


def _metrics_table(s: Section) -> Table:
    from rich.table import Table
    from rich.text import Text

    from tuiperf.model import fmt

    t = Table(
        title=Text(fmt.clean(s.name, 100), style="bold"),
        title_justify="left",
        header_style="bold",
        pad_edge=False,
        expand=False,
        box=None,
        show_edge=False,
    )
    t.add_column("Metric", overflow="fold", ratio=3)
    t.add_column("Value", justify="right", overflow="fold", ratio=1)
    t.add_column("Unit", overflow="fold", no_wrap=False, ratio=1)
    for m in s.metrics:
        value, unit = m.display()
        t.add_row(Text(fmt.clean(m.title, 120)), Text(fmt.clean(value, 60)), Text(unit))
    return t


def _rules_grid(s: Section) -> Table:
    from rich.table import Table
    from rich.text import Text

    from tuiperf.model import fmt
    from tuiperf.model.ncu.metrics import speedup_words

    g = Table.grid(padding=(0, 1))
    g.add_column(width=3, no_wrap=True)
    g.add_column(overflow="fold")
    for r in s.rules:
        body = Text()
        if r.title:
            body.append(fmt.clean(r.title, 200), style="bold")
            body.append("\n")
        if r.speedup is not None:
            body.append(speedup_words(r) + "\n", style="italic")
        body.append(fmt.clean(r.message))
        g.add_row(Text(r.code, style=_RULE_STYLE.get(r.code, "")), body)
    return g


def print_tables(
    out: TextIO,
    km: KernelMetrics,
    views: list[View],
    width: int | None = None,
    facts: LinkFacts | None = None,
) -> None:
    from rich.text import Text

    from tuiperf.report.tables import make_console, print_link

    console = make_console(out, width)
    if facts is not None:
        print_link(console, facts, km)
        console.print(Text(""))
    for i, (kid, secs) in enumerate(views):
        if i:
            console.print(Text(""))
        for line in _kernel_header(km.kernel(kid)):
            console.print(line)
        if facts is not None:
            console.print(_launch_line(facts, kid))
        if not secs:
            console.print(Text("  (nothing selected for this kernel)", style="dim"))
        for s in secs:
            console.print(Text(""))
            if s.metrics:
                console.print(_metrics_table(s))
            else:
                console.print(Text(s.name, style="bold"))
            if s.rules:
                console.print(_rules_grid(s))


COMMAND = Command(
    name="ncu",
    help="Nsight Compute: sections, metrics and rule results per kernel",
    description="Show an Nsight Compute report (.ncu-rep, or an `ncu --csv --page details` or\n"
    "`--page raw` export): per kernel, the sections in ncu's order with their metrics,\n"
    "and ncu's rule results. `--format csv` writes the long table of ncu's details page\n"
    "(values in base units at full precision). `--baseline` compares with another report;\n"
    "`--roofline`, `--memory-chart` and `--source` draw ncu's charts and hot spots in text.\n\n"
    "examples:\n  tuiperf ncu run.ncu-rep --kernel gemm --section SpeedOfLight\n"
    "  tuiperf ncu run.ncu-rep --rules\n  tuiperf ncu run.ncu-rep --csv -o metrics.csv\n"
    "  tuiperf ncu after.ncu-rep --baseline before.ncu-rep --format csv\n"
    "  tuiperf ncu run.ncu-rep --roofline --width 80\n"
    "  tuiperf ncu run.ncu-rep --kernel triton --source --memory-chart",
    prepare=prepare,
    run=run,
)
