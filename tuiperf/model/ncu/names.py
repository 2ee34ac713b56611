"""Kernel names across tools: ncu's API, ncu's CSV pages and nsys spell them differently.

nsys `demangledName` and `ncu_report`'s NameBase_DEMANGLED write template arguments
with casts (`<(int)4, (bool)0>`); ncu's CSV pages drop them (`<4, 0>`) and shorten
some namespaces (`at::native::` -> `at::`). The mangled name is the same in nsys
(`mangledName`) and `ncu_report` (NameBase_MANGLED): match on it when both have it.
"""

from __future__ import annotations

import re

_CAST = re.compile(r"\((?:unsigned |signed |const )*[A-Za-z_][\w:]*(?: [A-Za-z_]\w*)*\)(?=-?\d)")
_SPACES = re.compile(r"\s+")


def strip_casts(name: str) -> str:
    """`<(int)128, (bool)0>` -> `<128, 0>` (C-style casts before numbers only)."""
    return _CAST.sub("", name)


def normalize(name: str) -> str:
    """A key for loose matching of demangled names between nsys, ncu API and ncu CSV."""
    s = strip_casts(name or "")
    s = s.replace("at::native::", "at::")
    return _SPACES.sub(" ", s).strip()


def short_name(demangled: str) -> str:
    """The function name without return type, namespace-free templates or parameters:
    `void at::foo<8, x>(int)` -> `foo` (ncu's NameBase_FUNCTION for plain kernels)."""
    s = (demangled or "").strip()
    if s.startswith("void "):
        s = s[5:]
    depth, end = 0, len(s)
    for i, ch in enumerate(s):
        if ch in "<(":
            if depth == 0:
                end = i
                break
            depth += 1
    head = s[:end]
    return head.rsplit("::", 1)[-1] or s


def base_name(name: str) -> str:
    """A long templated name made readable: no return type, namespaces, template
    arguments or parameters, `<…>` where there were template arguments:
    `void at::native::elementwise_kernel<128, 4, …>(int, T3)` -> `elementwise_kernel<…>`.
    Names without templates or parameters (`nvjet_…`, NVTX texts, API calls) stay."""
    s = (name or "").strip()
    if "<" not in s and "(" not in s:
        return s
    short = short_name(s)
    head = s[5:] if s.startswith("void ") else s
    cut = head.find(short) + len(short) if short in head else -1
    templated = cut >= 0 and head[cut : cut + 1] == "<"
    return f"{short}<…>" if templated else short
