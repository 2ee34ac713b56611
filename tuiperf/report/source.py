"""Source hot spots as text: the source lines (where the report has line info) and the
SASS instructions with the most warp-stall samples, then the rules that point at
instructions, each with the instructions it names. Plain strings only."""

from __future__ import annotations

from tuiperf.load.ncu.source import SassLine, SourceHotSpots
from tuiperf.model.fmt import clean
from tuiperf.model.ncu.metrics import RULE_CODES


def _fit(text: str, width: int) -> str:
    text = clean(text)
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:5.1f}%" if total else "   - "


def _where(hs: SourceHotSpots, s: SassLine) -> str:
    line = f"L{s.line}" if s.line is not None else ""
    return f"+0x{s.address - hs.start:05x} {line:>5}"


def hot_spot_lines(hs: SourceHotSpots, width: int = 80, top: int = 12) -> list[str]:
    """The kernel's hot spots, top `top` of each list, fitted to `width` columns."""
    total = hs.samples
    not_issued = sum(s.not_issued for s in hs.sass)
    out = [_fit(f"Source hot spots [{hs.kernel_id}] {hs.name}", width),
           f"{total:,} warp-stall samples ({not_issued:,} not issued), "
           f"{len(hs.sass):,} SASS instructions"]  # fmt: skip
    if not total:
        out.append("No warp-stall samples: capture with --set full or --section SourceCounters.")
    lines = sorted(hs.lines, key=lambda x: (-x.samples, x.file, x.line))
    if lines:
        files = sorted({x.file.rsplit("/", 1)[-1] for x in lines})
        out += ["", _fit(f"Source lines ({', '.join(files)}), most samples first:", width)]
        out.append(f"{'samples':>9} {'share':>6} {'line':>5}  source")
        for x in lines[:top]:
            head = f"{x.samples:>9,} {_pct(x.samples, total)} {x.line:>5}  "
            out.append(head + _fit(x.text, width - len(head)))
    else:
        out += ["", "No source line info in this kernel (compile with -lineinfo); SASS only."]
    heading = f"{'samples':>9} {'share':>6} {'offset':>8} {'line':>5}  instruction  (top stall)"
    out += ["", "SASS, most samples first:", heading]
    for s in sorted(hs.sass, key=lambda s: (-s.samples, s.address))[:top]:
        if not s.samples:
            break
        stall = s.top_stall
        why = f"  ({stall[0]} {stall[1]:,})" if stall else ""
        head = f"{s.samples:>9,} {_pct(s.samples, total)} {_where(hs, s)}  "
        room = width - len(head)
        text = s.sass if len(s.sass) + len(why) <= room else s.sass[: max(room - len(why), 8)]
        out.append(head + _fit(text + why, room))
    out += _rule_lines(hs, width)
    return [line[:width] for line in out]


def _rule_lines(hs: SourceHotSpots, width: int) -> list[str]:
    if not hs.links:
        return []
    out = ["", "Rules that point at instructions:"]
    for link in hs.links:
        code = RULE_CODES.get(link.code_type, link.code_type[:3].upper())
        out.append(_fit(f"{code} {link.rule_id}: {link.message}", width))
        out.append(_fit(f"    {link.metric}, {len(link.addresses)} instructions; largest:", width))
        for pc, value in link.addresses[:3]:
            s = hs.at(pc)
            text = "" if s is None else f"{s.sass}  ({s.samples:,} samples)"
            head = f"    {value:>12,.0f} {_where(hs, s) if s else hex(pc)}  "
            out.append(head + _fit(text, width - len(head)))
    return out


def source_lines_for(hots: dict[int, SourceHotSpots], width: int) -> list[list[str]]:
    return [hot_spot_lines(hs, width) for hs in hots.values()]
