"""What the events table shows, kept apart from the terminal: one query per kind (filter,
sort), the per-name summary mode and its sort, the timeline window filter, the rows of the
last result, and which query to run next.

The widget (`tuiperf.tui.widgets.events_table`) renders this state and dispatches keys to
it; it runs `request()` in a worker and hands the answer back to `accept()`. Results of an
older request are dropped (each request carries a generation number).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tuiperf.model import columns as cols
from tuiperf.model.timeline.query import NameSummary, Query, View, parse_duration

if TYPE_CHECKING:
    import pyarrow as pa

    from tuiperf.model.timeline.query import Events

#: columns of these formats sort largest first the first time they are picked
NUMERIC_DESC = frozenset({"duration", "bytes", "smem", "pct", "count"})
#: what the filter input edits
TEXT, MIN_DURATION = "text", "min"

#: what the cursor stays on across a re-run: a trace row (events), a name (summary), nothing
Keep = int | str | None


@dataclass(frozen=True)
class Request:
    """One query for the worker: the kind's query (with the window, if it filters), the
    summary sort (None: events, not a summary), and what the cursor should stay on."""

    gen: int
    query: Query
    summary_sort: tuple[str, bool] | None
    keep: Keep


@dataclass(frozen=True)
class Result:
    """What the worker computed for request `gen`."""

    gen: int
    view: View
    summary: NameSummary | None
    keep: Keep


def compute(model: Events, req: Request, progress: Callable[[str], None] | None = None) -> Result:
    """Run `req` (in a worker thread): the matching rows and, for a summary, their per-name
    summary. A bad filter raises QueryError."""
    table = model.table(req.query.kind)
    view = table.run(req.query, progress=progress)
    summary = None
    if req.summary_sort is not None:
        if progress is not None:
            progress("summarizing")
        summary = table.summary(view).sorted(*req.summary_sort)
    return Result(req.gen, view, summary, req.keep)


def clamp(pos: int, count: int) -> int:
    """A cursor position inside `count` rows (0 when there are none)."""
    return max(0, min(pos, count - 1))


def default_descending(fmt: str | None) -> bool:
    """Numbers (durations, sizes, counts) sort largest first; names and times do not."""
    return fmt in NUMERIC_DESC


class EventsState:
    """Per-kind queries and sorts, the summary mode and the window filter of the events
    table, with the view and summary it shows now."""

    def __init__(self, kind: str = "kernels") -> None:
        self.kind = kind
        self.queries = {k: Query(kind=k) for k in cols.KINDS}
        self.summary_sort = {k: ("total", True) for k in cols.KINDS}
        self.summary_mode = False
        #: a sort keeps the cursor on its row (else a new order shows from its top)
        self.follow = False
        #: names shown as base names (`elementwise_kernel<…>`) instead of in full
        self.base_names = False
        #: the timeline's visible window [start, end) ns; it filters while `window_only`
        self.window: tuple[int, int] | None = None
        self.window_only = False
        #: what the filter input edits: TEXT or MIN_DURATION
        self.input_mode = TEXT
        #: the result shown now (summary: None unless the summary is shown)
        self.view: View | None = None
        self.summary: NameSummary | None = None
        self.gen = 0

    # -- the query to run ---------------------------------------------------------------
    @property
    def query(self) -> Query:
        """The current kind's query (without the window)."""
        return self.queries[self.kind]

    @property
    def sort(self) -> tuple[str, bool]:
        """(key, descending) of what the mode shows: the summary's sort or the query's."""
        if self.summary_mode:
            return self.summary_sort[self.kind]
        return self.query.sort, self.query.descending

    def request(self, keep: Keep) -> Request:
        """The next query to run; any result of an earlier request is stale from now on."""
        self.gen += 1
        q = self.query.with_(window=self.window if self.window_only else None)
        summary_sort = self.summary_sort[self.kind] if self.summary_mode else None
        return Request(self.gen, q, summary_sort, keep)

    def is_current(self, gen: int) -> bool:
        return gen == self.gen

    def accept(self, result: Result) -> int | None:
        """Show `result`; the cursor position it asks for, or None when it is stale."""
        if not self.is_current(result.gen):
            return None
        self.view, self.summary = result.view, result.summary
        keep = result.keep
        if result.summary is not None:
            if isinstance(keep, str):
                names = [result.summary.names[g] for g in result.summary.order]
                return names.index(keep) if keep in names else 0
            return 0
        if isinstance(keep, int):
            found = result.view.position_of(keep)
            return found if found is not None else 0
        return 0

    # -- what the shown rows are --------------------------------------------------------
    @property
    def showing_summary(self) -> bool:
        """The rows on screen are a summary (the mode may have changed since)."""
        return self.summary is not None

    def shown_count(self) -> int:
        if self.summary is not None:
            return len(self.summary)
        return len(self.view) if self.view is not None else 0

    def row_at(self, pos: int) -> int | None:
        """The trace row shown at `pos` (events shown), or None."""
        view = self.view
        if self.summary is not None or view is None or not 0 <= pos < len(view):
            return None
        return view.row(pos)

    def name_at(self, pos: int) -> str | None:
        """The summary name shown at `pos` (summary shown), or None."""
        s = self.summary
        if s is None or not 0 <= pos < len(s):
            return None
        return s.names[int(s.order[pos])]

    def summary_event_at(self, pos: int) -> int | None:
        """The first event, in time, of the name at summary row `pos` among the rows the
        summary counts (the details pane follows the summary's cursor); None off a summary."""
        s, view = self.summary, self.view
        if s is None or view is None or not 0 <= pos < len(s):
            return None
        code = s.codes[int(s.order[pos])]
        idx = view.indices
        hit = idx[view.events.names.codes[idx] == code]
        if not len(hit):
            return None
        starts = view.events.column("start").values[hit]
        return int(hit[int(np.argmin(starts))])

    def keep_at(self, pos: int) -> Keep:
        """What the cursor at `pos` is on, to stay on it across a re-run."""
        return self.name_at(pos) if self.summary is not None else self.row_at(pos)

    def position_of(self, row: int) -> int | None:
        """Where trace row `row` is shown (events shown), or None (hidden by the filter)."""
        if self.summary is not None or self.view is None:
            return None
        return self.view.position_of(row)

    # -- transitions ----------------------------------------------------------------------
    def set_query(self, q: Query) -> None:
        self.queries[self.kind] = q

    def edit(self, value: str) -> Query | None:
        """The query with the filter input's `value` (per `input_mode`), or None when it
        changes nothing. A bad duration raises QueryError."""
        if self.input_mode == MIN_DURATION:
            q = self.query.with_(min_duration=parse_duration(value))
        else:
            q = self.query.with_(text=value)
        return q if q != self.query else None

    def input_value(self) -> str:
        """What the filter input starts with for `input_mode`."""
        q = self.query
        if self.input_mode == MIN_DURATION:
            return f"{q.min_duration}ns" if q.min_duration else ""
        return q.text

    @property
    def regex_input(self) -> bool:
        """The filter input edits a regular expression."""
        return self.query.regex and self.input_mode == TEXT

    def toggle_regex(self) -> None:
        self.set_query(self.query.with_(regex=not self.query.regex))

    def clear(self) -> None:
        """Drop the name filters, the minimum duration and the window filter."""
        self.window_only = False
        self.set_query(self.query.with_(text="", name=None, min_duration=None))

    @property
    def is_filtered(self) -> bool:
        return self.query.is_filtered or self.window_only

    def toggle_window(self) -> None:
        self.window_only = not self.window_only
        self.set_query(self.query.with_(window=None))

    def set_window(self, start: int, end: int) -> bool:
        """The timeline's window; True when it filters the rows (a re-run is due)."""
        self.window = (int(start), int(end))
        return self.window_only

    def toggle_summary(self) -> None:
        self.summary_mode = not self.summary_mode

    def show_kind(self, kind: str) -> bool:
        """Switch to `kind`; False when it is shown already."""
        if kind == self.kind:
            return False
        self.kind = kind
        return True

    def next_kind(self, step: int) -> str:
        i = cols.KINDS.index(self.kind)
        return cols.KINDS[(i + step) % len(cols.KINDS)]

    def show_events_of(self, kind: str) -> bool:
        """Events of `kind` (not its summary); True when that needs a re-run."""
        if kind != self.kind or self.summary_mode or self.view is None:
            self.kind, self.summary_mode = kind, False
            return True
        return False

    def drill(self, pos: int) -> bool:
        """Enter on summary row `pos`: the events of that name. False off a summary."""
        name = self.name_at(pos)
        if name is None:
            return False
        self.summary_mode = False
        self.set_query(self.query.with_(name=name))
        return True

    def sort_by(self, key: str, descending: bool) -> None:
        """Sort what the mode shows by `key`."""
        if self.summary_mode:
            self.summary_sort[self.kind] = (key, descending)
        else:
            self.set_query(self.query.with_(sort=key, descending=descending))

    def next_sort_key(self, shown: list[str], step: int) -> str | None:
        """The column `step` places from the sorted one among `shown` (wrapping)."""
        if not shown:
            return None
        key = self.sort[0]
        i = shown.index(key) if key in shown else -1
        return shown[(i + step) % len(shown)]

    # -- text -------------------------------------------------------------------------------
    def title(self) -> str:
        """`Events · Kernels (filter: gemm, 12 / 340)`: the mode, kind, filter and counts."""
        what = "Summary" if self.summary_mode else "Events"
        title = f"{what} · {cols.KIND_TITLES[self.kind]}"
        view = self.view
        if view is None:
            return title
        q = view.query
        shown = f"{len(view):,} / {view.total:,}" if q.is_filtered else f"{view.total:,}"
        if self.summary is not None:
            shown = f"{len(self.summary):,} names, {shown}"
        desc = q.describe()
        return f"{title} ({'filter: ' + desc + ', ' if desc else ''}{shown})"

    def sort_text(self, ascii_only: bool = False) -> str:
        """`sort: Duration ▼`."""
        key, desc = self.sort
        if self.summary_mode:
            header = next((c.header for c in cols.summary_columns(self.kind) if c.key == key), key)
        else:
            spec = cols.find(self.kind, key)
            header = spec.header if spec else key
        arrow = ("v" if desc else "^") if ascii_only else ("▼" if desc else "▲")
        return f"sort: {header} {arrow}"

    def export_name(self, source: str | None) -> str:
        """`report.kernels.csv` (`report.kernels-summary.csv` for a summary)."""
        stem = Path(source or "report").name.split(".")[0] or "report"
        return f"{stem}.{self.kind}{'-summary' if self.summary_mode else ''}.csv"

    # -- data out ---------------------------------------------------------------------------
    @staticmethod
    def fresh_path(path: Path) -> Path:
        """`path`, or the first of `stem-2.csv`, `stem-3.csv`, ... that does not exist: the
        name `e` proposes never overwrites an earlier export (issue 35 item 2)."""
        n = 2
        found = path
        while found.exists():
            found = path.with_name(f"{path.stem}-{n}{path.suffix}")
            n += 1
        return found

    def export_table(self, shown: list[str], ncu_mask: np.ndarray | None = None) -> pa.Table:
        """The shown rows with exactly the `shown` columns (keys, in screen order), raw
        values (`duration_ns`, `bytes`); `ncu` (a kernel has an Nsight Compute result,
        from `ncu_mask` per trace row) when it is shown."""
        if self.summary_mode and self.summary is not None:
            by_key = {c.key: c for c in cols.summary_columns(self.kind)}
            return self.summary.to_arrow(tuple(by_key[k] for k in shown if k in by_key))
        assert self.view is not None
        specs = tuple(spec for k in shown if (spec := cols.find(self.kind, k)) is not None)
        table = self.view.to_arrow(specs)
        if "ncu" in shown and ncu_mask is not None:
            import pyarrow as pa

            idx = np.asarray(self.view.indices)
            has = np.zeros(len(idx), dtype=bool)
            ok = idx < len(ncu_mask)
            has[ok] = ncu_mask[idx[ok]].astype(bool)
            table = table.add_column(0, "ncu", pa.array(has))
        return table

    def row_values(self, model: Events, pos: int) -> list[object] | None:
        """Raw values of the row shown at `pos` (names cleaned), or None."""
        if self.summary is not None:
            if not 0 <= pos < len(self.summary):
                return None
            one = self.summary.to_arrow(cols.summary_columns(self.kind))
            return list(one.slice(pos, 1).to_pylist()[0].values())
        row = self.row_at(pos)
        if row is None:
            return None
        table = model.table(self.kind)
        idx = np.array([row], dtype=np.int64)
        return list(table.export_table(idx, cols.columns(self.kind)).to_pylist()[0].values())

    def row_text(self, model: Events, pos: int) -> str | None:
        """The row at `pos` as tab-separated raw values, for the clipboard."""
        values = self.row_values(model, pos)
        if values is None:
            return None
        return "\t".join("" if v is None else str(v) for v in values)
