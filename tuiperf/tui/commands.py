"""The command palette (ctrl+p or :): registry entries named `group: verb`.

Only commands that apply now are offered: each is checked with its pane's `check_action`
(for example `timeline: fit the selection or range` needs a selection or a range).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tuiperf.tui.actions import REGISTRY, Key

if TYPE_CHECKING:
    from textual.dom import DOMNode


def _parse(action: str) -> tuple[str, tuple[object, ...]]:
    name, _, rest = action.partition("(")
    if not rest:
        return name, ()
    args = rest.rstrip(")")
    import ast

    value = ast.literal_eval(f"({args},)")
    return name, tuple(value)


class TuiperfCommands(Provider):
    """Every registry key with a palette name, run on the pane that owns it."""

    def _target(self, key: Key) -> DOMNode | None:
        app = self.app
        if key.scope == "app":
            return app
        found = app.query(f"#{key.scope}")
        return found.first() if found else None

    def _available(self) -> list[tuple[Key, Callable[[], Any]]]:
        out: list[tuple[Key, Callable[[], Any]]] = []
        for key in REGISTRY:
            target = self._target(key)
            if key.palette_name is None or target is None:
                continue
            name, params = _parse(key.action)
            if target.check_action(name, params) is not True:
                continue
            out.append((key, partial(self._run, target, key.action)))
        return out

    async def _run(self, target: DOMNode, action: str) -> None:
        await self.app.run_action(action, target)

    async def discover(self) -> Hits:
        for key, run in self._available():
            yield DiscoveryHit(key.palette_name or "", run, help=key.palette_hint)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for key, run in self._available():
            name = key.palette_name or ""
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, help=key.palette_hint)
