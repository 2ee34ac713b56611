"""Helpers the TUI tests share: running a Pilot test, waiting for the app, reading the
screen and the notifications through Textual's public API, and the fixtures' files.

A plain module, not a test module: tests import from here, never from one another.
conftest.py registers it for pytest's assertion rewriting.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import html
import lzma
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from tests.conftest import DATA, nsys_report
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
from tuiperf.tui.messages import EventSelected
from tuiperf.tui.widgets.advice import AdvicePanel
from tuiperf.tui.widgets.events_pane import EventsPane
from tuiperf.tui.widgets.events_table import EventsTable
from tuiperf.tui.widgets.timeline import Timeline

REPO = Path(__file__).resolve().parents[2]
#: what `make demo` opens: the real vit_range report, converted
SAMPLE = REPO / "tuiperf" / "sample" / "vit_range"


def sync(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test in its own event loop (asyncio.run): no pytest plugin needed."""

    @functools.wraps(fn)
    def run(*args: object, **kwargs: object) -> None:
        asyncio.run(fn(*args, **kwargs))  # type: ignore[arg-type]

    return run


async def settle(pilot: Pilot[Any], wait: float = 0.0) -> None:
    """Let debounce timers fire, then the workers (queries, matches, analysis) finish."""
    for _ in range(3):
        await pilot.pause(wait)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def ready(pilot: Pilot[Any]) -> EventsTable:
    """Wait for the viewer's load, its events table's mount and first query."""
    app = pilot.app
    for _ in range(400):
        tables = app.query(EventsTable)
        if tables and tables.first().view is not None and app.query_one(EventsPane).matches:
            break
        assert app.error is None  # type: ignore[attr-defined]
        await pilot.pause(0.05)
    await settle(pilot)
    return app.query_one(EventsTable)


# -- the fixes panel on cnn_osrt ----------------------------------------------------------


def advice_app(ascii_only: bool = False) -> TuiperfApp:
    return TuiperfApp(
        nsys_report("cnn_osrt"), OpenOptions(use_cache=False), ascii_only=ascii_only, name="cnn"
    )


async def advice_ready(pilot: Pilot[Any]) -> AdvicePanel:
    """Wait for the load, then for the fixes panel's analysis."""
    app = pilot.app
    for _ in range(400):
        if not app.loading:  # type: ignore[attr-defined]
            break
        await pilot.pause(0.05)
    adv = app.query_one(AdvicePanel)
    for _ in range(400):
        if adv.ready:
            break
        await pilot.pause(0.05)
    await pilot.pause()
    assert adv.state.status == "ready", adv.state.note
    return adv


def finding_no(adv: AdvicePanel, rule: str) -> int:
    assert adv.state.index is not None
    return next(i for i, f in enumerate(adv.state.index.findings) if f.rule == rule)


def evidence_row(adv: AdvicePanel, rule: str, pos: int = 0) -> tuple[str, int]:
    assert adv.state.index is not None
    r = adv.state.index.findings[finding_no(adv, rule)].evidence.rows.slice(pos, 1).to_pylist()[0]
    return r["table"], r["row"]


def select(app: App[Any], table: str, row: int) -> None:
    """What the timeline does when it steps onto an event (`.`/`,` or a click)."""
    tl = app.query_one(Timeline)
    tl.post_message(EventSelected(table, row, "timeline"))
    tl.show_selection(table, row)


# -- the screen and the notifications, through public API ---------------------------------

_TEXT = re.compile(r"<text ([^>]*)>(.*?)</text>", re.S)
_ATTR = re.compile(r'([\w:-]+)="([^"]*)"')
_LINE = re.compile(r"-line-(\d+)\)$")


def screen_lines(app: App[Any]) -> list[str]:
    """What the terminal shows now, one string a line, read back from the app's SVG
    screenshot (App.export_screenshot): each run of text sits at its cell column."""
    width, height = app.size
    rows = [[" "] * width for _ in range(height)]
    for attrs, raw in _TEXT.findall(app.export_screenshot()):
        a = dict(_ATTR.findall(attrs))
        line = _LINE.search(a.get("clip-path", ""))
        text = html.unescape(raw).replace("\xa0", " ")  # the SVG writes spaces as &#160;
        if line is None or not text:  # the window title, not a line of the screen
            continue
        cell = float(a["textLength"]) / len(text)
        col, y = round(float(a["x"]) / cell), int(line.group(1))
        for i, ch in enumerate(text[: max(width - col, 0)]):
            rows[y][col + i] = ch
    return ["".join(r).rstrip() for r in rows]


@dataclass(frozen=True)
class Notice:
    message: str
    severity: str
    title: str


def record_notices(app: App[Any]) -> list[Notice]:
    """Every app.notify from now on (widgets' notify goes through the app's), as a list
    that fills while the app runs; the toasts are shown as before."""
    seen: list[Notice] = []
    notify = app.notify

    @functools.wraps(notify)
    def recording(message: str, **kwargs: Any) -> None:
        severity, title = kwargs.get("severity", "information"), kwargs.get("title", "")
        seen.append(Notice(str(message), str(severity), str(title)))
        notify(message, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    return seen


# -- Nsight Compute reports ---------------------------------------------------------------


@functools.cache
def ncu_reports() -> Path:
    """A folder with every bundled `.ncu-rep`, decompressed once per test process."""
    out = Path(tempfile.mkdtemp(prefix="tuiperf-tui-ncu-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    for src in (DATA / "ncu").glob("*.ncu-rep.xz"):
        dst = out / src.name.removesuffix(".xz")
        dst.write_bytes(lzma.decompress(src.read_bytes()))
        dst.chmod(0o444)
    return out


def ncu_report(name: str) -> Path:
    """The bundled `<name>.ncu-rep` (e.g. "vit_full"), decompressed."""
    return ncu_reports() / f"{name}.ncu-rep"
