"""Markdown under a size budget (`--max-chars`), and the step budget's bar as plain text.

A document is a head (in versions from fullest to smallest), items in rank order and
footers. Under a budget the fullest head that fits is kept, then as many items as fit in
order — the lower ones go first — with a line saying how many were dropped, then the footers
that still fit; where not even the smallest head and that line fit, the head is cut so the
line does. The result is never longer than the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tuiperf.analysis.budget.step_budget import PARTS, SHORT, Parts
from tuiperf.report.budget import ASCII_GLYPH, GLYPH, cells

BAR_WIDTH = 50


def text_bar(parts: Parts, width: int = BAR_WIDTH, ascii_only: bool = False) -> str:
    """The bar and its legend as two lines of plain text (for a Markdown code block)."""
    glyph = ASCII_GLYPH if ascii_only else GLYPH
    bar = "".join(glyph[p] * k for p, k in cells(parts, width))
    legend = "  ".join(
        f"{glyph[p]} {SHORT[p]} {parts.pct(p):.1f}%" for p in PARTS if parts.ns[p] > 0
    )
    return f"{bar}\n{legend}"


def fit(
    heads: Sequence[str],
    items: Sequence[str | Sequence[str]],
    dropped: Callable[[int], str],
    footers: Sequence[str] = (),
    max_chars: int | None = None,
) -> str:
    """The document within `max_chars` (None: everything, the fullest versions).

    `items` in rank order, each a text or its versions from fullest to smallest (a finding
    with its evidence table, then without). The head kept is the fullest among those that
    let the most items in: a finding counts for more than the budget's table."""
    versions = [[i] if isinstance(i, str) else list(i) for i in items]
    if max_chars is None:
        return heads[0] + "".join(v[0] for v in versions) + "".join(footers)
    best: tuple[int, str] | None = None
    for head in heads:
        body = _fill(head, versions, dropped, max_chars)
        if body is not None and (best is None or body[0] > best[0]):
            best = body
    if best is None:  # not even the smallest head with its note: cut the head, keep the note
        return _cut(heads[-1], dropped(len(versions)) if versions else "", max_chars)
    out = best[1]
    for f in footers:
        if len(out) + len(f) <= max_chars:
            out += f
    return out


def _cut(head: str, note: str, max_chars: int) -> str:
    """`head` cut to leave room for `note` (which says what is left out); the note alone,
    cut, only where the budget is shorter than it."""
    if len(note) > max_chars:
        return note[: max(max_chars - 1, 0)] + "…"
    room = max_chars - len(note)
    if len(head) <= room:
        return head + note
    mark = "…\n\n"
    if room <= len(mark):
        return note
    part = head[: room - len(mark)]
    if part.count("`") % 2:  # not inside a code span that the note's backticks would close
        part = part[: part.rfind("`")]
    return part + mark + note


def _fill(
    head: str, versions: list[list[str]], dropped: Callable[[int], str], max_chars: int
) -> tuple[int, str] | None:
    """(items taken, text): `head`, then items in order while they fit, then the note."""
    n = len(versions)
    if len(head) > max_chars:
        return None
    out, k = head, 0
    while k < n:
        tail = sum(len(v[-1]) for v in versions[k + 1 :])  # the rest, at their smallest
        if len(out) + len(versions[k][-1]) + tail <= max_chars:  # all of them can follow
            room = max_chars - len(out) - tail
        else:  # leave room for the note on what is left out
            room = max_chars - len(out) - (len(dropped(n - k - 1)) if k + 1 < n else 0)
        text = next((v for v in versions[k] if len(v) <= room), None)
        if text is None:
            break
        out += text
        k += 1
    if k < n and len(out) + len(dropped(n - k)) > max_chars:
        return None  # not even the note fits after this head
    return k, out + (dropped(n - k) if k < n else "")
