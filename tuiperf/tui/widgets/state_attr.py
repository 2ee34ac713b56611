"""`InState`: a widget attribute kept in the widget's plain `state` object.

The events table and the timeline keep what they show in Textual-free state classes
(`tuiperf.tui.viewstate.events`, `tuiperf.tui.viewstate.timeline`); their old attributes stay
readable (and writable) on the widget: `vp = InState[Viewport]()` is `widget.state.vp`.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class InState(Generic[T]):
    """The attribute `name` (default: the same name) of the owner's `state`."""

    def __init__(self, name: str = "") -> None:
        self.name = name

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> InState[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: Any, owner: type | None = None) -> T | InState[T]:
        return self if obj is None else getattr(obj.state, self.name)

    def __set__(self, obj: Any, value: T) -> None:
        setattr(obj.state, self.name, value)
