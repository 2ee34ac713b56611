"""Reading the README and docs/*.md as the tests need them: code, links, headings, tables.

Plain string work on GitHub-flavoured Markdown as these pages write it (fenced blocks with
```, inline code in single backticks, pipe tables); no Markdown library."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


@dataclass(frozen=True)
class Block:
    lang: str
    text: str


def pages() -> list[Path]:
    """README.md and every page under docs/."""
    return [README, *sorted(DOCS.glob("*.md"))]


def blocks(text: str) -> list[Block]:
    return [Block(m.group(1), m.group(2)) for m in _FENCE.finditer(text)]


def prose(text: str) -> str:
    """The text without its fenced blocks (each replaced by an empty line)."""
    return _FENCE.sub("\n", text)


def spans(text: str) -> list[str]:
    """Inline code outside the fenced blocks."""
    return _SPAN.findall(prose(text))


def links(text: str) -> list[str]:
    """Link and image targets outside code."""
    return _LINK.findall(_SPAN.sub("", prose(text)))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code marks and punctuation dropped (word
    characters, spaces and hyphens stay), spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor, numbered as GitHub numbers repeats (`x`, `x-1`, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for m in _HEADING.finditer(prose(text)):
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def section(text: str, heading: str) -> str:
    """The body under a `## heading` (or any level), up to the next heading of that level
    or above; empty when there is none."""
    for m in _HEADING.finditer(text):
        if m.group(2) == heading:
            level = len(m.group(1))
            rest = text[m.end() :]
            stop = re.search(rf"^#{{1,{level}}}\s", rest, re.M)
            return rest[: stop.start()] if stop else rest
    return ""


def sections(text: str, level: int = 2) -> dict[str, str]:
    """Every heading of `level` and the body under it (fenced blocks kept)."""
    found = [m for m in _HEADING.finditer(text) if len(m.group(1)) == level]
    out = {}
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out[m.group(2)] = text[m.end() : end]
    return out


def table_rows(text: str) -> list[list[str]]:
    """The cells of every pipe-table body row outside code (header and rule rows left out)."""
    rows: list[list[str]] = []
    for line in prose(text).splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if cells and all(re.fullmatch(r":?-+:?", c) for c in cells):
            rows[-1:] = []  # the row above the rule is the header
            continue
        rows.append(cells)
    return rows


def code_in(cell: str) -> list[str]:
    return _SPAN.findall(cell)
