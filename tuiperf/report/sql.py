"""Query results as text: a terminal table and a Markdown table (`tuiperf sql`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from rich import box
from rich.table import Table
from rich.text import Text

from tuiperf.model import fmt
from tuiperf.report.tables import make_console

if TYPE_CHECKING:
    import pyarrow as pa

_CUT = 200  # characters of a text cell (names are data: cleaned, never markup)


def cell_text(v: object) -> str:
    """A value as the table shows it: raw numbers (ns stay ns), floats without noise."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format(v, ".6f").rstrip("0").rstrip(".") if v == v else "NaN"
    return fmt.clean(str(v), _CUT)


def rows(table: pa.Table) -> list[tuple[object, ...]]:
    """The rows as tuples (two columns may share a name: `SELECT a, a`)."""
    return list(zip(*(c.to_pylist() for c in table.columns)))


def _numeric(t: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t))


def print_table(out: TextIO, table: pa.Table, width: int | None = None) -> None:
    """Numbers never wrap; text folds to fit a terminal. Into a pipe or a file (no
    terminal, no `width`), the table is as wide as its cells."""
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    body = rows(table)
    needed = 0  # the numbers' widths, and a little for each text column
    for i, f in enumerate(table.schema):
        if _numeric(f.type):
            wide = max([len(f.name), *(len(cell_text(r[i])) for r in body)])
            t.add_column(f.name, justify="right", no_wrap=True, min_width=wide)
            needed += wide + 2
        else:
            t.add_column(f.name, overflow="fold")
            needed += 10
    for row in body:
        t.add_row(*(Text(cell_text(v)) for v in row))
    console = make_console(out, width)
    if (width is None and not console.is_terminal) or console.width < needed:
        console = make_console(out, 100_000)  # too wide to fold: nothing is cut off
    console.print(t)


def md_cell(v: object) -> str:
    """A Markdown table cell: `|` escaped, no line breaks."""
    return cell_text(v).replace("\\", "\\\\").replace("|", "\\|")


def write_markdown(out: TextIO, table: pa.Table) -> None:
    names = table.column_names
    out.write("| " + " | ".join(md_cell(n) for n in names) + " |\n")
    align = ("---:" if _numeric(f.type) else ":---" for f in table.schema)
    out.write("|" + "|".join(align) + "|\n")
    for row in rows(table):
        out.write("| " + " | ".join(md_cell(v) for v in row) + " |\n")


def print_schema(out: TextIO, table: pa.Table, width: int | None = None) -> None:
    """`--schema` as text: per schema and view, what it is, then its columns."""
    con = make_console(out, width)
    last = None
    cols = [c.to_pylist() for c in table.select(["schema", "view", "about"]).columns]
    names, types, units = (table[c].to_pylist() for c in ("column", "type", "unit"))
    for i, (sch, view, about) in enumerate(zip(*cols)):
        if (sch, view) != last:
            title = view if sch == "main" else f"{sch}.{view}"
            con.print(Text(f"\n{title}: {about}", style="bold"))
            last = (sch, view)
        unit = f" ({units[i]})" if units[i] else ""
        con.print(Text(f"  {names[i]:<22} {types[i]}{unit}"))
