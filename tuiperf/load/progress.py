"""Progress of a long load, as data: the loaders report `Progress` steps; the CLI prints
them (`str(step)`: `read tables 3/13: kernels`) and the viewer reads their fields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """`phase` (what is being done), step `done` of `total` (0 of 0: not counted), and a
    detail (the table being read, a file name, megabytes read so far)."""

    phase: str
    done: int = 0
    total: int = 0
    detail: str = ""

    @property
    def fraction(self) -> float:
        """How far the phase is, 0..1 (0 when its steps are not counted)."""
        return min(self.done / self.total, 1.0) if self.total > 0 else 0.0

    def __str__(self) -> str:
        text = f"{self.phase} {self.done}/{self.total}" if self.total else self.phase
        return f"{text}: {self.detail}" if self.detail else text


#: where a loader reports its progress
OnProgress = Callable[[Progress], None]
