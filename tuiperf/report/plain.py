"""Text output that is not a terminal (a pipe, a file): no wrapping, no padding, no cut names.

On a terminal the tables fit its width. Elsewhere there is no width to fit: Rich would take
80 columns, wrap prose there, cut names with `…` (rows that differ only past the cut look
identical) and pad every cell with spaces to the end of the line. So when the stream is not
a terminal and no width is given (--width, or $COLUMNS), text is laid out PIPE_WIDTH columns
wide (wider than any line tuiperf prints, so nothing wraps and no name is cut); and the
spaces at the end of each line are dropped as it is written (TrimmedLines), width or not.
"""

from __future__ import annotations

from typing import Any, TextIO

from tuiperf import settings

#: the layout width of output that is not a terminal: nothing tuiperf prints is wider
PIPE_WIDTH = 10_000


def is_terminal(out: Any) -> bool:
    isatty = getattr(out, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (ValueError, OSError):  # closed
        return False


def unbounded(width: int | None) -> bool:
    """Whether a console of this width lays out for a pipe (no name cut, no table stretched)."""
    return width is not None and width >= PIPE_WIDTH


class TrimmedLines:
    """A text stream that writes to `out` without the spaces at the end of each line. A run
    of spaces is held back until the line goes on (then written) or ends (then dropped)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._spaces = ""

    def write(self, s: str) -> int:
        text = self._spaces + s
        lines = text.split("\n")
        done = [line.rstrip(" ") for line in lines[:-1]]
        last = lines[-1]
        kept = last.rstrip(" ")
        self._spaces = last[len(kept) :]
        self._out.write("".join(f"{line}\n" for line in done) + kept)
        return len(s)

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self._out, "encoding", None) or "utf-8"


def for_text(out: TextIO, width: int | None) -> tuple[Any, int | None]:
    """(stream, width) to lay text out with: a terminal as given; anything else trimmed,
    `width` wide when one is given (--width), else $COLUMNS when set, else PIPE_WIDTH."""
    if is_terminal(out):
        return out, width
    return TrimmedLines(out), width or settings.columns() or PIPE_WIDTH
