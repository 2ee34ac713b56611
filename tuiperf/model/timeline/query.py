"""Filter, sort and summarize one event table of a Trace (headless, no Textual).

A query never copies the table: its result is a `View`, the base table plus an array
of row numbers. Columns are read once into numpy (codes for names), sort orders of
the whole table are cached per column, and a filter is a boolean mask applied to a
cached order, so a re-sort or a new filter over millions of rows costs a few numpy
passes. Sorts are stable: ties keep the report's order (by start).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from math import prod

import numpy as np
import pyarrow as pa

from tuiperf.errors import UsageError
from tuiperf.model import arrays
from tuiperf.model import columns as cols
from tuiperf.model.api_names import api_display_name
from tuiperf.model.columns import ColumnData, dictionary_codes, read_column
from tuiperf.model.groupstats import group_stats
from tuiperf.model.trace import Trace

Progress = Callable[[str], None]
Specs = list[cols.ColumnSpec] | tuple[cols.ColumnSpec, ...]
_MAX_ORDERS = 6
_NVTX_RANGE_STYLES = ("PushPop", "StartEnd")
_NULL_LAST = np.iinfo(np.int64).max  # a null's sort key (ColumnData.sort_key)
_DIGIT_BITS = 16  # numpy's stable argsort is a radix sort up to 16-bit ints
_MAX_PASSES = 2
_DENSE_SPAN = 1 << 20  # widest value range renumbered through a table


@dataclass
class NameIndex:
    """A name code per row; the Name column's labels, and the names filters and summaries see.

    The codes are the groups of the per-name summary, as in the `nsys stats` reports:
    kernels by demangled name, API calls by name (shown without the `_vNNNN` suffix),
    memcpy by copy kind, all memsets as one, NVTX by (domain, text, style).
    """

    codes: np.ndarray
    labels: list[str]
    match_labels: list[str]
    styles: list[str] | None = None

    def as_column(self) -> ColumnData:
        return ColumnData(self.codes, None, self.labels)


def name_index(kind: str, table: pa.Table) -> NameIndex:
    if kind == "memset":
        return NameIndex(np.zeros(table.num_rows, np.int32), ["[CUDA memset]"], ["[CUDA memset]"])
    if kind == "nvtx":
        return _nvtx_names(table)
    codes, labels = dictionary_codes(_dict_col(table["copy_kind" if kind == "memcpy" else "name"]))
    codes, labels = _null_label(table["copy_kind" if kind == "memcpy" else "name"], codes, labels)
    if kind == "memcpy":
        labels = [f"[CUDA memcpy {k}]" for k in labels]
    elif kind == "api":
        labels = [api_display_name(s) for s in labels]
    return NameIndex(codes, labels, labels)


def _dict_col(col: pa.ChunkedArray) -> pa.ChunkedArray:
    return col if pa.types.is_dictionary(col.type) else col.dictionary_encode()


def _null_label(
    col: pa.ChunkedArray, codes: np.ndarray, labels: list[str]
) -> tuple[np.ndarray, list[str]]:
    """Rows without a name get their own code, labelled '' (as the summaries do)."""
    if not col.null_count:
        return codes, labels
    valid = arrays.valid(col)  # (from the bitmaps: `to_numpy` imports pandas)
    return np.where(valid, codes, len(labels)).astype(np.int32), [*labels, ""]


def _nvtx_names(table: pa.Table) -> NameIndex:
    parts = []
    for c in ("domain", "text", "style"):
        codes, labels = dictionary_codes(_dict_col(table[c]))
        parts.append(_null_label(table[c], codes, labels))
    (dom, dl), (txt, tl), (sty, sl) = parts
    key = (dom.astype(np.int64) * (len(tl) + 1) + txt) * (len(sl) + 1) + sty
    uniq, inverse = np.unique(key, return_inverse=True)
    labels, match, styles = [], [], []
    for k in uniq.tolist():
        rest, s = divmod(k, len(sl) + 1)
        d, x = divmod(rest, len(tl) + 1)
        labels.append(tl[x])
        match.append(f"{dl[d]}:{tl[x]}")
        styles.append(sl[s])
    return NameIndex(inverse.astype(np.int32).reshape(-1), labels, match, styles)


class QueryError(UsageError):
    """A filter the user typed cannot be applied (a bad regular expression)."""


@dataclass(frozen=True)
class Query:
    """What the events table shows: one kind, a filter, and a sort."""

    kind: str = "kernels"
    text: str = ""  # substring of the name, case-insensitive; a leading `!` inverts
    regex: bool = False  # `text` is a regular expression (still case-insensitive)
    name: str | None = None  # exactly this summary name (Enter in summary mode)
    min_duration: int | None = None  # ns
    window: tuple[int, int] | None = None  # [start, end) ns: events overlapping it
    sort: str = "start"
    descending: bool = False

    def with_(self, **changes: object) -> Query:
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def filter_key(self) -> tuple[object, ...]:
        return (self.kind, self.text, self.regex, self.name, self.min_duration, self.window)

    @property
    def is_filtered(self) -> bool:
        return bool(self.pattern or self.name is not None or self.min_duration or self.window)

    @property
    def inverted(self) -> bool:
        return self.text.startswith("!")

    @property
    def pattern(self) -> str:
        return self.text[1:] if self.inverted else self.text

    def describe(self) -> str:
        """The filter in a few words, for a pane title: `!gemm, ≥ 10 µs, window`."""
        from tuiperf.model.fmt import clean, duration

        parts = []
        if self.pattern:
            parts.append(clean(("re:" if self.regex else "") + self.text, 40))
        if self.name is not None:
            parts.append("= " + clean(self.name, 40))
        if self.min_duration:
            parts.append(f"≥ {duration(self.min_duration)}")
        if self.window:
            parts.append("window")
        return ", ".join(parts)


def name_matcher(query: Query) -> Callable[[str], bool] | None:
    """A predicate on names for the query's text, or None when it filters nothing."""
    pat = query.pattern
    if not pat:
        return None
    if query.regex:
        try:
            rx = re.compile(pat, re.IGNORECASE)
        except re.error as e:
            raise QueryError(f"bad regular expression {pat!r}: {e}") from e
        return lambda s: rx.search(s) is not None
    needle = pat.casefold()
    return lambda s: needle in s.casefold()


@dataclass
class View:
    """Rows `indices` (in display order) of the base `events` table."""

    events: EventTable
    query: Query
    indices: np.ndarray
    _positions: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def total(self) -> int:
        return self.events.num_rows

    def row(self, position: int) -> int:
        return int(self.indices[position])

    def position_of(self, row: int) -> int | None:
        """Where base row `row` is shown, or None when it is filtered out."""
        hits = np.flatnonzero(self.indices == row)
        return int(hits[0]) if len(hits) else None

    def cells(
        self, position: int, specs: list[cols.ColumnSpec], ascii_only: bool = False
    ) -> list[str]:
        return self.events.cells(self.row(position), specs, ascii_only)

    def to_arrow(self, specs: Specs, limit: int | None = None) -> pa.Table:
        """The shown rows with raw values, one column per export name."""
        idx = self.indices if limit is None else self.indices[:limit]
        return self.events.export_table(idx, specs)


class EventTable:
    """One kind's table with its numpy columns, name codes and sort orders, all cached."""

    def __init__(self, kind: str, table: pa.Table) -> None:
        if kind not in cols.KINDS:
            raise UsageError(f"unknown table {kind!r}; choose one of: {', '.join(cols.KINDS)}")
        self.kind = kind
        self.table = table
        self.num_rows = table.num_rows
        self._cols: dict[str, ColumnData] = {}
        self._arrow: dict[str, pa.ChunkedArray] = {}
        self._names: NameIndex | None = None
        self._orders: dict[tuple[str, bool], np.ndarray] = {}
        self._summaries: dict[tuple[object, ...], NameSummary] = {}

    # -- columns -----------------------------------------------------------------
    @property
    def names(self) -> NameIndex:
        if self._names is None:
            self._names = name_index(self.kind, self.table)
        return self._names

    def column(self, source: str) -> ColumnData:
        hit = self._cols.get(source)
        if hit is None:
            hit = self.names.as_column() if source == "name" else read_column(self.table[source])
            self._cols[source] = hit
        return hit

    def cells(self, row: int, specs: Specs, ascii_only: bool = False) -> list[str]:
        return [
            cols.cell(s, tuple(self.value(c, row) for c in s.sources), ascii_only) for s in specs
        ]

    def value(self, source: str, row: int) -> object:
        """One raw value; a column not yet read into numpy is read from Arrow (no copy)."""
        hit = self._cols.get(source)
        if hit is not None or source == "name":
            return self.column(source).value(row)
        arrow = self._arrow.get(source)
        if arrow is None:
            arrow = self._arrow[source] = self.table.column(source)
        return arrow[row].as_py()

    def warm(self, sources: list[str] | tuple[str, ...]) -> None:
        """Read these columns into numpy now (a worker does it before the user sorts)."""
        for s in sources:
            self.column(s)

    def export_table(self, idx: np.ndarray, specs: Specs) -> pa.Table:
        arrays, names = [], []
        for s in specs:
            for src, out in zip(s.sources, s.export, strict=True):
                arrays.append(self.column(src).take(idx, clean=True))
                names.append(out)
        return pa.Table.from_arrays(arrays, names=names)

    # -- filtering -----------------------------------------------------------------
    def mask(self, query: Query) -> np.ndarray | None:
        """Rows the query keeps (bool per row), or None for all of them."""
        m = self._name_mask(query)
        if query.min_duration:
            d = self.column("duration")
            keep = d.values >= query.min_duration
            if d.valid is not None:
                keep &= d.valid
            m = keep if m is None else m & keep
        if query.window is not None:
            keep = self._window_mask(*query.window)
            m = keep if m is None else m & keep
        return m

    def _name_mask(self, query: Query) -> np.ndarray | None:
        match = name_matcher(query)
        if match is None and query.name is None:
            return None
        labels = self.names.match_labels
        ok = np.ones(len(labels), dtype=bool)
        if match is not None:
            ok = np.fromiter((match(s) for s in labels), dtype=bool, count=len(labels))
            if query.inverted:
                ok = ~ok
        if query.name is not None:
            ok &= np.fromiter((s == query.name for s in labels), dtype=bool, count=len(labels))
        return ok[self.names.codes]

    def _window_mask(self, lo: int, hi: int) -> np.ndarray:
        start = self.column("start").values
        end_col = self.column("end")
        end = (
            end_col.values
            if end_col.valid is None
            else np.where(end_col.valid, end_col.values, start)
        )
        # a zero-length event (a mark) at lo is inside; otherwise overlap [lo, hi)
        return (start < hi) & ((end > lo) | (start >= lo))

    # -- sorting -------------------------------------------------------------------
    def sort_spec(self, key: str) -> cols.ColumnSpec:
        spec = cols.find(self.kind, key)
        if spec is None:
            names = ", ".join(c.key for c in cols.columns(self.kind))
            raise QueryError(f"{self.kind} has no column {key!r}; choose one of: {names}")
        return spec

    def _sort_keys(self, spec: cols.ColumnSpec, descending: bool) -> list[np.ndarray]:
        return [self.column(src).sort_key(descending) for src in spec.sources]

    def order(self, key: str, descending: bool = False) -> np.ndarray:
        """All rows sorted by column `key` (stable; nulls last), cached."""
        spec = self.sort_spec(key)
        hit = self._orders.get((spec.key, descending))
        if hit is not None:
            return hit
        order = _stable_order(self._sort_keys(spec, descending))
        if len(self._orders) >= _MAX_ORDERS:
            self._orders.pop(next(iter(self._orders)))
        self._orders[(spec.key, descending)] = order
        return order

    def has_order(self, key: str, descending: bool) -> bool:
        spec = cols.find(self.kind, key)
        return spec is not None and (spec.key, descending) in self._orders

    def _sorted_subset(self, rows: np.ndarray, key: str, descending: bool) -> np.ndarray:
        spec = self.sort_spec(key)
        keys = [k[rows] for k in self._sort_keys(spec, descending)]
        return rows[_stable_order(keys)]

    def run(self, query: Query, progress: Progress | None = None) -> View:
        """Filter, then sort: the query's View."""
        say = progress or (lambda _msg: None)
        say("filtering")
        m = self.mask(query)
        say("sorting")
        if m is None:
            idx = self.order(query.sort, query.descending)
        elif self.has_order(query.sort, query.descending) or m.sum() * 4 > self.num_rows:
            order = self.order(query.sort, query.descending)
            idx = order[m[order]]
        else:
            idx = self._sorted_subset(np.flatnonzero(m), query.sort, query.descending)
        return View(self, query, idx)

    # -- per-name summary ------------------------------------------------------------
    def summary(self, view: View) -> NameSummary:
        """Per-name statistics over the view's rows, as `tuiperf summary` computes them."""
        key = view.query.filter_key
        hit = self._summaries.get(key)
        if hit is None:
            hit = self._summarize(view.indices)
            if len(self._summaries) >= 4:
                self._summaries.pop(next(iter(self._summaries)))
            self._summaries[key] = hit
        return hit

    def _summarize(self, idx: np.ndarray) -> NameSummary:
        if self.kind == "nvtx":
            idx = idx[self._nvtx_ranges()[idx]]
        idx = self._by_name_then_duration(idx)
        st = group_stats(self.names.codes[idx], self.column("duration").values[idx])
        base = st.order_by_total()
        grand = float(st.total.sum()) or 1.0
        names = self.names
        return NameSummary(
            kind=self.kind,
            codes=st.keys,
            names=[names.match_labels[k] for k in st.keys],
            styles=[names.styles[k] for k in st.keys] if names.styles else None,
            time_pct=100.0 * st.total / grand,
            total=st.total, count=st.count, mean=st.mean, median=st.median,
            minimum=st.minimum, maximum=st.maximum, stdev=st.stdev,
            order=base, base_order=base,
        )  # fmt: skip

    def _by_name_then_duration(self, idx: np.ndarray) -> np.ndarray:
        """`idx` ordered by (name code, duration): group_stats' own sort is then linear.

        The duration order is the cached one when `idx` is the whole table; the name pass
        is a radix sort (16-bit codes). Results do not change, only the time.
        """
        if len(self.names.labels) >= 2**16:
            return idx
        if len(idx) == self.num_rows and self.has_order("duration", False):
            by_dur = self.order("duration", False)
        else:
            by_dur = idx[np.argsort(self.column("duration").values[idx], kind="stable")]
        codes = self.names.codes[by_dur].astype(np.uint16)
        return by_dur[np.argsort(codes, kind="stable")]

    def _nvtx_ranges(self) -> np.ndarray:
        """NVTX rows `nvtx_sum` counts: push/pop and start/end ranges that ended."""
        style = self.column("style")
        ok_codes = np.array([s in _NVTX_RANGE_STYLES for s in style.labels or []], dtype=bool)
        keep = ok_codes[style.values] if len(ok_codes) else np.zeros(self.num_rows, bool)
        if style.valid is not None:
            keep &= style.valid
        end = self.column("end")
        return keep if end.valid is None else keep & end.valid


def _stable_order(keys: list[np.ndarray]) -> np.ndarray:
    """Rows in the lexicographic order of `keys` (int64 each), ties in row order.

    Keys that pack into one key of at most two 16-bit digits (names, grids, most
    durations) take numpy's stable argsort of 16-bit ints, a radix sort (linear);
    wider keys take its comparison sort. Both give the same order.
    """
    if len(keys) == 1:
        k = keys[0]
        if len(k) and not np.any(k[1:] < k[:-1]):
            return np.arange(len(k), dtype=np.int64)
    packed = _packed_key(keys)
    if packed is not None:
        return _radix_order(*packed)
    if len(keys) == 1:
        return np.argsort(keys[0], kind="stable")
    return np.lexsort(keys[::-1])


def _packed_key(keys: list[np.ndarray]) -> tuple[np.ndarray, int] | None:
    """One int64 key in [0, 2**bits) ordering the rows as `keys` do, and its bits;
    None when it would need more than two radix passes."""
    if not len(keys[0]):
        return None
    ranges = [_key_range(k) for k in keys]
    if any(hi - lo >= 1 << (_DIGIT_BITS * _MAX_PASSES) for _, lo, hi in ranges):
        return None
    parts = [(k - lo, hi - lo + 1) for k, lo, hi in ranges]
    if prod(span for _, span in parts) > 1 << _DIGIT_BITS:
        parts = [_dense(d, span) for d, span in parts]  # fewer passes
    total = prod(span for _, span in parts)
    if total > 1 << (_DIGIT_BITS * _MAX_PASSES):
        return None
    key = parts[0][0]  # the parts are fresh arrays: combine in place
    for d, span in parts[1:]:
        key *= span
        key += d
    return key, max(total - 1, 1).bit_length()


def _key_range(k: np.ndarray) -> tuple[np.ndarray, int, int]:
    """`k`, its minimum and maximum; nulls (the largest int64) become maximum + 1."""
    lo, hi = int(k.min()), int(k.max())
    if hi == _NULL_LAST and lo != hi:
        null = k == _NULL_LAST
        hi = int(k[~null].max()) + 1
        k = np.where(null, hi, k)
    return k, lo, hi


def _dense(d: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """Values in [0, span) renumbered 0, 1, ... in order over the values present."""
    if span > _DENSE_SPAN:
        return d, span
    present = np.zeros(span, dtype=bool)
    present[d] = True
    rank = np.cumsum(present) - 1
    return rank[d], int(rank[-1]) + 1


def _radix_order(key: np.ndarray, bits: int) -> np.ndarray:
    """Stable argsort of `key` (< 2**bits), least significant 16-bit digit first."""
    order = np.argsort(_digit(key, 0, bits), kind="stable")
    for shift in range(_DIGIT_BITS, bits, _DIGIT_BITS):
        order = order[np.argsort(_digit(key, shift, bits)[order], kind="stable")]
    return order


def _digit(key: np.ndarray, shift: int, bits: int) -> np.ndarray:
    d = key >> shift if shift else key
    if bits - shift > _DIGIT_BITS:
        d = d & 0xFFFF
    return d.astype(np.uint8 if bits - shift <= 8 else np.uint16)


@dataclass
class NameSummary:
    """One row per name (arrays by group); `order` is the display order."""

    kind: str
    codes: np.ndarray
    names: list[str]
    styles: list[str] | None
    time_pct: np.ndarray
    total: np.ndarray
    count: np.ndarray
    mean: np.ndarray
    median: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    stdev: np.ndarray
    order: np.ndarray
    base_order: np.ndarray  # total descending, then by name code: the nsys order

    def __len__(self) -> int:
        return len(self.codes)

    def values(self, key: str) -> np.ndarray | list[str]:
        attr = {"style": "styles", "name": "names"}.get(key, key)
        if attr not in _SUMMARY_FIELDS:
            raise QueryError(f"no summary column {key!r}")
        return getattr(self, attr)

    def value(self, key: str, group: int) -> object:
        vals = self.values(key)
        return None if vals is None else vals[group]

    def sorted(self, key: str, descending: bool) -> NameSummary:
        """Re-sorted by `key` (stable over the nsys order)."""
        base = self.base_order
        vals = self.values(key)
        if vals is None:
            return self
        if isinstance(vals, list):
            ranks = _ranks(vals)
            k = ranks[base]
        else:
            k = np.asarray(vals, dtype=np.float64)[base]
        perm = np.argsort(-k if descending else k, kind="stable")
        return replace(self, order=base[perm])

    def to_arrow(self, specs: tuple[cols.SummaryColumn, ...]) -> pa.Table:
        from tuiperf.model.fmt import clean

        data = {}
        for c in specs:
            vals = self.values(c.key)
            if isinstance(vals, list):
                data[c.export] = arrays.from_strings([clean(vals[i]) for i in self.order])
            else:
                data[c.export] = arrays.from_numpy(np.asarray(vals)[self.order])
        return pa.table(data)


_SUMMARY_FIELDS = frozenset(
    [
        "names",
        "styles",
        "time_pct",
        "total",
        "count",
        "mean",
        "median",
        "minimum",
        "maximum",
        "stdev",
    ]
)


def _ranks(labels: list[str]) -> np.ndarray:
    order = sorted(range(len(labels)), key=lambda i: labels[i])
    ranks = np.empty(len(labels), dtype=np.int64)
    ranks[order] = np.arange(len(labels))
    return ranks


class Events:
    """The event tables of one trace, each built when first asked for."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._tables: dict[str, EventTable] = {}

    def table(self, kind: str) -> EventTable:
        hit = self._tables.get(kind)
        if hit is None:
            table = self.trace.table(kind)
            if kind == "graphs":  # with the API call that launched each execution
                from tuiperf.model.timeline.graph_launch import with_launch

                table = with_launch(self.trace, table)
            hit = EventTable(kind, table)
            self._tables[kind] = hit
        return hit

    def run(self, query: Query, progress: Progress | None = None) -> View:
        return self.table(query.kind).run(query, progress)


_UNITS = {"": 1, "ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)?\s*$", re.IGNORECASE)


def parse_duration(text: str) -> int | None:
    """`10us`, `1.5 ms`, `2000` (ns) -> ns; '' -> None (no minimum)."""
    if not text.strip():
        return None
    m = _DURATION.match(text)
    if m is None:
        raise QueryError(f"not a duration: {text!r} (try 10us, 1.5ms or 2000 for ns)")
    return round(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])
