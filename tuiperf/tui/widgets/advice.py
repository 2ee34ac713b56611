"""The fixes panel: the report's findings, ranked, or those that involve the selection.

Findings come from `tuiperf.analysis` (run once, in a worker, after the first screen is up)
and are looked up with `FindingIndex`; nothing here recomputes them. Each finding is an
option card (severity as glyph and word, the numbers, the fix and its PyTorch snippet)
followed by its evidence rows; Enter on an evidence row selects that event on the timeline
(and in the events table) through `EventSelected`, or zooms the timeline to a region.

The app starts the analysis with `start(trace, ncu)`; when an Nsight Compute report
arrives later (`app.ncu`), `set_ncu(ncu)` runs it again with the ncu rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from tuiperf.model import fmt
from tuiperf.model.trace import Trace
from tuiperf.schema import EVENT_TABLES
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import asciify
from tuiperf.tui.messages import EventSelected

if TYPE_CHECKING:  # the analysis runs (and is imported) after the first frame
    from tuiperf.analysis.findings import AnalysisResult, Finding
    from tuiperf.analysis.index import FindingIndex, Hit

#: evidence rows shown under a finding at first, and how many more each "more" adds
FIRST_ROWS = 3
MORE_ROWS = 20
#: evidence columns that are never shown (positions, not values)
_HIDDEN = ("table", "row", "start_ns", "duration_ns")
#: rule-specific evidence columns shown after start and duration, at most this many
_EXTRA_COLS = 3
_SEV_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}


@dataclass
class _State:
    status: str = "idle"  # idle, analysing, ready, failed
    note: str = ""
    result: AnalysisResult | None = None
    index: FindingIndex | None = None


class AdvicePanel(Vertical):
    """Title line plus a list of finding cards and evidence rows (`#advice-list`)."""

    DEFAULT_CSS = """
    AdvicePanel { height: 1fr; min-height: 8; margin-top: 1; }
    AdvicePanel > #advice-title { height: 1; background: $boost; text-style: bold; }
    AdvicePanel > #advice-budget { height: auto; padding: 0 0 1 0; }
    AdvicePanel > #advice-list {
        height: 1fr; max-height: 100%; border: none; padding: 0; background: transparent;
    }
    AdvicePanel > #advice-list:focus { border: none; }
    """
    BINDINGS: ClassVar = []

    def __init__(self, ascii_only: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ascii_only = ascii_only
        self.state = _State()
        self.trace: Trace | None = None
        self.ncu: Any = None
        #: the selected event (table, row), or None for the whole report
        self.selection: tuple[str, int] | None = None
        #: evidence rows shown per finding (finding index -> rows), grown by "more"
        self.shown_rows: dict[int, int] = {}
        self.hits: list[Hit] = []
        #: the evidence rows of the list being built (option id -> text), for FixesList
        self._rows: dict[str, Text] = {}

    def compose(self) -> ComposeResult:
        yield Static(self._t("Recommended fixes"), id="advice-title")
        yield Static("", id="advice-budget")
        yield FixesList(self.ascii_only, id="advice-list", markup=False)

    def on_mount(self) -> None:
        self._refresh_list()

    # --- state from the app ---------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return not self.has_class("-empty")

    @property
    def ready(self) -> bool:
        return self.state.status in ("ready", "failed")

    def set_open(self, show: bool) -> None:
        self.set_class(not show, "-empty")
        if self.parent is not None:  # the side panel widens while it shows fixes
            self.parent.set_class(show, "-advice-open")

    def focus_list(self) -> None:
        self.query_one("#advice-list", OptionList).focus()

    def start(self, trace: Trace, ncu: Any = None) -> None:
        """Analyse `trace` (and an ncu report) in a worker; "analysing…" until done."""
        self.trace, self.ncu = trace, ncu
        self.state = _State("analysing")
        self._refresh_list()
        self._analyse(trace, ncu)

    def set_ncu(self, ncu: Any) -> None:
        """An Nsight Compute report arrived: analyse again with its per-kernel rules."""
        if self.trace is not None and ncu is not self.ncu:
            self.start(self.trace, ncu)

    def follow_selection(self, table: str, row: int) -> None:
        self.selection = (table, row)
        self.shown_rows.clear()
        self._refresh_list()

    def show_report(self) -> None:
        self.selection = None
        self.shown_rows.clear()
        self._refresh_list()

    @work(thread=True, exclusive=True, group="advice", exit_on_error=False)
    def _analyse(self, trace: Trace, ncu: Any) -> None:
        from tuiperf.analysis.engine import analyze
        from tuiperf.analysis.index import FindingIndex

        worker = get_current_worker()
        try:
            result = analyze(trace, ncu)
            state = _State("ready", "", result, FindingIndex(result.findings))
        except Exception as e:  # a damaged report must not take the viewer down
            state = _State("failed", f"{type(e).__name__}: {fmt.clean(str(e), 200)}")
        if worker.is_cancelled:
            return
        try:
            self.app.call_from_thread(self._analysed, state)
        except RuntimeError:  # the app closed meanwhile
            return

    def _analysed(self, state: _State) -> None:
        self.state = state
        self._refresh_list()

    # --- rendering ------------------------------------------------------------------

    def _t(self, s: str) -> str:
        if not self.ascii_only:
            return s
        s = asciify(s).replace("↔", "<->").replace("≈", "~")
        return s.encode("ascii", "replace").decode("ascii")

    def _text(self, s: str, style: str = "") -> Text:
        return Text(self._t(s), style=style)

    def _refresh_list(self) -> None:
        found = self.query("#advice-list")
        if not found:  # not composed yet
            return
        olist = found.first(FixesList)
        self._rows = {}
        title, options = self._content()
        self.query_one("#advice-title", Static).update(self._text(title))
        self._refresh_budget()
        keep = olist.highlighted
        olist.set_rows(options, self._rows)
        if keep is not None and self._keep_cursor:
            olist.highlighted = min(keep, max(olist.option_count - 1, 0))
            self._keep_cursor = False
        else:
            olist.highlighted = _first_enabled(options)
        olist.show_cursor(olist.highlighted)

    _keep_cursor = False

    def _refresh_budget(self) -> None:
        """The step budget's stacked bar, while no event is selected and there are steps."""
        result = self.state.result
        budget = result.budget if result is not None else None
        box = self.query_one("#advice-budget", Static)
        box.display = budget is not None and self.selection is None
        if budget is not None and box.display:
            from tuiperf.tui.widgets.budget_bar import budget_bar

            width = (self.size.width or 40) - 2
            box.update(budget_bar(budget, width, self.ascii_only))

    def on_resize(self) -> None:
        if self.query("#advice-budget"):
            self._refresh_budget()

    def _content(self) -> tuple[str, list[Option]]:
        st = self.state
        if st.status in ("idle", "analysing"):
            return "Recommended fixes · analysing…", [_note(self._text("analysing…", "dim"))]
        if st.status == "failed" or st.index is None:
            msg = f"The analysis failed: {st.note}"
            return "Recommended fixes", [_note(self._text(msg, "dim"))]
        index = st.index
        if self.selection is None:
            self.hits = index.ranked()
            return self._report_title(index), self._report_options(index)
        table, row = self.selection
        from tuiperf.analysis.index import kernel_names

        names = kernel_names(self.trace, table, row) if self.trace is not None else ()
        self.hits = index.for_event(table, row, names)
        what = "kernel" if table == "kernels" else "event"
        if not self.hits:
            lead = _note(
                self._text(f"No finding involves this {what}. All findings, ranked:", "dim")
            )
            self.hits = index.ranked()
            return f"Fixes · none for this {what}", [lead, *self._report_options(index)]
        title = f"Fixes for this {what} · {len(self.hits)} of {len(index)}"
        return title, self._cards(index, self.hits)

    def _report_title(self, index: FindingIndex) -> str:
        sampled = " · over a sample" if self._sample_note() else ""
        if not len(index):
            return f"Recommended fixes · none{sampled}"
        return f"Recommended fixes · {len(index)} ranked{sampled}"

    def _sample_note(self) -> list[Option]:
        """What a huge report's analysis covered (analysis.sample), as the list's lead."""
        result = self.state.result
        part = result.sample if result is not None else None
        if part is None:
            return []
        msg = (
            f"Analysed over {part.text()}: the whole report is too big to analyse in "
            "bounded memory (tuiperf analyze --max-events 0 analyses all of it)."
        )
        return [_note(self._text(msg, "dim"))]

    def _report_options(self, index: FindingIndex) -> list[Option]:
        lead = self._sample_note()
        if not len(index):
            st = self.state
            ran = len(st.result.checks) if st.result is not None else 0
            msg = f"No findings: {ran} rules found nothing to fix in this report."
            return [*lead, _note(self._text(msg, "dim"))]
        return [*lead, *self._cards(index, index.ranked())]

    def _cards(self, index: FindingIndex, hits: list[Hit]) -> list[Option]:
        out: list[Option] = []
        for hit in hits:
            f = index.findings[hit.finding]
            out.append(Option(self._card(hit, f, len(index)), id=f"f{hit.finding}"))
            out += self._evidence(hit, f)
        return out

    def _card(self, hit: Hit, f: Finding, total: int) -> Group:
        from tuiperf.analysis.findings import SCOPE_EVENTS, SOURCE_LABELS
        from tuiperf.analysis.index import BY_KERNEL
        from tuiperf.report.findings import saving_text

        sev = f.severity
        basis = self.state.result.saving_basis if self.state.result is not None else ""
        saves = "no time estimate" if f.est_saving_ns is None else f"saves {saving_text(f, basis)}"
        head = Text.assemble(
            (f"#{hit.finding + 1} ", "bold"),
            (self._t(f"{sev.glyph(self.ascii_only)} {sev.word.upper()}"), _SEV_STYLE[sev.word]),
            self._t(f" · {saves}"),
        )
        source = SOURCE_LABELS.get(f.source, f.source)
        # "events: 78 events" says nothing the count does not
        scope = "" if f.scope.kind == SCOPE_EVENTS else f" · {fmt.clean(f.scope.text(), 80)}"
        why = " · about this kernel" if hit.why == BY_KERNEL else ""
        lines: list[RenderableType] = [
            head,
            self._text(fmt.clean(f.title), "bold"),
            self._text(f"{fmt.plural(f.count, 'event')}{scope} · {source} [{f.rule}]{why}", "dim"),
            self._text(fmt.clean(f.message)),
        ]
        if f.fix.text:
            lines.append(Text.assemble(("Fix: ", "bold green"), self._t(f.fix.text)))
        for code in f.fix.snippet.splitlines():  # wrapped at spaces, never cut (`y` copies)
            text = Text(self._t(code), style="italic", overflow="fold")
            lines.append(Padding(text, (0, 0, 0, 2)))
        return Group(*lines)

    def _evidence(self, hit: Hit, f: Finding) -> list[Option]:
        n = len(f.evidence)
        if n == 0:
            return [_note(Text(""))]
        limit = self.shown_rows.get(hit.finding, FIRST_ROWS)
        picked = list(hit.evidence[:limit])  # the rows that involve the selection first
        mine = set(picked)
        picked += [p for p in range(min(n, limit + len(picked))) if p not in mine]
        picked = picked[: max(limit, len(mine))]
        cols = _columns(f)
        head = "  ".join(["start", "duration", *(f.evidence.headers.get(c, c) for c in cols)])
        title = self._text(f"Evidence ({n:,}): {head.replace(' (ns)', '')}", "dim")
        title.no_wrap, title.overflow = True, "ellipsis"
        out = [_note(title)]
        rows, marked = f.evidence.rows, set(hit.evidence)
        for pos in picked:
            r = rows.slice(pos, 1).to_pylist()[0]
            out.append(self._row(f"e{hit.finding}:{pos}", self._row_text(r, cols, pos in marked)))
        if n > len(picked):
            more = f"… {n - len(picked):,} more rows (⏎ shows {min(MORE_ROWS, n - len(picked))})"
            out.append(self._row(f"m{hit.finding}", self._text(more, "dim")))
        out.append(_note(Text("")))
        return out

    def _row(self, oid: str, text: Text) -> Option:
        """An evidence (or "more") row; FixesList puts the cursor glyph before its text."""
        self._rows[oid] = text
        return Option(cursor_text(text, False, self.ascii_only), id=oid)

    def _row_text(self, r: dict[str, Any], cols: list[str], selected: bool) -> Text:
        mark = ("*" if self.ascii_only else "●") if selected else " "
        start = fmt.timestamp(r["start_ns"]) if r["start_ns"] is not None else "—"
        parts = [
            f"{start:>9}",
            f"{fmt.duration(r['duration_ns'], self.ascii_only):>8}",
            *(_cell(c, r.get(c), self.ascii_only) for c in cols),
        ]
        text = self._text(f"{mark} " + "  ".join(parts), "bold" if selected else "")
        text.no_wrap = True
        text.overflow = "ellipsis"
        return text

    # --- keys -----------------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        oid = event.option_id or ""
        if oid.startswith("m"):
            i = int(oid[1:])
            self.shown_rows[i] = self.shown_rows.get(i, FIRST_ROWS) + MORE_ROWS
            self._keep_cursor = True
            self._refresh_list()
        elif oid.startswith("e"):
            finding, _, pos = oid[1:].partition(":")
            self.jump(int(finding), int(pos))
        elif oid.startswith("f"):
            self.jump(int(oid[1:]), None)

    def finding_at_cursor(self) -> Finding | None:
        """The finding of the card, evidence row or "more" row under the cursor."""
        index = self.state.index
        option = self.query_one(FixesList).highlighted_option
        oid = option.id if option is not None else None
        if index is None or not oid or oid[0] not in "fem":
            return None
        return index.findings[int(oid[1:].partition(":")[0])]

    def copy_snippet(self) -> None:
        """`y`: the code of the fix under the cursor to the clipboard (OSC 52)."""
        f = self.finding_at_cursor()
        if f is None:
            return
        code = f.fix.snippet
        if not code:
            self.notify("This finding has no code to copy.", timeout=3)
            return
        self.app.copy_to_clipboard(code)
        lines = fmt.plural(len(code.splitlines()), "line")
        self.notify(f"Copied the fix's code ({lines}, {len(code.encode()):,} B)", markup=False)

    def jump(self, finding: int, pos: int | None) -> None:
        """Show evidence row `pos` of a finding (its first matching row when None)."""
        index = self.state.index
        if index is None:
            return
        f = index.findings[finding]
        if not len(f.evidence):
            return
        if pos is None:
            hit = next((h for h in self.hits if h.finding == finding), None)
            pos = hit.evidence[0] if hit is not None and hit.evidence else 0
        r = f.evidence.rows.slice(pos, 1).to_pylist()[0]
        table, row, start, dur = r["table"], r["row"], r["start_ns"], r["duration_ns"]
        if table in EVENT_TABLES and row is not None:
            self.post_message(EventSelected(table, int(row), self.id or "advice"))
        elif start is not None:
            self._show_range(int(start), int(start) + int(dur or 0))
        else:
            self.notify("That launch is only in the Nsight Compute report.", timeout=3)
            return
        if self.screen.has_class("-narrow"):  # the panel covers the timeline: step aside
            self.call_later(self.app.run_action, "escape")

    def _show_range(self, start: int, end: int) -> None:
        found = self.app.query("#timeline")
        timeline = found.first() if found else None
        vp = getattr(timeline, "vp", None)
        if timeline is not None and vp is not None and hasattr(timeline, "set_viewport"):
            timeline.set_viewport(vp.fit_range(start, max(end, start + 1)), push=True)


class FixesList(OptionList, inherit_bindings=False):
    """The cards and evidence rows: arrows and j/k move, Enter opens, `y` copies the fix's
    code; the row under the cursor carries a glyph (▶, > in ASCII), not only a colour."""

    BINDINGS: ClassVar = bindings("fixes")

    def __init__(self, ascii_only: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ascii_only = ascii_only
        #: the rows that take the cursor glyph (option id -> text without it)
        self.rows: dict[str, Text] = {}
        self._drawn: int | None = None

    def set_rows(self, options: list[Option], rows: dict[str, Text]) -> None:
        self.rows, self._drawn = rows, None
        self.set_options(options)

    def watch_highlighted(self, highlighted: int | None) -> None:
        self.show_cursor(highlighted)
        super().watch_highlighted(highlighted)

    def show_cursor(self, highlighted: int | None) -> None:
        """The glyph off the row that had the cursor, onto the row that has it."""
        for index, on in ((self._drawn, False), (highlighted, True)):
            if index is None or not 0 <= index < self.option_count:
                continue
            text = self.rows.get(self.get_option_at_index(index).id or "")
            if text is not None:
                self.replace_option_prompt_at_index(index, cursor_text(text, on, self.ascii_only))
        self._drawn = highlighted

    def action_copy_snippet(self) -> None:
        for panel in self.ancestors:
            if isinstance(panel, AdvicePanel):
                panel.copy_snippet()
                return


def cursor_text(text: Text, on: bool, ascii_only: bool) -> Text:
    """`text` after the cursor's column: ▶ (>) on the cursor's row, a space elsewhere."""
    glyph = (">" if ascii_only else "▶") if on else " "
    out = Text.assemble((glyph, "bold"), text)
    out.no_wrap, out.overflow = text.no_wrap, text.overflow
    return out


def _note(prompt: Any) -> Option:
    return Option(prompt, disabled=True)


def _first_enabled(options: list[Option]) -> int | None:
    return next((i for i, o in enumerate(options) if not o.disabled), None)


def _columns(f: Finding) -> list[str]:
    """Rule-specific evidence columns that have values, at most _EXTRA_COLS of them."""
    rows = f.evidence.rows
    cols = [c for c in rows.column_names if c not in _HIDDEN and rows[c].null_count < len(rows)]
    return cols[:_EXTRA_COLS]


def _cell(key: str, v: Any, ascii_only: bool) -> str:
    if v is None:
        return ""
    if key.endswith("_ns") and isinstance(v, int | float):
        return fmt.duration(v, ascii_only)
    if key == "bytes" and isinstance(v, int | float):
        return fmt.size(v)
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int):
        return f"{v:,}"
    return fmt.clean(str(v), 60)
