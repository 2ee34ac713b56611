"""Fixtures of issue 24: the fp32/bf16 `ncu --set full` pair of tests/data/ncu_depth, and
parsers of ncu's own text and CSV exports of them (the references the tests compare with).

This module holds no tests. ncu's text pages are parsed here, in the tests only: tuiperf
reads the reports through ncu_report, and the tests check it against what ncu prints.
"""

from __future__ import annotations

import csv
import functools
import io
import lzma
import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import DATA

DEPTH = DATA / "ncu_depth"
DTYPES = ("fp32", "bf16")


def report(dtype: str, tmp: Path) -> Path:
    """`<dtype>.ncu-rep` decompressed into `tmp` (once)."""
    out = tmp / f"{dtype}.ncu-rep"
    if not out.exists():
        out.write_bytes(lzma.decompress((DEPTH / f"{dtype}.ncu-rep.xz").read_bytes()))
    return out


@functools.cache
def text(name: str) -> str:
    """An export of ncu, e.g. `fp32_rules.txt` or `bf16_raw.csv`, decompressed."""
    return lzma.decompress((DEPTH / f"{name}.xz").read_bytes()).decode("utf-8")


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


# --- ncu -i R --page details --print-rule-details ---------------------------------------


@dataclass
class TextRule:
    section: str
    code: str  # OPT, INF, WRN, ERR
    speedup_type: str  # "", "global" (Est. Speedup) or "local" (Est. Local Speedup)
    speedup: str  # as printed, without the %
    message: str  # the message lines joined by single spaces
    focus: list[tuple[str, str]] = field(default_factory=list)  # KPI (metric, value)


@dataclass
class TextKernel:
    name: str
    rules: list[TextRule] = field(default_factory=list)


_KERNEL = re.compile(r"^  (\S.*) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\), Context \d+")
_RULE = re.compile(r"^    (OPT|INF|WRN|ERR)   (.*?)\s*$")
_SPEEDUP = re.compile(r"^Est\. (Local )?Speedup: ([0-9.eE+-]+)%$")


def text_rules(page: str) -> list[TextKernel]:
    """The rule results of ncu's details text, per kernel in ncu's order."""
    kernels: list[TextKernel] = []
    section = ""
    rule: TextRule | None = None
    kpi = False
    for line in page.splitlines():
        if m := _KERNEL.match(line):
            kernels.append(TextKernel(m.group(1)))
            rule = None
        elif line.startswith("    Section: "):
            section, rule = line[len("    Section: ") :].strip(), None
        elif m := _RULE.match(line):
            rule = TextRule(section, m.group(1), "", "", "")
            kpi = False
            kernels[-1].rules.append(rule)
            s = _SPEEDUP.match(m.group(2))
            if s:
                rule.speedup_type = "local" if s.group(1) else "global"
                rule.speedup = s.group(2)
            else:
                rule.message = m.group(2)
        elif rule is not None and line.startswith("          "):
            _rule_line(rule, line[10:].rstrip(), kpi)
            kpi = kpi or line.strip().startswith("> Key Performance Indicators")
        elif rule is not None and line.strip():
            rule = None
    return kernels


def _rule_line(rule: TextRule, body: str, kpi: bool) -> None:
    if body.startswith("> "):
        return
    if not kpi:
        rule.message = f"{rule.message} {body.strip()}".strip()
        return
    if not body or body.startswith(("---", "Metric Name")):
        return
    name, value = body[:34].strip(), body[35:58].strip()
    if value:  # a new row; a row without a value continues the metric name above
        rule.focus.append((name, value))
    elif rule.focus and name:
        last, v = rule.focus[-1]
        rule.focus[-1] = (last + name, v)


# --- ncu --csv --page raw / details ---------------------------------------------------------


@functools.cache
def raw_rows(dtype: str) -> tuple[list[str], list[str], list[list[str]]]:
    """(header, units, one row per kernel) of `<dtype>_raw.csv`."""
    rows = list(csv.reader(io.StringIO(text(f"{dtype}_raw.csv"))))
    return rows[0], rows[1], rows[2:]


_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def raw_value(dtype: str, kid: int, metric: str) -> float:
    """A metric of the raw page, in base units (`Tbyte/s` -> byte/s, `Ghz` -> hz, `Kbyte`)."""
    header, units, rows = raw_rows(dtype)
    i = header.index(metric)
    unit = units[i]
    prefix = unit[0] if unit[:1] in ("K", "M", "G", "T", "P") and len(unit) > 1 else ""
    return number(rows[kid][i]) * _SCALE[prefix]


def raw_step(dtype: str, kid: int, metric: str) -> float:
    """The precision ncu printed `metric` with, in base units (`0.268435 Gbyte`: 1e3)."""
    header, units, rows = raw_rows(dtype)
    i = header.index(metric)
    cell, unit = rows[kid][i], units[i]
    decimals = len(cell.rpartition(".")[2]) if "." in cell else 0
    prefix = unit[0] if unit[:1] in ("K", "M", "G", "T", "P") and len(unit) > 1 else ""
    return 10.0**-decimals * _SCALE[prefix]


def raw_close(ours: float | None, dtype: str, kid: int, metric: str) -> bool:
    """`ours` (exact) rounds to what the raw page printed for `metric`."""
    want, step = raw_value(dtype, kid, metric), raw_step(dtype, kid, metric)
    return ours is not None and abs(ours - want) <= step / 2 * 1.0001 + 1e-9 * abs(want)


def details_rows(dtype: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text(f"{dtype}_details_base.csv"))))


# --- ncu -i R --page source --csv --print-source sass | cuda,sass -------------------------


@dataclass
class SassRow:
    sass: str
    samples: int
    not_issued: int
    executed: int


def source_sass(dtype: str) -> list[tuple[str, dict[int, SassRow]]]:
    """Per kernel, in ncu's order: (kernel name, address -> row) of the SASS source page."""
    out: list[tuple[str, dict[int, SassRow]]] = []
    header: list[str] = []
    for row in csv.reader(io.StringIO(text(f"{dtype}_source_sass_all.csv"))):
        if row and row[0] == "Kernel Name":
            out.append((row[1], {}))
        elif row and row[0] == "Address":
            header = row
        elif row and row[0].startswith("0x"):
            cell = dict(zip(header, row, strict=False))
            out[-1][1][int(row[0], 16)] = SassRow(
                row[1].strip(),
                int(cell["Warp Stall Sampling (All Samples)"]),
                int(cell["Warp Stall Sampling (Not-issued Samples)"]),
                int(cell["Instructions Executed"]),
            )
    return out


def source_lines(dtype: str) -> dict[tuple[str, int], tuple[str, int, int]]:
    """(file, line) -> (source text, all samples, not-issued samples) of the CUDA/Python
    source page (only kernels with line info have one)."""
    out: dict[tuple[str, int], tuple[str, int, int]] = {}
    path, header = "", []
    for row in csv.reader(io.StringIO(text(f"{dtype}_source_cuda_all.csv"))):
        if row and row[0] == "File Path":
            path = row[1]
        elif row and row[0] == "Line No":
            header = row
        elif row and row[0].isdigit():
            i = header.index("Warp Stall Sampling (All Samples)")
            j = header.index("Warp Stall Sampling (Not-issued Samples)")
            out[path, int(row[0])] = (row[1], int(row[i]), int(row[j]))
    return out
