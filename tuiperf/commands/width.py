"""`--width COLS`: one argparse type for every command that draws tables or text to a width."""

from __future__ import annotations

from tuiperf.errors import UsageError

#: the narrowest width a table or a finding's text is drawn to
MIN_WIDTH = 40


def width(text: str) -> int:
    """`--width`'s value: a whole number of at least MIN_WIDTH columns, else one line (exit 2).

    Raises UsageError (not argparse's ArgumentTypeError, whose usage block is several lines)."""
    try:
        cols = int(text)
    except ValueError:
        raise UsageError(f"--width {text}: give a number of columns") from None
    if cols < MIN_WIDTH:
        raise UsageError(f"--width {cols}: tables need at least {MIN_WIDTH} columns")
    return cols
