"""`make screenshots`: drive the real TUI headless on the real fixtures and save what it shows.

Each shot opens a report in `TuiperfApp.run_test(size=...)`, waits until the content is real
(the load done, the events table's first query and the fixes analysis finished), presses its
keys and writes `screenshots/<name>_<W>x<H>.svg`; and a PNG beside it when a converter is
installed (rsvg-convert, the cairosvg module or inkscape). Converted tables go to a private
temporary cache, never the user's.

    .venv/bin/python scripts/screenshots.py [--out screenshots] [--only NAME ...] [--no-png]
"""

from __future__ import annotations

import argparse
import asyncio
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# before Textual is imported: nothing on screen may move by itself
os.environ["TEXTUAL_ANIMATIONS"] = "none"

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tuiperf" / "sample" / "vit_range"
NSYS_DATA = REPO / "tests" / "data" / "nsys"
NCU_DATA = REPO / "tests" / "data" / "ncu"
SIZES = ((160, 48), (80, 24))
#: pauses of 0.05 s before a wait gives up (a slow shared machine needs a long one)
PATIENCE = 2400


@dataclass(frozen=True)
class Inputs:
    """The reports the shots open, and the private cache."""

    cache: Path
    cnn_osrt: Path
    vit_full: Path | None  # None: ncu-report is not installed


@dataclass(frozen=True)
class Shot:
    name: str
    title: str
    make: Callable[[Inputs], Any]  # -> TuiperfApp
    #: key groups, pressed in order; the app settles after each group
    keys: tuple[tuple[str, ...], ...] = ()
    needs_ncu: bool = False
    #: wait for the Nsight Compute screen (after the keys) instead of the viewer
    ncu_screen: bool = False
    sizes: tuple[tuple[int, int], ...] = field(default=SIZES)


# --- the shots ------------------------------------------------------------------------------


def _opts(inputs: Inputs) -> Any:
    from tuiperf.load.open import OpenOptions

    return OpenOptions(cache_dir=inputs.cache)


def _sample(inputs: Inputs, ncu: bool = False) -> Any:
    from tuiperf.tui.app import TuiperfApp

    ncu_path = inputs.vit_full if ncu else None
    return TuiperfApp(SAMPLE, _opts(inputs), name="vit_range (bundled sample)", ncu_path=ncu_path)


def _cnn(inputs: Inputs) -> Any:
    from tuiperf.tui.app import TuiperfApp

    return TuiperfApp(inputs.cnn_osrt, _opts(inputs), name="cnn_osrt.sqlite")


#: the events pane: filter on "gemm", sort by duration (longest first), top row, maximised
FILTER_GEMM = (("2", "slash", *"gemm", "enter"), ("greater_than_sign",), ("g", "m"))

SHOTS: tuple[Shot, ...] = (
    Shot("timeline", "tuiperf: timeline (vit_range)", _sample),
    Shot(
        "timeline_kernel",
        "tuiperf: a kernel and its launch (vit_range)",
        _sample,
        keys=(("full_stop",) * 12, ("plus",) * 10, ("enter",)),
    ),
    Shot("timeline_osrt", "tuiperf: timeline with OS runtime (cnn_osrt)", _cnn),
    Shot("events", "tuiperf: events table, filtered and sorted", _sample, keys=FILTER_GEMM),
    Shot("summary", "tuiperf: events table, per-name summary", _cnn, keys=(("2", "S"), ("m",))),
    Shot(
        "ncu",
        "tuiperf: Nsight Compute kernels linked to the timeline",
        lambda i: _sample(i, ncu=True),
        keys=(("K",), ("down", "down", "down")),
        needs_ncu=True,
        ncu_screen=True,
    ),
    Shot("fixes", "tuiperf: recommended fixes (cnn_osrt)", _cnn, keys=(("A",),)),
)


# --- waiting for real content ---------------------------------------------------------------


async def _until(pilot: Any, done: Callable[[], bool], what: str) -> None:
    for _ in range(PATIENCE):
        if pilot.app.error is not None:
            raise RuntimeError(f"{what}: {pilot.app.error}")
        if done():
            return
        await pilot.pause(0.05)
    raise RuntimeError(f"gave up waiting for {what}")


async def _settle(pilot: Any, wait: float = 0.3) -> None:
    """Let debounce timers fire, then the workers they start finish."""
    for _ in range(3):
        await pilot.pause(wait)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def _viewer_ready(pilot: Any) -> None:
    from tuiperf.tui.widgets.advice import AdvicePanel
    from tuiperf.tui.widgets.events_pane import EventsPane
    from tuiperf.tui.widgets.events_table import EventsTable

    app = pilot.app
    await _until(pilot, lambda: not app.loading, "the report to load")

    def table_ready() -> bool:
        tables = app.query(EventsTable)
        return (
            bool(tables)
            and tables.first().view is not None
            and bool(app.query_one(EventsPane).matches)
        )

    await _until(pilot, table_ready, "the events table's first query")
    await _until(pilot, lambda: app.query_one(AdvicePanel).ready, "the fixes analysis")
    await _settle(pilot)


async def _ncu_ready(pilot: Any) -> None:
    from tuiperf.tui.screens.ncu import NcuScreen

    await _until(pilot, lambda: isinstance(pilot.app.screen, NcuScreen), "the ncu screen")
    await _settle(pilot)


async def take(shot: Shot, size: tuple[int, int], inputs: Inputs) -> str:
    """The SVG of one shot at one size."""
    app = shot.make(inputs)
    async with app.run_test(size=size) as pilot:
        await _viewer_ready(pilot)
        for group in shot.keys:
            await pilot.press(*group)
            await _settle(pilot)
        if shot.ncu_screen:
            await _ncu_ready(pilot)
        return str(app.export_screenshot(title=shot.title, simplify=True))


# --- inputs and PNG -------------------------------------------------------------------------


def _unxz(src: Path, dst: Path) -> Path:
    with lzma.open(src) as fin, dst.open("wb") as fout:
        shutil.copyfileobj(fin, fout)
    return dst


def _has_ncu_report() -> bool:
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        return False
    return True


def prepare(tmp: Path, ncu: bool) -> Inputs:
    """Decompress the fixtures and convert them into the private cache once, so every shot
    shows a second open ("loaded from cache") whichever shots run."""
    from tuiperf.load.open import open_trace

    cnn = _unxz(NSYS_DATA / "cnn_osrt.sqlite.xz", tmp / "cnn_osrt.sqlite")
    vit_full = _unxz(NCU_DATA / "vit_full.ncu-rep.xz", tmp / "vit_full.ncu-rep") if ncu else None
    inputs = Inputs(cache=tmp / "cache", cnn_osrt=cnn, vit_full=vit_full)
    open_trace(cnn, _opts(inputs))
    return inputs


def png_converter() -> Callable[[Path, Path], None] | None:
    """A function writing a PNG of an SVG, from the first converter found; None if none."""
    if shutil.which("rsvg-convert"):
        return lambda svg, png: _run(["rsvg-convert", "-o", str(png), str(svg)])
    try:
        import cairosvg  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        return lambda svg, png: cairosvg.svg2png(url=str(svg), write_to=str(png))
    if shutil.which("inkscape"):
        return lambda svg, png: _run(
            ["inkscape", str(svg), "--export-type=png", f"--export-filename={png}"]
        )
    return None


def _note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr)


def _run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", type=Path, default=REPO / "screenshots", help="output folder")
    p.add_argument("--only", action="append", metavar="NAME", help="only this shot (repeatable)")
    p.add_argument("--no-png", action="store_true", help="SVG only")
    return p.parse_args(argv)


def selected(only: list[str] | None, ncu: bool) -> list[Shot]:
    names = {s.name for s in SHOTS}
    unknown = set(only or ()) - names
    if unknown:
        raise SystemExit(f"screenshots: unknown shot {sorted(unknown)}; one of {sorted(names)}")
    shots = [s for s in SHOTS if not only or s.name in only]
    if not ncu and any(s.needs_ncu for s in shots):
        _note("ncu-report is not installed; skipping the Nsight Compute shot")
    return [s for s in shots if ncu or not s.needs_ncu]


async def run_all(shots: list[Shot], inputs: Inputs, out: Path, png: Any) -> None:
    for shot in shots:
        for w, h in shot.sizes:
            svg = out / f"{shot.name}_{w}x{h}.svg"
            svg.write_text(await take(shot, (w, h), inputs), encoding="utf-8")
            if png is not None:
                png(svg, svg.with_suffix(".png"))
            print(f"wrote {svg}" + (" and .png" if png is not None else ""))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ncu = _has_ncu_report()
    shots = selected(args.only, ncu)
    png = None if args.no_png else png_converter()
    if png is None and not args.no_png:
        _note("no SVG-to-PNG converter (rsvg-convert, cairosvg, inkscape): SVG only")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tuiperf-shots-") as tmp:
        os.environ["TUIPERF_CACHE_DIR"] = str(Path(tmp) / "cache")
        inputs = prepare(Path(tmp), ncu and any(s.needs_ncu for s in shots))
        asyncio.run(run_all(shots, inputs, args.out, png))
    return 0


if __name__ == "__main__":
    sys.exit(main())
