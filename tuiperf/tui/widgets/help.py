"""The ? / F1 overlay body: keys of the focused pane, then global keys, then concepts.

Generated from the binding registry (`tuiperf.tui.actions`), never written by hand.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from tuiperf.tui.actions import Key, for_scope
from tuiperf.tui.glyphs import asciify

SCOPE_TITLES = {
    "timeline": "Timeline",
    "side": "Details panel",
    "events": "Events table",
    "rows": "Events table rows",
    "app": "Everywhere",
    "ncu": "Nsight Compute screen",
    "diff": "Diff view (tuiperf BEFORE AFTER)",
    "fixes": "Fixes pane",
    "samples": "CPU samples screen",
    "range": "Range statistics screen",
    "memory": "GPU memory pane",
}

CONCEPTS = (
    (
        "Cells",
        "each cell is a slice of time; █ ▓ ░ (# = . in ASCII) say how busy the lane "
        "is in it. Zoom in until events show as boxes with their names.",
    ),
    (
        "Units",
        "times are from the start of the report; the status line shows the visible "
        "window and the time per column, e.g. 12.40–12.61 s · 2.1 µs/col.",
    ),
    (
        "Links",
        "selecting a kernel marks the CUDA API call that launched it, and the other "
        "way round (matched by correlation id and process).",
    ),
    (
        "Matches",
        "the events table's filter also picks the events that n and N step through on "
        "the timeline, where they are drawn reversed and underlined.",
    ),
    (
        "NVTX",
        "a kernel's ranges are shown on its launching thread and, by time, on the "
        "thread that opened them (PyTorch launches backward from pt_autograd_0).",
    ),
)


def _text(s: str, ascii_only: bool) -> Text:
    return Text(asciify(s) if ascii_only else s)


def keys_table(scope: str, ascii_only: bool = False, keys: list[Key] | None = None) -> Table:
    """The keys of one scope (or the `keys` given) with what each does."""
    t = Table(
        title=SCOPE_TITLES.get(scope, scope),
        title_justify="left",
        box=None,
        show_header=False,
        padding=(0, 2, 0, 0),
    )
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    for k in keys if keys is not None else [k for k in for_scope(scope) if k.help]:
        t.add_row(_text(k.help_key_text, ascii_only), Text(k.description))
    return t


#: the app's keys that act on the Nsight Compute screen too (the rest move timeline panes)
NCU_APP_KEYS = ("app.help", "app.palette", "app.quit", "app.ncu")


def help_renderable(focused_scope: str | None, ascii_only: bool = False) -> Group:
    if focused_scope == "ncu":
        return _ncu_help(ascii_only)
    scopes = [s for s in (focused_scope, "timeline", "side", "app") if s]
    if focused_scope == "fixes":  # the timeline's keys do not act here
        scopes = ["fixes", "app"]
    if focused_scope == "events":
        scopes.insert(1, "rows")
    seen: list[str] = []
    parts: list = []
    for s in scopes:
        if s in seen or not for_scope(s):
            continue
        seen.append(s)
        parts += [keys_table(s, ascii_only), Text("")]
    concepts = Table(
        title="Concepts", title_justify="left", box=None, show_header=False, padding=(0, 2, 0, 0)
    )
    concepts.add_column(style="bold", no_wrap=True)
    concepts.add_column()
    for name, text in CONCEPTS:
        concepts.add_row(Text(name), _text(text, ascii_only))
    parts.append(concepts)
    parts.append(
        Text("\nctrl+p or : opens the command palette; esc or ? closes this help.", style="dim")
    )
    return Group(*parts)


def _ncu_help(ascii_only: bool) -> Group:
    """The Nsight Compute screen's keys, then the app's keys that work there."""
    everywhere = [k for k in for_scope("app") if k.id in NCU_APP_KEYS]
    return Group(
        keys_table("ncu", ascii_only),
        Text(""),
        keys_table("app", ascii_only, everywhere),
        Text("\nctrl+p or : opens the command palette; esc or ? closes this help.", style="dim"),
    )
