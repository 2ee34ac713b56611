"""The events table's palette entries, apart from the table: the app names the provider
when it starts, the table's code is imported once the table is mounted."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tuiperf.model import columns as cols


class EventsCommands(Provider):
    """Palette entries (`group: verb`) for the events table, offered while one is on screen.

    Add it to the app: `COMMANDS = App.COMMANDS | {EventsCommands}`.
    """

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        from tuiperf.tui.widgets.events_table import EventsTable

        tables = self.screen.query(EventsTable)
        if not tables:
            return []
        t = tables.first()
        mode = "events" if t.summary_mode else "summary"
        out: list[tuple[str, str, Callable[[], object]]] = [
            ("export: CSV of visible rows", "write the shown rows to a file", t.action_export),
            ("copy: row under the cursor", "to the clipboard (OSC 52)", t.action_copy),
            (f"view: per-name {mode}", "toggle the summary", t.action_toggle_summary),
            ("view: by source line", "GPU time and syncs (Python stacks)", t.action_toggle_lines),
            ("filter: names", "substring; ! inverts", t.action_filter),
            ("filter: minimum duration", "e.g. 10us", t.action_min_duration),
        ]
        if t.query_now.is_filtered or t.window_only:
            out.append(("filter: clear", "show every event", t.action_clear))
        for kind in cols.KINDS:
            if kind != t.kind:
                out.append((f"table: {cols.KIND_TITLES[kind]}", "switch the events table",
                            partial(t.show_kind, kind)))  # fmt: skip
        return out

    async def discover(self) -> Hits:
        for name, help_text, run in self._commands():
            yield DiscoveryHit(name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, run in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, help=help_text)
