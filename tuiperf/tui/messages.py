"""Every custom message of the viewer, in one place (widgets talk through these)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class EventSelected(Message):
    """An event became the selection: row `row` of canonical table `table`.

    Posted by whichever widget selected it (`source`: "timeline", "events", ...); the app
    forwards it so that the others (timeline, side panel, events table) follow.
    """

    table: str
    row: int
    source: str = ""
    #: True when the user asked for details (Enter), not just moved onto the event
    details: bool = False


@dataclass
class SelectionCleared(Message):
    source: str = ""


@dataclass
class ViewportChanged(Message):
    """The timeline shows [start, end) ns; `lane` is the lane the cursor is on."""

    start: float
    end: float
    label: str
    lane: str = ""


@dataclass
class RangeMarked(Message):
    """A time range was marked with [ and ] (end is None while only the start is set)."""

    start: float | None
    end: float | None


@dataclass
class NcuKernelChosen(Message):
    """Enter on the ncu screen: show launch `index` of `count` (nsys kernels row `row`)
    of ncu kernel `kernel_id` on the timeline."""

    kernel_id: int
    row: int
    index: int = 0
    count: int = 1


@dataclass
class LoadProgress(Message):
    phase: str
    step: int
    steps: int
    fraction: float = 0.0


@dataclass
class MatchesChanged(Message):
    """The events table's rows changed: `matches` (`tuiperf.tui.viewstate.matches.Matches`)
    are the events its filter keeps, for the timeline to highlight; None when nothing is
    filtered."""

    matches: object | None
