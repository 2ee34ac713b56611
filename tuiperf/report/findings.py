"""Findings as text (Rich, for people), Markdown (for a PR) and JSON (for tools).

Names come from reports anyone can write: they are cleaned of control characters and
printed as plain text, never as Rich markup; Markdown escapes its own specials."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TextIO

import pyarrow as pa
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tuiperf.analysis.findings import SCOPE_EVENTS, SOURCE_LABELS, AnalysisResult, Finding
from tuiperf.model import fmt
from tuiperf.report.mdfit import fit, text_bar
from tuiperf.report.plain import unbounded
from tuiperf.report.tables import make_console

_HIDDEN = ("table", "row")
_NAME_LIMIT = 120
_SEV_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}


def _cell(key: str, v: Any, limit: int | None = _NAME_LIMIT) -> str:
    if v is None:
        return ""
    if key == "start_ns" and isinstance(v, int | float):
        return fmt.timestamp(v)
    if key.endswith("_ns") and isinstance(v, int | float):
        return fmt.duration(v)
    if key == "bytes" and isinstance(v, int | float):
        return fmt.size(v)
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int):
        return f"{v:,}"
    return fmt.clean(str(v), limit)


def _columns(f: Finding) -> list[str]:
    cols = [c for c in f.evidence.rows.column_names if c not in _HIDDEN]
    return [c for c in cols if f.evidence.rows[c].null_count < len(f.evidence)]


def saving_text(f: Finding, basis: str = "") -> str:
    """'~12 ms (4.1%)', or with `basis` '~12 ms (4.1% of steady-state step time)'."""
    if f.est_saving_ns is None:
        return "—"
    of = f" of {basis.split(' (')[0]}" if basis else ""  # "(…)" says more than fits here
    pct = f" ({f.est_saving_pct:.2g}%{of})" if f.est_saving_pct is not None else ""
    return f"~{fmt.duration(f.est_saving_ns)}{pct}"


# -- text --------------------------------------------------------------------------------
def print_text(
    out: TextIO,
    result: AnalysisResult,
    rows: int = 5,
    top: int = 0,
    width: int | None = None,
    ascii_only: bool = False,
) -> None:
    con = make_console(out, width)  # a pipe: no wrapping, no padding, names whole
    con.print(
        Text(
            f"tuiperf analyze · {fmt.clean(result.source)} · profiled "
            f"{fmt.duration(result.profiled_ns)} · {len(result.findings)} findings",
            style="bold",
        )
    )
    if result.budget is not None:
        from tuiperf.report.budget import renderable

        con.print()
        con.print(Padding(renderable(result.budget, 60, ascii_only), (0, 0, 0, 1)))
    if result.findings:
        con.print(
            Text(f"\nFindings by the share of {result.saving_basis} each can remove:", style="bold")
        )
    shown = result.findings if not top else result.findings[:top]
    for i, f in enumerate(shown, 1):
        con.print()
        _text_finding(con, i, f, rows, ascii_only, result.saving_basis)
    if len(shown) < len(result.findings):
        con.print(
            Text(
                f"\n{len(result.findings) - len(shown)} more findings; pass --top 0 for all",
                style="dim",
            )
        )
    _text_unlinked(con, result)
    con.print()
    con.print(_checks_line(result))


def _text_unlinked(con: Console, result: AnalysisResult) -> None:
    """ncu findings about kernels the timeline never ran: one line each, after the rest."""
    if not result.unlinked:
        return
    names = {f.kernel or "" for f in result.unlinked}
    con.print(
        Text(
            f"\nNsight Compute results with no launch in this timeline ({len(result.unlinked)} "
            f"findings on {len(names)} kernels; not ranked: they save none of its time):",
            style="bold",
        )
    )
    for f in result.unlinked:
        kernel = fmt.clean(f.kernel or "", _limit(con))
        con.print(Text(f"  {f.severity.word:<7} {fmt.clean(f.title)}  [{f.rule}] · {kernel}"))


def _limit(con: Console) -> int | None:
    """Names are cut to fit a terminal, never in a pipe or a file (report.plain)."""
    return None if unbounded(con.width) else _NAME_LIMIT


def _text_finding(
    con: Console, i: int, f: Finding, rows: int, ascii_only: bool, basis: str = ""
) -> None:
    sev = f.severity
    head = Text.assemble(
        (f"{i:>2}. ", "bold"),
        (f"{sev.glyph(ascii_only)} {sev.word.upper()}", _SEV_STYLE[sev.word]),
        "  ",
        (fmt.clean(f.title), "bold"),
        f"  [{f.rule}]",
    )
    con.print(head)
    # "events: 78 events · 78 events" says the count twice
    what = "" if f.scope.kind == SCOPE_EVENTS else f"{fmt.clean(f.scope.text(), _limit(con))} · "
    scope = (
        f"scope: {what}{fmt.plural(f.count, 'event')} · "
        f"est. saving {saving_text(f, basis)} · {SOURCE_LABELS.get(f.source, f.source)}"
    )
    # paragraphs wrap under their own indent, not at column 0
    con.print(Padding(Text(scope), (0, 0, 0, 4)))
    con.print(Padding(Text(fmt.clean(f.message)), (0, 0, 0, 4)))
    if f.fix.text:
        con.print(Padding(Text("fix: " + f.fix.text, style="green"), (0, 0, 0, 4)))
    for line in f.fix.snippet.splitlines():
        con.print(Text("      " + line, style="dim", no_wrap=True, overflow="ellipsis"))
    if rows and len(f.evidence):
        con.print(_evidence_table(f, rows, _limit(con)))


_TEXT_COLS = ("api", "name", "src_kind", "dst_kind", "mem_kind")


def _header(f: Finding, c: str) -> str:
    return f.evidence.headers.get(c, c).replace(" (ns)", "")


def _evidence_table(f: Finding, rows: int, limit: int | None = _NAME_LIMIT) -> Padding:
    cols = _columns(f)
    cells = [[_cell(c, r[c], limit) for c in cols] for r in f.evidence.head(rows)]
    t = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold", show_edge=False)
    for i, c in enumerate(cols):
        wide = c in _TEXT_COLS
        # numbers are never cut ("155.370…" hid the time): as wide as their widest cell
        need = max([len(_header(f, c)), *(len(row[i]) for row in cells)])
        t.add_column(
            _header(f, c),
            justify="left" if wide else "right",
            overflow="ellipsis",
            no_wrap=True,
            ratio=1 if c in ("api", "name") else None,
            min_width=None if wide else need,
        )
    for row in cells:
        t.add_row(*[Text(v) for v in row])
    more = len(f.evidence) - rows
    body = Group(t, Text(f"… {more:,} more rows", style="dim")) if more > 0 else t
    return Padding(body, (0, 0, 0, 6))


def _checks_line(result: AnalysisResult) -> Text:
    parts = []
    for c in result.checks:
        if c.status in ("skipped", "failed"):
            parts.append(f"{c.rule}: {c.status} ({fmt.clean(c.note)})")
    clean = [c.rule for c in result.checks if c.status == "clean"]
    text = f"rules with nothing to report: {', '.join(clean) or 'none'}"
    if parts:
        text += "\n" + "\n".join(parts)
    return Text(text, style="dim")


# -- markdown ----------------------------------------------------------------------------
def _md(text: str, limit: int | None = None) -> str:
    s = fmt.clean(text, limit)
    for ch in "\\`*_[]<>|#":
        s = s.replace(ch, "\\" + ch)
    return s


def write_markdown(
    out: TextIO, result: AnalysisResult, rows: int = 5, top: int = 0, max_chars: int | None = None
) -> None:
    out.write(markdown(result, rows, top, max_chars))


def markdown(
    result: AnalysisResult, rows: int = 5, top: int = 0, max_chars: int | None = None
) -> str:
    """The report for a PR or an agent: the verdict, the budget (its bar as text), then the
    findings with their ids, evidence and fix. With `max_chars`, never longer: the
    budget's table and the summary go first, then the lowest-ranked findings."""
    from tuiperf.analysis.ids import finding_ids

    ids = finding_ids(result.findings)
    title = f"## tuiperf analyze: {_md(result.source)}\n\n"
    verdict = _md_verdict(result, ids)
    profiled = f"Profiled {fmt.duration(result.profiled_ns)}; {len(result.findings)} findings.\n\n"
    budget = _md_budget(result) if result.budget is not None else ""
    bar = _md_bar(result) if result.budget is not None else ""
    summary = _md_summary(result, ids) if max_chars is None else ""
    heads = [title + profiled + verdict + budget + summary, title + verdict + bar, title + verdict]
    shown = result.findings if not top else result.findings[:top]
    items = [
        (_md_finding(i, f, ids[i - 1], rows, result.saving_basis),
         _md_finding(i, f, ids[i - 1], 0, result.saving_basis))
        for i, f in enumerate(shown, 1)
    ]  # fmt: skip

    def dropped(n: int) -> str:
        return (
            f"*{fmt.plural(n, 'lower-ranked finding')} left out to stay within "
            f"{max_chars:,} characters; `tuiperf analyze` without --max-chars shows all.*\n\n"
        )

    return fit(heads, items, dropped, _md_footers(result), max_chars)


def _md_verdict(result: AnalysisResult, ids: list[str]) -> str:
    if not result.findings:
        return "**Verdict:** nothing to fix: no rule found anything.\n\n"
    f = result.findings[0]
    worst = result.worst()
    return (
        f"**Verdict:** {fmt.plural(len(result.findings), 'finding')}, the worst "
        f"{worst.word if worst is not None else f.severity.word}; first: {_md(f.title)} "
        f"(`{ids[0]}`, est. saving {saving_text(f, result.saving_basis)}).\n\n"
    )


def _md_summary(result: AnalysisResult, ids: list[str]) -> str:
    if not result.findings:
        return ""
    out = "| # | severity | finding | est. saving | events | source |\n|---|---|---|---|---|---|\n"
    for i, f in enumerate(result.findings, 1):
        out += (
            f"| {i} | {f.severity.glyph()} {f.severity.word} | {_md(f.title)} (`{f.rule}`) | "
            f"{saving_text(f, result.saving_basis)} | {f.count:,} | "
            f"{SOURCE_LABELS.get(f.source, f.source)} |\n"
        )
    return out + "\n"


def _md_footers(result: AnalysisResult) -> list[str]:
    out = []
    if result.unlinked:
        text = "### Nsight Compute results with no launch in this timeline (not ranked)\n\n"
        for f in result.unlinked:
            text += f"- {f.severity.word}: {_md(f.title)} (`{f.rule}`) · {_md(f.kernel or '')}\n"
        out.append(text + "\n")
    clean = [c.rule for c in result.checks if c.status == "clean"]
    if clean:
        out.append(f"Nothing to report from: {', '.join(f'`{c}`' for c in clean)}.\n")
    return out


def _md_bar(result: AnalysisResult) -> str:
    from tuiperf.report import budget as bt

    b = result.budget
    return f"**{_md(bt.headline(b))}**\n\n```\n{text_bar(b.steady)}\n```\n\n"


def _md_budget(result: AnalysisResult) -> str:
    from tuiperf.analysis.budget.step_budget import LABELS, PARTS
    from tuiperf.report import budget as bt

    b = result.budget
    out = _md_bar(result) + "| part | total | % of steps | median/step |\n|---|---|---|---|\n"
    for p in PARTS:
        out += (
            f"| {LABELS[p]} | {fmt.duration(b.steady.ns[p])} | {b.steady.pct(p):.1f}% | "
            f"{fmt.duration(b.main.median[p])} |\n"
        )
    for line in bt.footnotes(b):
        out += f"\n{_md(line)}\n"
    return out + f"\nSavings are shares of {result.saving_basis}.\n\n"


def _md_finding(i: int, f: Finding, fid: str, rows: int, basis: str = "") -> str:
    from tuiperf.analysis.ids import evidence_ids

    out = f"### {i}. {f.severity.glyph()} {f.severity.word}: {_md(f.title)} (`{f.rule}`)\n\n"
    out += f"*id:* `{fid}` · *scope:* {_md(f.scope.text(), _NAME_LIMIT)} · "
    out += f"*est. saving:* {saving_text(f, basis)}\n\n"
    out += _md(f.message) + "\n\n"
    if f.fix.text:
        out += f"**Fix:** {_md(f.fix.text)}\n\n"
    if f.fix.snippet:
        out += "```python\n" + f.fix.snippet.replace("```", "'''") + "\n```\n\n"
    if rows and len(f.evidence):
        cols = _columns(f)
        eids = evidence_ids(f.evidence)
        out += "| id | " + " | ".join(_md(_header(f, c)) for c in cols) + " |\n"
        out += "|" + "---|" * (len(cols) + 1) + "\n"
        for eid, r in zip(eids, f.evidence.head(rows), strict=False):
            out += f"| `{eid}` | " + " | ".join(_md(_cell(c, r[c])) for c in cols) + " |\n"
        if len(f.evidence) > rows:
            out += f"\n… and {len(f.evidence) - rows:,} more rows.\n"
        out += "\n"
    return out


# -- json --------------------------------------------------------------------------------
def json_findings(result: AnalysisResult, rows: int | None = None) -> list[dict[str, Any]]:
    """Each finding's JSON with its stable `id` first, and an `id` on every evidence row."""
    from tuiperf.analysis.ids import finding_ids

    out = []
    for f, fid in zip(result.findings, finding_ids(result.findings), strict=True):
        j = {"id": fid, **f.to_json(max_rows=rows, evidence=False)}
        ev = f.evidence.rows
        j["evidence"] = EvidenceRows(ev if rows is None else ev.slice(0, rows))
        out.append(j)
    return out


class EvidenceRows(list):
    """Evidence rows as a list that JSON encodes row by row: each row `{"id": …, …}` is
    made while it is written, a batch at a time (a finding of 1M rows held 1M dicts, and
    `analyze --format json` of a real 1M-kernel capture peaked at 2.3 GiB). Only for
    encoding: its length and iteration are the rows', indexing is a plain list's."""

    BATCH = 4096

    def __init__(self, table: pa.Table) -> None:
        super().__init__()
        self.table = table

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def __bool__(self) -> bool:
        return self.table.num_rows > 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        from tuiperf.analysis.ids import table_ids

        for start in range(0, self.table.num_rows, self.BATCH):
            part = self.table.slice(start, self.BATCH)
            for e, r in zip(table_ids(part), part.to_pylist(), strict=True):
                yield {"id": e, **r}


def json_result(result: AnalysisResult, rows: int | None = None) -> dict[str, Any]:
    """`analyze --format json`: the step budget (null without steps) and the findings."""
    return {
        "source": result.source,
        "profiled_ns": result.profiled_ns,
        "saving_basis": result.saving_basis,
        "sample": None if result.sample is None else result.sample.to_json(),
        "budget": None if result.budget is None else result.budget.to_json(),
        "findings": json_findings(result, rows),
        "unlinked_ncu_findings": [f.to_json(max_rows=rows) for f in result.unlinked],
    }
