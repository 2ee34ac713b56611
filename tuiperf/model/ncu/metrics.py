"""Nsight Compute results as Arrow tables, and pure queries over them.

`KernelMetrics` holds four tables (schemas below), built by `tuiperf.load.ncu.rep`
(the `ncu_report` API) or `tuiperf.load.ncu.csv_export` (ncu's CSV pages):

* ``kernels``: one row per profiled kernel (ncu's "ID"), launch configuration,
  duration, NVTX context.
* ``sections``: per kernel, the sections in ncu's order (``position``).
* ``metrics``: long form, one row per kernel × section × metric, values in base
  units (ns, byte, hz, byte/s …) as float64, string metrics in ``text``.
  Metrics that belong to no section have a null ``section_id``.
* ``rules``: ncu's rule results, messages rendered as ncu's CSV page does.

Rows of ``sections``, ``metrics`` and ``rules`` are grouped by kernel, in kernel
order, so a kernel's rows are one contiguous slice.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tuiperf.model.ncu.names import normalize

_DICT = pa.dictionary(pa.int32(), pa.string())
_NVTX = pa.list_(pa.struct([("domain", pa.string()), ("name", pa.string())]))
_FOCUS = pa.list_(
    pa.struct(
        [
            ("metric", pa.string()),
            ("value", pa.float64()),
            ("severity", pa.string()),
            ("info", pa.string()),
        ]
    )
)

KERNELS_SCHEMA = pa.schema(
    [
        ("id", pa.int32()),
        ("name", pa.string()),
        ("demangled", pa.string()),
        ("mangled", pa.string()),
        ("device", pa.int32()),
        ("device_name", pa.string()),
        ("cc", pa.string()),
        ("context", pa.int64()),
        ("stream", pa.int64()),
        ("process_id", pa.int64()),
        ("process_name", pa.string()),
        ("nvtx_tid", pa.int64()),
        ("grid_x", pa.int32()),
        ("grid_y", pa.int32()),
        ("grid_z", pa.int32()),
        ("block_x", pa.int32()),
        ("block_y", pa.int32()),
        ("block_z", pa.int32()),
        ("registers", pa.int32()),
        ("shared_static", pa.int64()),
        ("shared_dynamic", pa.int64()),
        ("duration_ns", pa.float64()),
        ("nvtx_push_pop", _NVTX),
        ("nvtx_start_end", _NVTX),
    ]
)
SECTIONS_SCHEMA = pa.schema(
    [
        ("kernel_id", pa.int32()),
        ("section_id", pa.string()),
        ("section_name", pa.string()),
        ("order", pa.int32()),
        ("parent_id", pa.string()),
        ("position", pa.int32()),
    ]
)
METRICS_SCHEMA = pa.schema(
    [
        ("kernel_id", pa.int32()),
        ("section_id", _DICT),
        ("section_name", _DICT),
        ("part", _DICT),
        ("metric", _DICT),
        ("label", _DICT),
        ("unit", _DICT),
        ("value", pa.float64()),
        ("text", pa.string()),
    ]
)
RULES_SCHEMA = pa.schema(
    [
        ("kernel_id", pa.int32()),
        ("section_id", pa.string()),
        ("rule_id", pa.string()),
        ("rule_name", pa.string()),
        ("type", pa.string()),
        ("title", pa.string()),
        ("message", pa.string()),
        ("speedup_type", pa.string()),
        ("speedup", pa.float64()),
        ("focus", _FOCUS),
    ]
)
SCHEMAS = {
    "kernels": KERNELS_SCHEMA,
    "sections": SECTIONS_SCHEMA,
    "metrics": METRICS_SCHEMA,
    "rules": RULES_SCHEMA,
}

#: the section id given to metrics of an input without sections (ncu's raw CSV page)
RAW_SECTION = ""
#: rule types in the data, and the three-letter code ncu prints for each
RULE_CODES = {"ok": "INF", "optimization": "OPT", "warning": "WRN", "error": "ERR"}


def make_table(name: str, cols: dict[str, list[Any]]) -> pa.Table:
    """A table of `SCHEMAS[name]` from Python lists (missing columns are null)."""
    schema = SCHEMAS[name]
    n = max((len(v) for v in cols.values()), default=0)
    arrays = []
    for f in schema:
        values = cols.get(f.name, [None] * n)
        if pa.types.is_dictionary(f.type):
            arrays.append(pa.array(values, pa.string()).dictionary_encode())
        else:
            arrays.append(pa.array(values, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


# --- units ---------------------------------------------------------------------------------

_PREFIX = {
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
}
_SCALED = ("byte", "hz")
#: time units: (factor to ns as a quantity, factor to "per second" as a denominator);
#: ncu prints `us`, older versions `usecond`
_TIME = {
    "ns": (1.0, 1e9),
    "us": (1e3, 1e6),
    "ms": (1e6, 1e3),
    "s": (1e9, 1.0),
    "nsecond": (1.0, 1e9),
    "usecond": (1e3, 1e6),
    "msecond": (1e6, 1e3),
    "second": (1e9, 1.0),
}


def _part(u: str, denominator: bool) -> tuple[float, str]:
    if u in _TIME:
        to_ns, per_s = _TIME[u]
        return (per_s, "s") if denominator else (to_ns, "ns")
    for base in _SCALED:
        if u.endswith(base) and u[: -len(base)] in _PREFIX:
            return _PREFIX[u[: -len(base)]], base
    return 1.0, u


def to_base(unit: str) -> tuple[float, str]:
    """The factor that turns a value printed in `unit` into base units, and that unit.

    `us` -> (1e3, `ns`); `Gbyte/s` -> (1e9, `byte/s`); `sector/us` -> (1e6, `sector/s`).
    As ncu does, a prefix on byte or hz scales the value even in a denominator
    (`%/Kbyte` is 1e3 × `%/byte`); a time in a denominator is a rate per second.
    """
    unit = (unit or "").strip()
    num, _, den = unit.partition("/")
    f, base = _part(num, False)
    if not den:
        return f, base
    g, dbase = _part(den, True)
    return f * g, f"{base}/{dbase}"


_DISPLAY_PREFIX = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3))
_DISPLAY_TIME = (("s", 1e9), ("ms", 1e6), ("us", 1e3))


def display_unit(value: float, unit: str) -> tuple[float, str]:
    """Scale a base-unit value for reading, as ncu's details page does (`69.54 us`)."""
    num, sep, den = unit.partition("/")
    a = abs(value)
    if num == "ns" and not den:
        for u, s in _DISPLAY_TIME:
            if a >= s:
                return value / s, u
        return value, unit
    if num in _SCALED:
        for p, s in _DISPLAY_PREFIX:
            if a >= s:
                return value / s, f"{p}{num}{sep}{den}"
    return value, unit


def format_value(value: float | None, text: str | None = None) -> str:
    """A value for people: integers with separators, others with 2 decimals."""
    if value is None:
        return text or ""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.2f}"


def format_exact(value: float | None, text: str | None = None) -> str:
    """A value for machines: full precision, no separators (`69536`, `27.233303…`)."""
    if value is None:
        return text or ""
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


# --- rule message markup -------------------------------------------------------------------

_MARKUP = re.compile(r"@(section|url):([^@]*)@")


def render_message(message: str) -> str:
    """`@section:Id:Label@` -> `Label`; `@url:Label:URL@` -> `Label (URL)` (ncu's CSV)."""

    def sub(m: re.Match[str]) -> str:
        kind, body = m.group(1), m.group(2)
        if kind == "section":
            _, _, label = body.partition(":")
            return label or body
        label, _, url = body.partition(":")
        return f"{label} ({url})" if url else label

    return _MARKUP.sub(sub, message or "")


# --- result objects ------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    name: str | None  # as ncu names it (`gpu__time_duration.sum`); None from a details CSV
    label: str | None  # the display label (`Duration`)
    unit: str  # base unit (`ns`, `byte/s`, `%`, `` for counts)
    value: float | None  # numeric value in base units
    text: str | None = None  # string value (`CachePreferNone`)
    part: str | None = None  # `header`, `body` or None
    section_id: str | None = None

    @property
    def title(self) -> str:
        return self.label or self.name or ""

    def display(self) -> tuple[str, str]:
        """(value, unit) scaled for reading."""
        if self.value is None:
            return self.text or "", ""
        v, u = display_unit(self.value, self.unit)
        return format_value(v), u

    def display_text(self) -> str:
        """`value unit` scaled for reading (`69.54 us`), as one string."""
        value, unit = self.display()
        return f"{value} {unit}".strip()


@dataclass(frozen=True)
class FocusMetric:
    metric: str
    value: float | None
    severity: str
    info: str


@dataclass(frozen=True)
class RuleResult:
    kernel_id: int
    section_id: str
    rule_id: str
    rule_name: str | None
    type: str  # ok, optimization, warning, error
    title: str | None
    message: str
    speedup_type: str | None  # local, global
    speedup: float | None  # estimated speedup, percent
    focus: tuple[FocusMetric, ...] = ()

    @property
    def code(self) -> str:
        return RULE_CODES.get(self.type, self.type.upper()[:3])


def speedup_words(r: RuleResult) -> str:
    """The estimated speedup as ncu prints it: `Est. Speedup: 25%` (global) or
    `Est. Local Speedup: 87.5%`, 4 significant digits; empty without an estimate."""
    if r.speedup is None:
        return ""
    kind = "Local " if r.speedup_type == "local" else ""
    return f"Est. {kind}Speedup: {r.speedup:.4g}%"


@dataclass(frozen=True)
class Section:
    id: str
    name: str
    order: int | None
    parent_id: str | None
    metrics: tuple[Metric, ...] = ()
    rules: tuple[RuleResult, ...] = ()


@dataclass(frozen=True)
class Kernel:
    id: int
    name: str
    demangled: str | None
    mangled: str | None
    device: int | None
    stream: int | None
    grid: tuple[int, int, int] | None
    block: tuple[int, int, int] | None
    registers: int | None
    duration_ns: float | None
    nvtx: tuple[str, ...] = ()  # push/pop stack, outermost first (`step 3`, `forward`)
    row: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def display_name(self) -> str:
        return self.demangled or self.name or self.mangled or f"kernel {self.id}"

    @property
    def ncu_name(self) -> str:
        """The name as ncu's CSV pages print it (`at::vectorized_elementwise_kernel<4, …>`
        for the API's `at::native::…<(int)4, …>`); the full demangled name stays in
        `demangled`."""
        return normalize(self.demangled) if self.demangled else self.display_name


def _dims(row: dict[str, Any], p: str) -> tuple[int, int, int] | None:
    x, y, z = (row.get(f"{p}_{d}") for d in "xyz")
    if x is None or y is None or z is None:
        return None
    return int(x), int(y), int(z)


def kernel_from_row(row: dict[str, Any]) -> Kernel:
    return Kernel(
        id=row["id"],
        name=row.get("name") or "",
        demangled=row.get("demangled"),
        mangled=row.get("mangled"),
        device=row.get("device"),
        stream=row.get("stream"),
        grid=_dims(row, "grid"),
        block=_dims(row, "block"),
        registers=row.get("registers"),
        duration_ns=row.get("duration_ns"),
        nvtx=tuple(r["name"] for r in row.get("nvtx_push_pop") or ()),
        row=row,
    )


# --- the model -----------------------------------------------------------------------------


def _slices(table: pa.Table, ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    col = table.column("kernel_id").to_numpy() if table.num_rows else np.zeros(0, np.int32)
    out = {}
    for k in ids:
        lo = int(np.searchsorted(col, k, "left"))
        hi = int(np.searchsorted(col, k, "right"))
        out[k] = (lo, hi)
    return out


class KernelMetrics:
    """The kernels of one Nsight Compute report and their sections, metrics and rules."""

    def __init__(self, tables: dict[str, pa.Table], meta: dict[str, Any] | None = None) -> None:
        self.tables = {n: tables.get(n, SCHEMAS[n].empty_table()) for n in SCHEMAS}
        self.meta = dict(meta or {})
        self._ids: list[int] = self.kernels.column("id").to_pylist()
        self._index = {k: i for i, k in enumerate(self._ids)}
        self._cut = {
            n: _slices(self.tables[n], self._ids) for n in ("sections", "metrics", "rules")
        }
        self._by_name: dict[int, dict[str, Metric]] = {}

    @property
    def kernels(self) -> pa.Table:
        return self.tables["kernels"]

    def kernel_ids(self) -> list[int]:
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def has_nvtx(self) -> bool:
        """Whether the capture recorded NVTX contexts (`ncu --nvtx`) for any kernel."""
        col = self.kernels.column("nvtx_push_pop") if len(self) else None
        return col is not None and any(col.to_pylist())

    def kernel(self, kernel_id: int) -> Kernel:
        i = self._index[kernel_id]
        return kernel_from_row(self.kernels.slice(i, 1).to_pylist()[0])

    def rows(self, name: str, kernel_id: int) -> pa.Table:
        """The rows of table `name` (sections, metrics, rules) for one kernel."""
        lo, hi = self._cut[name].get(kernel_id, (0, 0))
        return self.tables[name].slice(lo, hi - lo)

    def metrics_of(self, kernel_id: int, details: str = "all") -> list[Metric]:
        """The kernel's metrics; `details="header"` keeps ncu's header metrics only
        (those of a section, not marked `body`)."""
        t = self.rows("metrics", kernel_id)
        if details == "header" and t.num_rows:
            part = pc.fill_null(t["part"].cast(pa.string()), "header")
            t = t.filter(pc.and_(pc.is_valid(t["section_id"]), pc.equal(part, "header")))
        cols = ("metric", "label", "unit", "value", "text", "part", "section_id")
        return [
            Metric(name, label, unit or "", value, text, part, sid)
            for name, label, unit, value, text, part, sid in zip(
                *(t[c].to_pylist() for c in cols), strict=True
            )
        ]

    def metric(self, kernel_id: int, name: str) -> Metric | None:
        """A metric by its ncu name (`gpu__time_duration.sum`); where several sections show
        it, the first header occurrence (its label is the section's)."""
        by_name = self._by_name.get(kernel_id)
        if by_name is None:
            by_name = {}
            rank = {"header": 0, "body": 1}
            for m in self.metrics_of(kernel_id):
                old = by_name.get(m.name) if m.name is not None else m
                if old is None or rank.get(m.part or "", 2) < rank.get(old.part or "", 2):
                    by_name[m.name] = m  # type: ignore[index]
            self._by_name[kernel_id] = by_name
        return by_name.get(name)

    def value(self, kernel_id: int, name: str) -> float | None:
        m = self.metric(kernel_id, name)
        return None if m is None else m.value

    def rules(self, kernel_id: int | None = None) -> list[RuleResult]:
        ids = self._ids if kernel_id is None else [kernel_id]
        return [_rule(r) for k in ids for r in self.rows("rules", k).to_pylist()]

    def sections(self, kernel_id: int, details: str = "header") -> list[Section]:
        """The kernel's sections in ncu's order, each with its metrics and rule results.

        `details="header"` gives the metrics ncu's details page prints by default,
        `"all"` adds the body metrics. Sections with neither metrics nor rules are left out.
        Metrics of no section (most of a raw CSV page's: those its details page does not
        show) come back as one section with id `RAW_SECTION` named "Metrics", with
        `details="all"` or when the kernel has no section at all.
        """
        metrics: dict[str, list[Metric]] = {}
        for m in self.metrics_of(kernel_id, details):
            if m.section_id is not None:
                metrics.setdefault(m.section_id, []).append(m)
        rules: dict[str, list[RuleResult]] = {}
        for r in self.rules(kernel_id):
            rules.setdefault(r.section_id, []).append(r)
        out = []
        for s in self.rows("sections", kernel_id).to_pylist():
            sid = s["section_id"]
            ms, rs = tuple(metrics.get(sid, ())), tuple(rules.get(sid, ()))
            if ms or rs:
                out.append(Section(sid, s["section_name"], s["order"], s["parent_id"], ms, rs))
        lo, hi = self._cut["sections"].get(kernel_id, (0, 0))
        if lo == hi or details == "all":  # the metrics of no section (a raw-page CSV's)
            loose = tuple(m for m in self.metrics_of(kernel_id) if m.section_id is None)
            if loose:
                out.append(Section(RAW_SECTION, "Metrics", None, None, loose, ()))
        return out

    def section_names(self) -> dict[str, str]:
        """Section identifier -> display name, over all kernels."""
        t = self.tables["sections"]
        return dict(
            zip(
                t.column("section_id").to_pylist(),
                t.column("section_name").to_pylist(),
                strict=True,
            )
        )

    # --- finding kernels ---------------------------------------------------------------
    def find_by_mangled(self, mangled: str) -> list[int]:
        """Kernel ids whose mangled name is exactly `mangled` (nsys `mangledName`)."""
        col = self.kernels.column("mangled").to_pylist()
        return [k for k, m in zip(self._ids, col, strict=True) if m == mangled]

    def matching(self, pattern: str | None) -> list[int]:
        """Kernel ids whose short, demangled or mangled name matches the regex."""
        if not pattern:
            return self.kernel_ids()
        rx = re.compile(pattern)
        cols = [self.kernels.column(c).to_pylist() for c in ("name", "demangled", "mangled")]
        return [
            k
            for k, *names in zip(self._ids, *cols, strict=True)
            if any(n and rx.search(n) for n in names)
        ]

    # --- verdict helpers ---------------------------------------------------------------
    def throughput(self, kernel_id: int) -> tuple[float | None, float | None]:
        """(compute %, memory %) of peak, from GPU Speed Of Light."""
        return (
            self.value(kernel_id, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            self.value(
                kernel_id, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
            ),
        )

    def top_rules(self, kernel_id: int | None = None, n: int = 5) -> list[RuleResult]:
        """Rule results that are not OK, largest estimated speedup first."""
        rs = [r for r in self.rules(kernel_id) if r.type != "ok"]
        rs.sort(key=lambda r: -(r.speedup or 0.0))
        return rs[:n]


def _rule(r: dict[str, Any]) -> RuleResult:
    focus = tuple(
        FocusMetric(f["metric"], f["value"], f["severity"] or "", f["info"] or "")
        for f in r["focus"] or ()
    )
    return RuleResult(
        r["kernel_id"],
        r["section_id"],
        r["rule_id"],
        r["rule_name"],
        r["type"],
        r["title"],
        r["message"] or "",
        r["speedup_type"],
        r["speedup"],
        focus,
    )
