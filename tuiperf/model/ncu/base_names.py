"""Base names that tell kernels apart (the events table's `B`, issue 35 item 6).

`base_name` shortens a long templated name to `elementwise_kernel<…>`; where several names
of one table would get the same base name, `base_names` keeps the template arguments that
tell them apart, written as a person reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tuiperf.model.ncu.names import base_name, short_name, strip_casts

#: a shared start of the differing template arguments at least this long is shown as `…`
_SHARED_PREFIX = 12
#: a shown template argument is cut to this many characters
_ARG_WIDTH = 60
_OPERATOR = re.compile(r"::operator \(\)\(\) const")
_EMPTY_LAMBDA = re.compile(r"\[lambda\(\) \(instance \d+\)\]")
_LAMBDA = re.compile(r"\[lambda\(([^()]*)\) \(instance \d+\)\]")
_PARAMS = re.compile(r"(?<!lambda)(?<=[\w>])\((?:[^()]|\([^()]*\))*\)")
_QUALIFIER = re.compile(r"(?:\(anonymous namespace\)|<unnamed>|\b[A-Za-z_]\w*)::(?!lambda)")
_COLONS = re.compile(r"(?:::)+")


def base_names(names: Iterable[str]) -> dict[str, str]:
    """Each name's base name (`base_name`), told apart from the other names given where
    theirs would be the same: those keep the template arguments in which they differ
    (namespaces, casts and parameter lists dropped, a long start they all share shown as
    `…`), so three cutlass GEMMs are `Kernel2<…128x2_nn_align2>`, `…_nt_…` and `…_tn_…`
    instead of `Kernel2<…>` three times, and PyTorch's elementwise kernels show their
    functor (`vectorized_elementwise_kernel<…, FillFunctor<float>, …>`)."""
    groups: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        groups.setdefault(base_name(name), []).append(name)
    out: dict[str, str] = {}
    for base, group in groups.items():
        if len(group) > 1 and base.endswith("<…>"):
            out.update(_told_apart(base[: -len("<…>")], group))
        else:
            out.update(dict.fromkeys(group, base))
    return out


def _told_apart(short: str, group: list[str]) -> dict[str, str]:
    args = {n: [readable_arg(a) for a in template_args(n)] for n in group}
    picked = _telling_args(list(args.values()))
    if not picked:  # the same template arguments (the names differ in their parameters)
        return dict.fromkeys(group, f"{short}<…>")
    cuts = {k: _shared_start([_arg(a, k) for a in args.values()]) for k in picked}
    out = {}
    for n, a in args.items():
        parts, last = [], -1
        for k in picked:
            if k > last + 1:
                parts.append("…")
            v = _arg(a, k)
            v = "…" + v[cuts[k] :] if cuts[k] else v
            parts.append(v if len(v) <= _ARG_WIDTH else v[: _ARG_WIDTH - 1] + "…")
            last = k
        if last < len(a) - 1:
            parts.append("…")
        out[n] = f"{short}<{', '.join(parts)}>"
    return out


def _telling_args(args: list[list[str]]) -> list[int]:
    """Argument positions that tell the names apart, fewest first: greedily the position
    that leaves the fewest names sharing their shown arguments; [] when none differs."""
    width = max(len(a) for a in args)
    picked: list[int] = []

    def clashes(ks: list[int]) -> int:
        shown = [tuple(_arg(a, k) for k in ks) for a in args]
        return len(shown) - len(set(shown))

    while clashes(picked) and len(picked) < width:
        best = min((k for k in range(width) if k not in picked),
                   key=lambda k: (clashes(sorted([*picked, k])), k))  # fmt: skip
        if clashes(sorted([*picked, best])) == clashes(picked):
            break
        picked = sorted([*picked, best])
    return picked


def readable_arg(arg: str) -> str:
    """A template argument as a person reads it: no casts, namespaces, parameter lists or
    `operator ()` steps; a lambda by its parameters:
    `at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]
    ::operator ()() const::[lambda(float) (instance 1)]` ->
    `direct_copy_kernel_cuda::lambda(float)`."""
    s = strip_casts(arg).removeprefix("void ")
    s = _EMPTY_LAMBDA.sub("", _OPERATOR.sub("", s))
    s = _LAMBDA.sub(r"lambda(\1)", s)
    s = _QUALIFIER.sub("", _COLONS.sub("::", _PARAMS.sub("", s)))
    return _COLONS.sub("::", s).strip(": ")


def _arg(args: list[str], k: int) -> str:
    return args[k] if k < len(args) else ""


def _shared_start(values: list[str]) -> int:
    """Where to cut the start all `values` share (a configuration name such as cutlass's
    `cutlass_80_wmma_…`): after its last `_`, `,` or space, when that start is at least
    _SHARED_PREFIX long and not a qualified or templated type; else 0."""
    common = values[0]
    for v in values[1:]:
        i = 0
        while i < min(len(common), len(v)) and common[i] == v[i]:
            i += 1
        common = common[:i]
    if len(common) < _SHARED_PREFIX or any(ch in common for ch in ":<("):
        return 0  # short, or a type whose structure is worth reading
    cut = max(common.rfind(sep) for sep in "_, ") + 1
    return cut if cut >= _SHARED_PREFIX else 0


def template_args(name: str) -> list[str]:
    """The top-level template arguments of a kernel's name:
    `void ns::k<4, ns::F<float>>(int)` -> ["4", "ns::F<float>"]; [] without any."""
    s = (name or "").strip()
    head = s[5:] if s.startswith("void ") else s
    short = short_name(s)
    start = head.find(short) + len(short) if short in head else -1
    if start < 0 or head[start : start + 1] != "<":
        return []
    args, depth, begin = [], 0, start + 1
    for i in range(start, len(head)):
        ch = head[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
            if depth == 0:
                args.append(head[begin:i].strip())
                return args
        elif ch == "," and depth == 1:
            args.append(head[begin:i].strip())
            begin = i + 1
    return args
