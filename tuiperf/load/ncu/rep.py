"""Read an Nsight Compute `.ncu-rep` through NVIDIA's `ncu_report` module into Arrow.

`ncu_report` comes from the PyPI package `ncu-report` (the optional extra
`tuiperf[ncu]`) or from an installed Nsight Compute (`<install>/extras/python`); the
one Python imports as `ncu_report` wins, else the newest install. Readers differ in what they
have (tests/data/ncu_api/ncu_versions.md); `ncu_layout` fills in sections and labels for
those without them.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import importlib
import importlib.util
import os
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa

from tuiperf import settings
from tuiperf.errors import BadReportError, MissingToolError
from tuiperf.load.ncu import layout as ncu_layout
from tuiperf.load.ncu.api import NcuAction, NcuContext, NcuMetric, NcuSection
from tuiperf.load.ncu.session import tool_version
from tuiperf.load.progress import OnProgress, Progress
from tuiperf.model.ncu.metrics import make_table, render_message

MAGIC = b"NVR\x00"

#: where an installed Nsight Compute keeps its Python module
_INSTALL_GLOBS = (
    "/usr/local/cuda*/nsight-compute*/extras/python",
    "/opt/nvidia/nsight-compute/*/extras/python",
    "/usr/local/NVIDIA-Nsight-Compute*/extras/python",
    "/opt/nvidia/nsight-compute*/extras/python",
)
_RULE_TYPES = {1: "ok", 2: "optimization", 3: "warning", 4: "error"}
_SPEEDUP_TYPES = {1: "local", 2: "global"}
_SEVERITY = {0: "default", 1: "low", 2: "high"}


def _install_dirs() -> list[str]:
    found = []
    env = settings.ncu_python_path()
    if env:
        found.append(env)
    for pattern in _INSTALL_GLOBS:
        found.extend(sorted(glob.glob(pattern), reverse=True))  # newest version first
    return [
        d
        for d in found
        if os.path.isfile(os.path.join(d, "ncu_report.py"))
        or os.path.isdir(os.path.join(d, "ncu_report"))
    ]


def can_read(module: ModuleType) -> bool:
    """The reader has what tuiperf reads through: a kernel's name, metrics by name and
    rule results. Sections and labels come from the bundled layout where it has none
    (Nsight Compute 2025.x's `extras/python`, ncu-report before 2026.3)."""
    return not ncu_layout.missing(getattr(module, "IAction", None))


def reader_version(module: ModuleType) -> str:
    """The reader's version: the `ncu-report` package's, else the Nsight Compute install's
    (from the module's path, `…/nsight-compute/2025.3.1/extras/python`)."""
    return _version_at(str(getattr(module, "__file__", "") or ""))


def _version_at(where: str) -> str:
    """The version of the reader whose module file is `where` (read before importing it)."""
    found = re.search(r"[Nn]sight[-_ ]?[Cc]ompute[-_/ ]?(\d{4}\.\d+(?:\.\d+)*)", where)
    if found:
        return found.group(1)
    if where:  # a package beside its metadata (site-packages, or a --target folder)
        for info in sorted(Path(where).parent.parent.glob("ncu_report-*.dist-info")):
            return info.name.removeprefix("ncu_report-").removesuffix(".dist-info")
    try:
        from importlib.metadata import version

        return version("ncu-report")
    except Exception:  # not installed as a package: no version to name
        return "of unknown version"


#: the first reader known not to crash after pyarrow (ncu_versions.md: 2025.3.1 crashes,
#: 2026.2.0, 2026.3.0 and 2026.3.1 read every metric either way)
SAFE_AFTER_PYARROW = (2026, 2)


def needs_shared_libstdcxx(version: str) -> bool:
    """Whether the reader of `version` gets libstdc++ made global before it loads: every
    reader older than SAFE_AFTER_PYARROW, and any whose version cannot be read (an
    unknown reader may be an old one; sharing loads nothing, crashing loses the run)."""
    found = re.match(r"(\d{4})\.(\d+)", version)
    return found is None or (int(found[1]), int(found[2])) < SAFE_AFTER_PYARROW


@functools.cache
def share_libstdcxx() -> bool:
    """Make the libstdc++ that pyarrow loaded visible to libraries loaded after it, and
    load nothing new (RTLD_NOLOAD); False where none is loaded (or not Linux). Once per
    process (cached): the dynamic linker keeps the library global from then on.

    The ncu_report of Nsight Compute 2025.3.1 (its extras/python module and the
    ncu-report 2025.3.1 wheel) carries its own C++ runtime and dies with SIGSEGV in
    `IMetric.unit()` when pyarrow's libarrow was loaded before it with its libstdc++
    private (RTLD_LOCAL, as Python loads extension modules); with that libstdc++ global
    it reads every metric (examples/graphs/ncu_stdcxx_probe.py, ncu_versions.md). Called
    only before such a reader loads (`needs_shared_libstdcxx`)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL | os.RTLD_NOLOAD)
    except (OSError, AttributeError):  # not loaded: nothing to share
        return False
    return True


def import_ncu_report() -> ModuleType:
    """The `ncu_report` module, from the venv or an Nsight Compute install: the first that
    can read what tuiperf needs, else a one-line error naming the one found and the fix.
    sys.path is as it was afterwards: an install's folder is on it only for the import."""
    found = _import_reader()
    if found is not None and can_read(found):
        return found
    if found is not None:
        gaps = ncu_layout.missing(getattr(found, "IAction", None))
        raise MissingToolError(
            f"the ncu_report module of Nsight Compute {reader_version(found)} "
            f"({getattr(found, '__file__', '?')}) has no {', '.join(gaps)}, which tuiperf "
            "reads through; run `pip install 'tuiperf[ncu]'` for NVIDIA's ncu-report "
            "package (or export with `ncu -i R --csv --page raw`)"
        )
    raise MissingToolError(
        "reading .ncu-rep files needs NVIDIA's ncu_report module; "
        "run `pip install 'tuiperf[ncu]'` (or export the report with `ncu -i R --csv --page raw`)"
    )


def _import_reader() -> ModuleType | None:
    """The module Python imports as `ncu_report`, else the newest install's; one copy of
    the C extension per process, so the first that imports is the one."""
    loaded = sys.modules.get("ncu_report")
    if loaded is not None:  # imported before: too late to share anything
        return loaded
    try:
        spec = importlib.util.find_spec("ncu_report")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        module = _import_from(spec.origin or "", None)
        if module is not None:
            return module
    for d in _install_dirs():
        module = _import_from(os.path.join(d, "ncu_report.py"), d)
        if module is not None:
            return module
    return None


def _import_from(where: str, folder: str | None) -> ModuleType | None:
    """`ncu_report` with `folder` (if any) on sys.path for the import only; libstdc++
    shared first where the reader found at `where` needs it."""
    if needs_shared_libstdcxx(_version_at(where)):
        share_libstdcxx()
    added = folder if folder is not None and folder not in sys.path else None
    if added is not None:
        sys.path.append(added)
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        return None
    finally:
        if added is not None and added in sys.path:
            sys.path.remove(added)


def check_magic(path: Path) -> None:
    try:
        with open(path, "rb") as f:
            head = f.read(len(MAGIC))
    except OSError as e:
        raise BadReportError(f"{path}: cannot read ({e.strerror or e})") from e
    if head != MAGIC:
        raise BadReportError(f"{path}: not an Nsight Compute report (no NVR header)")


@contextlib.contextmanager
def _quiet_fd2() -> Iterator[None]:
    """Silence the C++ library's own log lines on stderr (protobuf parse errors on a
    damaged file: absl's `Can't parse message of type ...`); the user gets one line from
    us instead. fd 2 belongs to the whole process, so only the main thread (a headless
    command) points it elsewhere, for this call alone, and always puts it back. From any
    other thread (the viewer's loaders) it does nothing: the viewer draws on fd 2 while its
    worker reads, and a second worker would restore the first one's silence."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            sys.stderr.flush()
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def open_context(path: Path) -> NcuContext:
    """ncu_report's IContext, or a one-line error for damaged and foreign files."""
    check_magic(path)
    ncu = import_ncu_report()
    try:
        with _quiet_fd2():
            ctx = ncu.load_report(str(path))
    except Exception as e:  # the SWIG layer raises plain RuntimeError and others
        raise BadReportError(f"{path}: cannot read the Nsight Compute report ({e})") from e
    if ctx is None or ctx.num_ranges() == 0:
        raise BadReportError(f"{path}: damaged or truncated Nsight Compute report (no ranges)")
    return ctx


def actions(ctx: NcuContext) -> list[NcuAction]:
    out: list[NcuAction] = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        out.extend(rng.action_by_idx(i) for i in range(rng.num_actions()))
    return out


def load_ncu_rep(
    path: Path, progress: OnProgress | None = None
) -> tuple[dict[str, pa.Table], dict[str, Any]]:
    """The four KernelMetrics tables and the report's meta data."""
    if progress is not None:
        progress(Progress("open report", detail=path.name))
    ctx = open_context(path)
    acts = actions(ctx)
    if not acts:
        raise BadReportError(f"{path}: the Nsight Compute report holds no kernels")
    cols: dict[str, dict[str, list[Any]]] = {
        n: {} for n in ("kernels", "sections", "metrics", "rules")
    }
    for kid, a in enumerate(acts):
        if progress is not None:  # per result: the viewer shows it and can cancel here
            progress(Progress("read kernel", kid + 1, len(acts)))
        _append(cols["kernels"], _kernel_row(kid, a))
        rules = ncu_layout.rule_dicts(a)
        secs = _sections(a, [d.get("section_identifier") or "" for d in rules])
        for pos, s in enumerate(secs):
            _append(
                cols["sections"],
                {
                    "kernel_id": kid,
                    "section_id": s.identifier(),
                    "section_name": s.name(),
                    "order": s.order(),
                    "parent_id": s.parent_identifier() or None,
                    "position": pos,
                },
            )
        for row in _metric_rows(kid, a, secs):
            _append(cols["metrics"], row)
        for row in _rule_rows(kid, rules, secs):
            _append(cols["rules"], row)
    tables = {n: make_table(n, c) for n, c in cols.items()}
    return tables, _meta(path, ctx, tables)


def _append(cols: dict[str, list[Any]], row: dict[str, Any]) -> None:
    n = len(next(iter(cols.values()))) if cols else 0
    for k, v in row.items():
        col = cols.get(k)
        if col is None:  # a column first seen now: null in the rows before
            col = cols[k] = [None] * n
        col.append(_valid_utf8(v))


def _valid_utf8(v: Any) -> Any:
    """Strings from ncu_report (also inside lists and dicts) as valid UTF-8: bytes of a
    damaged report that are not UTF-8 come through as lone surrogates, and become U+FFFD
    here (as names from a SQLite export do)."""
    if type(v) is str:
        if v.isascii():
            return v
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return v.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return v
    if type(v) is list:
        return [_valid_utf8(x) for x in v]
    if type(v) is dict:
        return {k: _valid_utf8(x) for k, x in v.items()}
    return v


def _sections(a: NcuAction, ruled: list[str]) -> list[NcuSection]:
    """Sections in ncu's order: by `order()`, ties by display name (as ncu prints them);
    the reader's own, or built from the bundled layout (ncu_layout). Every section a rule
    result names (`ruled`) is one of them, so that no reader loses a rule result."""
    secs: list[NcuSection] = list(ncu_layout.sections(a, ruled))
    have = {s.identifier() for s in secs}
    for sid in dict.fromkeys(ruled):
        if sid and sid not in have:
            secs.append(ncu_layout.BareSection(sid))
            have.add(sid)
    return sorted(secs, key=lambda s: (s.order(), s.name()))


def _value(m: NcuMetric) -> tuple[float | None, str | None]:
    try:
        v = m.value()
    except Exception:
        return None, None
    if v is None:
        return None, None
    if isinstance(v, str):
        return None, v
    try:
        return float(v), None
    except (TypeError, ValueError):
        return None, str(v)


def _num(a: NcuAction, name: str) -> float | None:
    m = a.metric_by_name(name)
    return None if m is None else _value(m)[0]


def _int(a: NcuAction, name: str) -> int | None:
    v = _num(a, name)
    return None if v is None else int(v)


def _text(a: NcuAction, name: str) -> str | None:
    m = a.metric_by_name(name)
    if m is None:
        return None
    v, t = _value(m)
    return t if t is not None else (None if v is None else str(v))


def _kernel_row(kid: int, a: NcuAction) -> dict[str, Any]:
    major, minor = (
        _int(a, "device__attribute_compute_capability_major"),
        _int(a, "device__attribute_compute_capability_minor"),
    )
    row: dict[str, Any] = {
        "id": kid,
        "name": a.name(),
        "demangled": a.name(a.NameBase_DEMANGLED) or None,
        "mangled": a.name(a.NameBase_MANGLED) or None,
        "device": _int(a, "launch__device_id"),
        "device_name": _text(a, "device__attribute_display_name"),
        "cc": f"{major}.{minor}" if major is not None else None,
        "context": _int(a, "launch__context_id"),
        "stream": _int(a, "launch__stream_id"),
        "registers": _int(a, "launch__registers_per_thread"),
        "shared_static": _int(a, "launch__shared_mem_per_block_static"),
        "shared_dynamic": _int(a, "launch__shared_mem_per_block_dynamic"),
        "duration_ns": _num(a, "gpu__time_duration.sum"),
    }
    for p in ("grid", "block"):
        for d in "xyz":
            row[f"{p}_{d}"] = _int(a, f"launch__{p}_dim_{d}")
    row["nvtx_push_pop"], row["nvtx_start_end"] = _nvtx(a)
    return row


def _nvtx(a: NcuAction) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    push: list[dict[str, str]] = []
    start: list[dict[str, str]] = []
    try:
        state = a.nvtx_state()
    except Exception:
        return push, start
    if state is None:
        return push, start
    for d in state.domains():
        dom = state.domain_by_id(d)
        name = dom.name()
        push.extend({"domain": name, "name": r} for r in dom.push_pop_ranges())
        start.extend({"domain": name, "name": r} for r in dom.start_end_ranges())
    return push, start


def _metric_row(
    kid: int, m: NcuMetric, sid: str | None, sname: str | None, part: str | None
) -> dict[str, Any]:
    value, text = _value(m)
    return {
        "kernel_id": kid,
        "section_id": sid,
        "section_name": sname,
        "part": part,
        "metric": m.name(),
        "label": ncu_layout.label(m) or None,
        "unit": m.unit() or "",
        "value": value,
        "text": text,
    }


#: Header items the Nsight Compute 2025.x CLI prints on its details page that the section
#: files of the PyPI reader (2026.x) define differently: section id -> (label, metric in
#: the report, the CLI's metric name (it orders the page), factor, unit or None to keep).
#: An item replaces the reader's item of the same label, or is added where there is none,
#: when the report holds the metric. Seen on the H200 fixtures (ncu 2025.3.1 pages): the
#: CLI's "L2 Compression Ratio" is the .pct form (x100, %) of the reader's .ratio metric,
#: and its "L2 Compression Input Sectors" has the value of the LRC's input sectors.
_CLI_HEADER_ITEMS: dict[str, tuple[tuple[str, str, str, float, str | None], ...]] = {
    "PmSampling": (
        ("Maximum Sampling Interval", "profiler__pmsampler_interval_time",
         "profiler__pmsampler_interval_time", 1.0, None),
    ),
    "MemoryWorkloadAnalysis": (
        ("L2 Compression Input Sectors", "lrc__ilc_input_sectors.sum",
         "lts__gcomp_input_sectors.sum", 1.0, None),
        ("L2 Compression Ratio", "lts__average_gcomp_output_sector_compression_achieved_rate.ratio",
         "lts__average_gcomp_output_sector_compression_achieved_rate.pct", 100.0, "%"),
    ),
}  # fmt: skip


def _header_rows(kid: int, a: NcuAction, s: NcuSection) -> list[tuple[str, dict[str, Any]]]:
    """(sort name, row) of a section's header items, with the CLI's items (above)."""
    sid, sname = s.identifier(), s.name()
    items = [
        (m.name(), _metric_row(kid, m, sid, sname, "header"))
        for m in s.header_metrics()
        if m is not None
    ]
    for label, name, cli_name, factor, unit in _CLI_HEADER_ITEMS.get(sid, ()):
        m = a.metric_by_name(name)
        if m is None:
            continue
        row = _metric_row(kid, m, sid, sname, "header")
        row["label"] = label
        if row["value"] is not None:
            row["value"] *= factor
        if unit is not None:
            row["unit"] = unit
        items = [(n, r) for n, r in items if r["label"] != label] + [(cli_name, row)]
    return items


def _metric_rows(kid: int, a: NcuAction, secs: list[NcuSection]) -> list[dict[str, Any]]:
    """Section metrics (header then body, each by metric name, as ncu prints them),
    then every other metric of the kernel with no section."""
    rows, seen = [], set()
    for s in secs:
        body = [
            (m.name(), _metric_row(kid, m, s.identifier(), s.name(), "body"))
            for m in s.body_metrics()
            if m is not None
        ]
        for items in (_header_rows(kid, a, s), body):
            for _, row in sorted(items, key=lambda item: item[0]):
                rows.append(row)
                seen.add(row["metric"])
    for name in sorted(a.metric_names()):
        if name not in seen:
            m = a.metric_by_name(name)
            if m is not None:
                rows.append(_metric_row(kid, m, None, None, None))
    return rows


def _rule_rows(
    kid: int, rules: list[dict[str, Any]], secs: list[NcuSection]
) -> list[dict[str, Any]]:
    """Rule results grouped by section in ncu's order; empty type-0 results dropped."""
    rank = {s.identifier(): i for i, s in enumerate(secs)}
    results = []
    for i, d in enumerate(rules):
        msg = d.get("rule_message") or {}
        kind = _RULE_TYPES.get(msg.get("type", 0))
        if kind is None and not msg.get("message"):
            continue
        sid = d.get("section_identifier") or ""
        results.append((rank.get(sid, len(rank)), i, _rule_row(kid, d, msg, kind or "ok", sid)))
    results.sort(key=lambda t: (t[0], t[1]))
    return [r for _, _, r in results]


def _rule_row(
    kid: int, d: dict[str, Any], msg: dict[str, Any], kind: str, sid: str
) -> dict[str, Any]:
    sp = d.get("speedup_estimation") or {}
    focus = [
        {
            "metric": f.get("name"),
            "value": f.get("value"),
            "severity": _SEVERITY.get(f.get("severity"), str(f.get("severity"))),
            "info": f.get("info"),
        }
        for f in d.get("focus_metrics") or ()
    ]
    return {
        "kernel_id": kid,
        "section_id": sid,
        "rule_id": d.get("rule_identifier"),
        "rule_name": d.get("name"),
        "type": kind,
        "title": msg.get("title") or None,
        "message": render_message(msg.get("message") or ""),
        "speedup_type": _SPEEDUP_TYPES.get(int(sp.get("type") or 0)) if sp else None,
        "speedup": sp.get("speedup") if sp else None,
        "focus": focus,
    }


def _meta(path: Path, ctx: NcuContext, tables: dict[str, pa.Table]) -> dict[str, Any]:
    k = tables["kernels"]
    devices: dict[Any, dict[str, Any]] = {}
    for dev, name, cc in zip(
        k.column("device").to_pylist(),
        k.column("device_name").to_pylist(),
        k.column("cc").to_pylist(),
        strict=True,
    ):
        devices.setdefault(dev, {"device": dev, "name": name, "cc": cc})
    try:
        reader = ctx.get_version()
    except Exception:
        reader = ""
    return {
        "source": str(path),
        "format": "ncu-rep",
        "tool": "Nsight Compute",
        "tool_version": tool_version(path),  # what wrote the report
        "reader_version": reader,  # what read it (ncu_report's get_version())
        "ranges": ctx.num_ranges(),
        "kernels": k.num_rows,
        "devices": list(devices.values()),
    }
