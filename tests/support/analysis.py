"""Shared helpers for the analysis tests: real fixtures, and the `nsys analyze` text parser."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from tests.support.data import unxz
from tuiperf.analysis.budget.context import Ctx
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.model.trace import Trace

DATA = Path(__file__).resolve().parents[1] / "data"
NSYS = DATA / "nsys"
REF = DATA / "analysis"
FIXTURES = ("cnn_osrt", "vit_amp", "lstm", "vit_range")


def sqlite_path(name: str) -> Path:
    """The fixture decompressed once per test session (the .xz in tests/data stays)."""
    return unxz(NSYS / f"{name}.sqlite.xz")


@functools.cache
def trace_of(name: str) -> Trace:
    return open_trace(sqlite_path(name), OpenOptions(use_cache=False))


def ctx_of(name: str) -> Ctx:
    return Ctx(trace_of(name))


@functools.cache
def kineto_trace(name: str) -> Trace:
    return open_trace(DATA / "kineto" / f"kineto_{name}.json.gz", OpenOptions(use_cache=False))


def ncu_path(name: str) -> Path:
    return unxz(DATA / "ncu" / f"{name}.ncu-rep.xz")


@functools.cache
def ncu_of(name: str):  # type: ignore[no-untyped-def]
    from tuiperf.load.ncu.open import open_ncu

    return open_ncu(ncu_path(name), OpenOptions(use_cache=False))


def without(trace: Trace, *tables: str) -> Trace:
    """The same trace with some tables dropped (a report traced without NVTX, say)."""
    return Trace({k: v for k, v in trace.tables.items() if k not in tables}, trace.meta)


_HEAD = re.compile(r"^ \*\* .* \((\w+)\):$")


def parse_analyze(text: str) -> dict[str, dict[str, object]]:
    """`nsys analyze` text -> {rule: {"rows": [[cell, ...]], "truncated": bool}}.

    Cells are cut at the column spans of the dashed line under the header, so empty
    cells (Green Context ID) stay in place."""
    out: dict[str, dict[str, object]] = {}
    lines = text.splitlines()
    rule = None
    i = 0
    while i < len(lines):
        m = _HEAD.match(lines[i])
        if m:
            rule = m.group(1)
            out[rule] = {"rows": [], "truncated": False, "header": []}
        elif rule and re.match(r"^ -+( +-+)*$", lines[i]):
            spans = [(s.start(), s.end()) for s in re.finditer(r"-+", lines[i])]
            out[rule]["header"] = [lines[i - 1][a:b].strip() for a, b in spans]
            j = i + 1
            while j < len(lines) and lines[j].strip():
                row = lines[j]
                cells = [row[a:b].strip() for a, b in spans]
                cells[-1] = row[spans[-1][0] :].strip()
                out[rule]["rows"].append(cells)  # type: ignore[union-attr]
                j += 1
            i = j
            continue
        elif rule and lines[i].startswith("Only the top"):
            out[rule]["truncated"] = True
        i += 1
    return out


def reference(name: str) -> dict[str, dict[str, object]]:
    return parse_analyze((REF / f"analyze_{name}.txt").read_text())
