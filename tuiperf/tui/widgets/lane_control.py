"""Lane control keys of the timeline (issue 34 item 4): `x` hides the lane under the cursor,
`X` shows the hidden ones again, `P` pins a lane to the top (or unpins it), shift+up/down
(`U` `D`) move it inside its group; `c` folds a group. Each change is saved at once as the
report's layout (tui/viewstate/layout.py), which the next opening of the report restores.
"""

from __future__ import annotations

from typing import Any

from tuiperf.model.fmt import clean
from tuiperf.tui.viewstate import layout as L


def load(trace: Any) -> L.Layout:
    return L.load(trace.meta.source)


def saved(timeline: Any, note: str | None = None) -> None:
    """After a layout change: save it, keep the cursor on screen, redraw, say `note`."""
    state = timeline.state
    if state.trace is not None and not L.save(state.trace.meta.source, state.layout):
        timeline.notify("The lane layout could not be saved (config folder).", timeout=3)
    state.scroll_to_cursor(timeline.lane_rows)
    timeline.changed(viewport=False)
    if note:
        timeline.notify(clean(note), timeout=3, markup=False)


def hide(timeline: Any) -> None:
    label = timeline.state.hide_lane()
    if label is None:
        timeline.notify("x hides a lane: move onto one (c folds a group).", timeout=3)
        return
    saved(timeline, f"Hidden: {label}. X shows the hidden lanes again.")


def show_hidden(timeline: Any) -> None:
    n = timeline.state.show_hidden()
    if n == 0:
        timeline.notify("No lane is hidden.", timeout=2)
        return
    saved(timeline, f"{n} hidden lane{'s' if n > 1 else ''} shown again.")


def pin(timeline: Any) -> None:
    pinned = timeline.state.pin_lane()
    if pinned is None:
        timeline.notify("P pins a lane: move onto one.", timeout=3)
        return
    saved(timeline, "Pinned to the top." if pinned else "Unpinned.")


def move(timeline: Any, delta: int) -> None:
    if timeline.state.move_in_group(delta):
        saved(timeline)
