"""The one registry of keys: the footer, the ? overlay and the command palette read it.

Each entry has an id, the keys (Textual's comma-separated key names), the action it runs,
a description, the pane it belongs to (`scope`) and a palette name (`group: verb`).
Widgets take their `BINDINGS` from `bindings(scope)`; nothing else declares keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class Key:
    id: str
    keys: str
    action: str
    description: str
    scope: str  # "app", "timeline", "side"
    group: str  # palette group: "view", "timeline", "app", ...
    verb: str | None = None  # palette verb; None = not offered in the palette
    show: bool = False  # shown in the footer
    display: str | None = None  # how the keys are written in the footer and help
    priority: bool = False
    #: listed in the ? overlay (False for a key another entry's display already names)
    help: bool = True

    @property
    def palette_name(self) -> str | None:
        return None if self.verb is None else f"{self.group}: {self.verb}"

    @property
    def key_text(self) -> str:
        return self.display or self.own_key_text

    @property
    def own_key_text(self) -> str:
        return " ".join(_pretty(k) for k in self.keys.split(","))

    @property
    def palette_hint(self) -> str:
        """What the command palette says of the entry's keys: only its own (the footer's
        `. ,` would offer `,` for "next event")."""
        return f"key: {self.help_key_text}"

    @property
    def help_key_text(self) -> str:
        """The keys as the ? overlay lists them: the footer's display, unless it groups this
        key with another entry's (`. ,` on "Next event"), then only this entry's own keys."""
        if self.display is None:
            return self.own_key_text
        own = {_pretty(k) for k in self.keys.split(",")}
        own |= {f"^{k[5:]}" for k in self.keys.split(",") if k.startswith("ctrl+")}
        if all(token in own for token in self.display.split()):
            return self.display
        return self.own_key_text


_NAMES = {
    "plus": "+",
    "minus": "-",
    "equals_sign": "=",
    "full_stop": ".",
    "comma": ",",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "question_mark": "?",
    "slash": "/",
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
    "shift+left": "shift+←",
    "shift+right": "shift+→",
    "escape": "esc",
    "backspace": "⌫",
    "enter": "⏎",
    "colon": ":",
    "space": "space",
    "f1": "F1",
    "less_than_sign": "<",
    "greater_than_sign": ">",
}


def _pretty(key: str) -> str:
    return _NAMES.get(key, key)


T, A, S = "timeline", "app", "side"

REGISTRY: tuple[Key, ...] = (
    # timeline: zoom and pan
    Key(
        "timeline.zoom_in",
        "plus,equals_sign,w",
        "zoom_in",
        "Zoom in",
        T,
        "timeline",
        "zoom in",
        show=True,
        display="+ w",
    ),
    Key(
        "timeline.zoom_out",
        "minus,s",
        "zoom_out",
        "Zoom out",
        T,
        "timeline",
        "zoom out",
        show=True,
        display="- s",
    ),
    Key(
        "timeline.pan_left",
        "left,h,a",
        "pan(-1)",
        "Pan left",
        T,
        "timeline",
        "pan left",
        show=True,
        display="← h a",
    ),
    Key(
        "timeline.pan_right",
        "right,l,d",
        "pan(1)",
        "Pan right",
        T,
        "timeline",
        "pan right",
        display="→ l d",
    ),
    Key(
        "timeline.page_left",
        "shift+left,H",
        "page(-1)",
        "Page left",
        T,
        "timeline",
        "page left",
        display="H shift+←",
    ),
    Key(
        "timeline.page_right",
        "shift+right,L",
        "page(1)",
        "Page right",
        T,
        "timeline",
        "page right",
        display="L shift+→",
    ),
    Key(
        "timeline.fit_all",
        "0",
        "fit_all",
        "Fit all",
        T,
        "timeline",
        "fit the whole profile",
        show=True,
    ),
    Key(
        "timeline.fit_selection",
        "f",
        "fit_selection",
        "Fit selection",
        T,
        "timeline",
        "fit the selection or range",
    ),
    Key(
        "timeline.zoom_back",
        "backspace",
        "zoom_back",
        "Zoom back",
        T,
        "timeline",
        "back to the previous zoom",
        display="⌫",
    ),
    Key(
        "timeline.home",
        "g,home",
        "go_edge(-1)",
        "Start of profile",
        T,
        "timeline",
        "go to the start",
        display="g home",
    ),
    Key(
        "timeline.end",
        "G,end",
        "go_edge(1)",
        "End of profile",
        T,
        "timeline",
        "go to the end",
        display="G end",
    ),
    # timeline: lanes and events
    Key("timeline.lane_up", "up,k", "lane(-1)", "Lane up", T, "timeline", None, display="↑ k"),
    Key("timeline.lane_down", "down,j", "lane(1)", "Lane down", T, "timeline", None, display="↓ j"),
    Key("timeline.lane_page_up", "pageup", "lane(-10)", "Lanes page up", T, "timeline", None),
    Key("timeline.lane_page_down", "pagedown", "lane(10)", "Lanes page down", T, "timeline", None),
    Key(
        "timeline.next_event",
        "full_stop",
        "step_event(1)",
        "Next event",
        T,
        "timeline",
        "next event on the lane",
        show=True,
        display=". ,",
    ),
    Key(
        "timeline.prev_event",
        "comma",
        "step_event(-1)",
        "Previous event",
        T,
        "timeline",
        "previous event on the lane",
    ),
    Key(
        "timeline.mark_start",
        "left_square_bracket",
        "mark(0)",
        "Mark range start",
        T,
        "timeline",
        "mark range start",
        display="[ ]",
    ),
    Key(
        "timeline.mark_end",
        "right_square_bracket",
        "mark(1)",
        "Mark range end",
        T,
        "timeline",
        "mark range end",
    ),
    Key(
        "timeline.enter",
        "enter",
        "enter",
        "Details / zoom to range",
        T,
        "timeline",
        "show details or zoom to the range",
        show=True,
        display="⏎",
    ),
    Key(
        "timeline.toggle_group",
        "c",
        "toggle_group",
        "Collapse group",
        T,
        "timeline",
        "collapse or expand the group",
    ),
    Key(
        "timeline.next_same",
        "greater_than_sign",
        "same_name(1)",
        "Next same name",
        T,
        "timeline",
        "next launch of the selected kernel (next event of the same name)",
        display="> <",
    ),
    Key(
        "timeline.prev_same",
        "less_than_sign",
        "same_name(-1)",
        "Previous same name",
        T,
        "timeline",
        "previous launch of the selected kernel",
    ),
    Key(
        "timeline.gap_causes",
        "b",
        "gap_causes",
        "Idle gaps by cause",
        T,
        "timeline",
        "colour GPU idle gaps by cause (step budget)",
    ),
    Key(
        "timeline.clear",
        "escape",
        "clear",
        "Clear range / selection",
        T,
        "timeline",
        "clear the range and selection",
    ),
    # app-wide
    Key(
        "app.help",
        "question_mark,f1",
        "help",
        "Help",
        A,
        "app",
        "help: keys and concepts",
        show=True,
        display="? F1",
    ),
    # both keys explicitly: a registry binding for command_palette makes Textual drop its own
    # ctrl+p binding (App.__init__), so ctrl+p must be listed here too
    Key(
        "app.palette",
        "ctrl+p,colon",
        "command_palette",
        "Commands",
        A,
        "app",
        None,
        display="^p :",
    ),
    Key(
        "app.focus_timeline", "1", "focus_pane('timeline')", "Timeline pane", A, "view", "timeline"
    ),
    Key("app.focus_events", "2", "focus_pane('events')", "Events pane", A, "view", "events"),
    Key("app.focus_side", "3", "focus_pane('side')", "Details pane", A, "view", "details"),
    Key(
        "app.side", "i", "toggle_side", "Details panel", A, "view", "show or hide the details panel"
    ),
    Key(
        "app.advice",
        "A",
        "toggle_advice",
        "Recommended fixes",
        A,
        "advice",
        "toggle panel",
    ),
    Key(
        "app.maximize",
        "m",
        "toggle_maximize",
        "Maximise pane",
        A,
        "view",
        "maximise the focused pane",
    ),
    Key("app.quit", "q", "quit", "Quit", A, "app", "quit", show=True),
    Key(
        "app.ncu",
        "K",
        "ncu_screen",
        "ncu kernels",
        A,
        "ncu",
        "profiled kernels (Nsight Compute)",
    ),
    Key(
        "app.samples",
        "C",
        "samples_screen",
        "CPU samples",
        A,
        "samples",
        "CPU samples as a flame tree (nsys sampling)",
    ),
    # the CPU samples screen (screens/samples.py): a flame tree of one thread's samples
    Key(
        "samples.mode",
        "t",
        "mode",
        "Top-down / bottom-up",
        "samples",
        "samples",
        "switch top-down and bottom-up",
        show=True,
    ),
    Key(
        "samples.next_thread",
        "right_square_bracket",
        "thread(1)",
        "Next thread",
        "samples",
        "samples",
        "next thread",
        show=True,
        display="[ ]",
    ),
    Key(
        "samples.prev_thread",
        "left_square_bracket",
        "thread(-1)",
        "Previous thread",
        "samples",
        "samples",
        "previous thread",
    ),
    Key(
        "samples.steps",
        "s",
        "steps",
        "Steady steps only",
        "samples",
        "samples",
        "only the samples inside the steady steps",
        show=True,
    ),
    Key(
        "samples.back",
        "escape,q",
        "back",
        "Back",
        "samples",
        "samples",
        None,
        show=True,
        display="esc",
    ),
    # the Nsight Compute screen: kernel list and metrics pane
    Key(
        "ncu.jump",
        "enter",
        "jump",
        "To timeline",
        "ncu",
        "ncu",
        "jump to the kernel's launches on the timeline",
        show=True,
        display="⏎",
    ),
    Key(
        "ncu.filter",
        "slash",
        "filter",
        "Filter",
        "ncu",
        "ncu",
        "filter kernel names",
        show=True,
        display="/",
    ),
    Key(
        "ncu.sort_prev",
        "less_than_sign",
        "sort_column(-1)",
        "Sort ←",
        "ncu",
        "ncu",
        "sort by the previous column",
        display="< >",
    ),
    Key(
        "ncu.sort_next",
        "greater_than_sign",
        "sort_column(1)",
        "Sort →",
        "ncu",
        "ncu",
        "sort by the next column",
    ),
    Key("ncu.reverse", "r", "reverse", "Reverse sort", "ncu", "ncu", "reverse the sort"),
    Key(
        "ncu.baseline",
        "b",
        "baseline",
        "Baseline",
        "ncu",
        "ncu",
        "mark the kernel as baseline (compare)",
        show=True,
    ),
    Key(
        "ncu.clear_baseline",
        "B",
        "clear_baseline",
        "Clear baseline",
        "ncu",
        "ncu",
        "clear the baseline",
    ),
    Key(
        "ncu.fold",
        "c",
        "fold_all",
        "Fold sections",
        "ncu",
        "ncu",
        "collapse or expand all sections",
        show=True,
    ),
    Key(
        "ncu.unmatched",
        "u",
        "unmatched",
        "Unmatched",
        "ncu",
        "ncu",
        "list kernels that did not match",
    ),
    Key(
        "ncu.baseline_report",
        "O",
        "baseline_report",
        "Baseline report",
        "ncu",
        "ncu",
        "open another .ncu-rep as the baseline: each kernel compared with its namesake",
    ),
    Key(
        "ncu.roofline",
        "R",
        "view('roofline')",
        "Roofline",
        "ncu",
        "ncu",
        "the roofline chart of the kernels (the one under the cursor marked)",
    ),
    Key(
        "ncu.memory_chart",
        "M",
        "view('memory')",
        "Memory chart",
        "ncu",
        "ncu",
        "the memory chart of the kernel: L1/TEX, shared, L2, DRAM, system links",
    ),
    Key(
        "ncu.source",
        "S",
        "view('source')",
        "Source hot spots",
        "ncu",
        "ncu",
        "the kernel's source lines and SASS with the most warp-stall samples",
    ),
    Key(
        "ncu.section_1",
        "1",
        "section(1)",
        "Section 1-9, 0",
        "ncu",
        "ncu",
        "jump to a section of the metrics pane by its number (0 is the tenth)",
        display="1-9 0",
    ),
    Key("ncu.section_2", "2", "section(2)", "Section 2", "ncu", "ncu", help=False),
    Key("ncu.section_3", "3", "section(3)", "Section 3", "ncu", "ncu", help=False),
    Key("ncu.section_4", "4", "section(4)", "Section 4", "ncu", "ncu", help=False),
    Key("ncu.section_5", "5", "section(5)", "Section 5", "ncu", "ncu", help=False),
    Key("ncu.section_6", "6", "section(6)", "Section 6", "ncu", "ncu", help=False),
    Key("ncu.section_7", "7", "section(7)", "Section 7", "ncu", "ncu", help=False),
    Key("ncu.section_8", "8", "section(8)", "Section 8", "ncu", "ncu", help=False),
    Key("ncu.section_9", "9", "section(9)", "Section 9", "ncu", "ncu", help=False),
    Key("ncu.section_10", "0", "section(10)", "Section 10", "ncu", "ncu", help=False),
    Key(
        "ncu.next_section",
        "right_square_bracket",
        "step_section(1)",
        "Next section",
        "ncu",
        "ncu",
        "jump to the next section of the metrics pane",
        display="] [",
    ),
    Key(
        "ncu.prev_section",
        "left_square_bracket",
        "step_section(-1)",
        "Previous section",
        "ncu",
        "ncu",
        "jump to the previous section",
    ),
    Key(
        "ncu.occupancy",
        "o",
        "section_named('Occupancy')",
        "Occupancy",
        "ncu",
        "ncu",
        "jump to the Occupancy section",
    ),
    Key(
        "ncu.sol",
        "s",
        "section_named('GPU Speed Of Light Throughput')",
        "Speed of Light",
        "ncu",
        "ncu",
        "jump to the GPU Speed Of Light section",
    ),
    Key(
        "ncu.launch",
        "l",
        "section_named('Launch')",
        "Launch",
        "ncu",
        "ncu",
        "jump to the Launch Statistics section",
    ),
    Key(
        "ncu.warps",
        "w",
        "section_named('Warp State')",
        "Warp state",
        "ncu",
        "ncu",
        "jump to the Warp State Statistics section",
    ),
    Key(
        "ncu.scroll_down",
        "space,shift+down",
        "scroll_metrics(0.5)",
        "Scroll metrics down",
        "ncu",
        "ncu",
        "scroll the metrics pane down half a page (the mouse wheel scrolls it too)",
        display="space shift+↓ shift+↑",
    ),
    Key(
        "ncu.scroll_up",
        "shift+up",
        "scroll_metrics(-0.5)",
        "Scroll metrics up",
        "ncu",
        "ncu",
        "scroll the metrics pane up half a page",
    ),
    Key(
        "ncu.back",
        "escape",
        "back",
        "Clear filter / back",
        "ncu",
        "ncu",
        None,
        display="esc",
    ),
    Key(
        "ncu.close_unmatched",
        "escape,q,u",
        "dismiss",
        "Close",
        "ncu-unmatched",
        "ncu",
        None,
        show=True,
        display="esc",
    ),
    Key(
        "ncu-view.close",
        "escape,q",
        "dismiss",
        "Close",
        "ncu-view",
        "ncu",
        None,
        show=True,
        display="esc",
    ),
    Key(
        "ncu-prompt.cancel",
        "escape",
        "cancel",
        "Cancel",
        "ncu-prompt",
        "ncu",
        None,
        show=True,
        display="esc",
    ),
    # matches of the events table's filter, stepped on the timeline (issue 6)
    Key(
        "app.next_match",
        "n",
        "next_match(1)",
        "Next match",
        A,
        "timeline",
        "next match of the table's filter",
        display="n N",
    ),
    Key(
        "app.prev_match",
        "N",
        "next_match(-1)",
        "Previous match",
        A,
        "timeline",
        "previous match of the table's filter",
    ),
    # the events table (its palette entries come from EventsCommands)
    Key("events.filter", "slash", "filter", "Filter", "events", "filter", None, show=True),
    Key("events.min_duration", "M", "min_duration", "Min duration", "events", "filter", None),
    Key("events.window", "w", "toggle_window", "Timeline window only", "events", "filter", None),
    Key("events.clear", "escape", "clear", "Clear filter", "events", "filter", None),
    Key(
        "events.regex", "ctrl+r", "toggle_regex", "Regex on/off (filter)", "events", "filter", None
    ),
    Key(
        "events.sort_prev",
        "less_than_sign",
        "sort_column(-1)",
        "Sort by the column left",
        "events",
        "sort",
        None,
        display="< >",
    ),
    Key(
        "events.sort_next",
        "greater_than_sign",
        "sort_column(1)",
        "Sort by the column right",
        "events",
        "sort",
        None,
    ),
    Key("events.reverse", "r", "reverse", "Reverse the sort", "events", "sort", None),
    Key(
        "events.base_names",
        "B",
        "toggle_base_names",
        "Base names",
        "events",
        "view",
        "names in full or as base names (no namespaces, template arguments)",
    ),
    Key(
        "events.follow",
        "F",
        "toggle_follow",
        "Follow the row through sorts",
        "events",
        "sort",
        "follow the cursor's row through sorts",
    ),
    Key("events.summary", "S", "toggle_summary", "Summary", "events", "view", None, show=True),
    Key(
        "events.by_line",
        "L",
        "toggle_lines",
        "By source line",
        "events",
        "view",
        None,
    ),
    Key(
        "events.next_kind",
        "t",
        "cycle_kind(1)",
        "Next table",
        "events",
        "view",
        None,
        show=True,
        display="t T",
    ),
    Key("events.prev_kind", "T", "cycle_kind(-1)", "Previous table", "events", "view", None),
    Key("events.export", "e", "export", "Export", "events", "export", None, show=True),
    Key("events.copy", "y", "copy", "Copy row", "events", "export", None),
    # rows of the events table
    Key("rows.up", "up,k", "move(-1)", "Row up", "rows", "rows", None, display="↑ k"),
    Key("rows.down", "down,j", "move(1)", "Row down", "rows", "rows", None, display="↓ j"),
    Key("rows.page_up", "pageup,ctrl+b", "page(-1)", "Page up", "rows", "rows", None),
    Key("rows.page_down", "pagedown,ctrl+f", "page(1)", "Page down", "rows", "rows", None),
    Key("rows.half_up", "ctrl+u", "half(-1)", "Half page up", "rows", "rows", None),
    Key("rows.half_down", "ctrl+d", "half(1)", "Half page down", "rows", "rows", None),
    Key("rows.top", "home,g", "jump(0)", "First row", "rows", "rows", None, display="g home"),
    Key("rows.bottom", "end,G", "jump(-1)", "Last row", "rows", "rows", None, display="G end"),
    Key(
        "rows.open",
        "enter",
        "activate",
        "Show on timeline",
        "rows",
        "rows",
        None,
        show=True,
        display="⏎",
    ),
    # the fixes pane's list of findings and evidence rows (issue 35 item 5)
    Key("fixes.up", "up,k", "cursor_up", "Row up", "fixes", "fixes", None, display="↑ k"),
    Key("fixes.down", "down,j", "cursor_down", "Row down", "fixes", "fixes", None, display="↓ j"),
    Key("fixes.page_up", "pageup,ctrl+b", "page_up", "Page up", "fixes", "fixes", None),
    Key("fixes.page_down", "pagedown,ctrl+f", "page_down", "Page down", "fixes", "fixes", None),
    Key("fixes.top", "home,g", "first", "First row", "fixes", "fixes", None, display="g home"),
    Key("fixes.bottom", "end,G", "last", "Last row", "fixes", "fixes", None, display="G end"),
    Key(
        "fixes.open",
        "enter",
        "select",
        "Show on timeline",
        "fixes",
        "fixes",
        None,
        show=True,
        display="⏎",
    ),
    Key(
        "fixes.copy",
        "y",
        "copy_snippet",
        "Copy the fix's code",
        "fixes",
        "fixes",
        None,
        show=True,
    ),
    # the diff view: `tuiperf BEFORE AFTER` with two timeline reports (issue 21)
    Key(
        "diff.mark",
        "enter",
        "mark",
        "Mark",
        "diff",
        "diff",
        None,
        show=True,
        display="⏎",
    ),
    Key(
        "diff.swap",
        "b",
        "swap_baseline",
        "Swap baseline",
        "diff",
        "diff",
        None,
        show=True,
    ),
    Key(
        "diff.next_step",
        "right_square_bracket",
        "step(1)",
        "Next step",
        "diff",
        "diff",
        None,
        show=True,
        display="] [",
    ),
    Key(
        "diff.prev_step",
        "left_square_bracket",
        "step(-1)",
        "Previous step",
        "diff",
        "diff",
        None,
    ),
    Key(
        "diff.next_table",
        "t",
        "cycle_section(1)",
        "Next table",
        "diff",
        "diff",
        None,
        show=True,
        display="t T",
    ),
    Key("diff.prev_table", "T", "cycle_section(-1)", "Previous table", "diff", "diff", None),
    Key("diff.help", "question_mark,f1", "help", "Help", "diff", "diff", None),
    # q: the program ends (`tuiperf BEFORE AFTER`), or back to the viewer it was opened over
    Key("diff.quit", "q", "quit_diff", "Quit", "diff", "diff", None, show=True),
    Key("diff.leave", "q", "leave", "Back to the viewer", "diff", "diff", None, show=True),
    # zoom and pan inside the compared steps: both timelines keep one scale (issue 35 item 16)
    Key(
        "diff.zoom_in",
        "plus,equals_sign,w",
        "zoom(1)",
        "Zoom in",
        "diff",
        "diff",
        None,
        display="+ w",
    ),
    Key("diff.zoom_out", "minus,s", "zoom(-1)", "Zoom out", "diff", "diff", None, display="- s"),
    Key("diff.pan_left", "left,h,a", "pan(-1)", "Pan left", "diff", "diff", None, display="← h a"),
    Key(
        "diff.pan_right", "right,l,d", "pan(1)", "Pan right", "diff", "diff", None, display="→ l d"
    ),
    Key("diff.fit", "0", "fit", "Whole steps", "diff", "diff", None),
    Key(
        "diff.back",
        "escape",
        "back",
        "Unmark (or back to the viewer)",
        "diff",
        "diff",
        None,
        display="esc",
    ),
    # the help overlay itself
    Key(
        "help.close",
        "escape,question_mark,f1,q",
        "dismiss",
        "Close help",
        "help",
        "help",
        None,
        show=True,
        display="esc ?",
    ),
)


def for_scope(scope: str) -> list[Key]:
    return [k for k in REGISTRY if k.scope == scope]


def bindings(scope: str) -> list[BindingType]:
    """Textual bindings of one pane (or of the app), straight from the registry."""
    return [
        Binding(
            k.keys,
            k.action,
            k.description,
            show=k.show,
            key_display=k.display,
            id=k.id,
            priority=k.priority,
        )
        for k in for_scope(scope)
    ]


def by_id(key_id: str) -> Key:
    for k in REGISTRY:
        if k.id == key_id:
            return k
    raise KeyError(key_id)
