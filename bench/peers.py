"""`make bench-peers`: tuiperf beside nsys-tui and nsys-ai on the same reports, in one run.

Sets up a separate environment (default bench/.peers-venv, from PyPI only) with two venvs:
  plain/  `pip install nsys-ai nsys-tui` as pip resolves it today (nsys-ai then has a DuckDB
          that loads its SQLite reader by downloading an extension at run time);
  ext/    nsys-ai with `duckdb-extensions` + `duckdb-extension-sqlite-scanner` from PyPI
          (pip pins DuckDB to the version the extension wheel was built for), the extension
          installed from the wheel into a private DuckDB home, so nothing is downloaded.
Each peer runs with HOME set to a private folder under the environment, so the user's
~/.duckdb neither helps nor is touched. No network is needed beyond the package registry.

Measures, per report: (a) time to a kernel summary, cache cold and warm, with peak RSS
(`os.wait4` of the child); (b) time to the first timeline screen in tmux (see
peers_tmux.py) with peak RSS. Medians of --runs runs (one run for reports over 500 MiB),
tools interleaved run by run. Writes bench/peers.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers_tmux

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data"
WORK = REPO / "bench" / "tmp" / "peers"
TUIPERF = REPO / ".venv" / "bin" / "tuiperf"
#: made by `make bench` (run.py: the bundled exports decompressed, vit_range tiled)
REPORTS = [
    DATA / "vit_range.sqlite",
    DATA / "vit_amp.sqlite",
    DATA / "vit_range_x400.sqlite",
    DATA / "vit_range_x2000.sqlite",
]
BIG = 500 * 2**20  # one run above this size
OFFLINE_HINT = "Failed to download extension"


# --- the peers' environment ----------------------------------------------------------


@dataclass
class Env:
    root: Path

    def bin(self, venv: str, tool: str) -> Path:
        return self.root / venv / "bin" / tool

    def home(self, venv: str) -> Path:
        return self.root / f"home-{venv}"


def pip(venv: Path, *args: str) -> None:
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "-q", *args], check=True)


def setup(env: Env) -> dict[str, str]:
    """Create the two venvs once (a `.ready` file holds the versions found)."""
    ready = env.root / ".ready"
    if ready.exists():
        return json.loads(ready.read_text())
    specs = {
        "plain": ["nsys-ai", "nsys-tui"],
        "ext": ["nsys-ai", "duckdb-extensions", "duckdb-extension-sqlite-scanner"],
    }
    for name, packages in specs.items():
        venv = env.root / name
        shutil.rmtree(venv, ignore_errors=True)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        pip(venv, "install", "--upgrade", "pip")
        pip(venv, "install", *packages)
        env.home(name).mkdir(parents=True, exist_ok=True)
    code = "from duckdb_extensions import import_extension; import_extension('sqlite_scanner')"
    run_in(env, "ext", [str(env.bin("ext", "python")), "-c", code])
    check = "import duckdb; duckdb.connect().execute('LOAD sqlite_scanner')"
    run_in(env, "ext", [str(env.bin("ext", "python")), "-c", check])
    versions = {name: pip_versions(env.root / name) for name in specs}
    ready.write_text(json.dumps(versions))
    return versions


def run_in(env: Env, venv: str, cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, env={**os.environ, "HOME": str(env.home(venv))})


def pip_versions(venv: Path) -> str:
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wanted = ("nsys-ai", "nsys-tui", "duckdb", "duckdb-extension-sqlite-scanner")
    found = {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(out)}
    return ", ".join(f"{n} {found[n]}" for n in wanted if n in found)


# --- tools -----------------------------------------------------------------------------


@dataclass
class Tool:
    label: str  # the row's configuration, as printed
    summary: Callable[[Path, Path], list[str]]  # (report, cache dir) -> command
    timeline: Callable[[Path, Path, float], list[str]] | None  # (report, cache, span_s)
    marker: re.Pattern[str]  # the first timeline screen is up when this is on it
    env: dict[str, str]
    ok: re.Pattern[str]  # a summary that worked prints this
    clear: Callable[[Path, Path], None]  # (report, cache dir): make the cache cold
    copy: str = ""  # nsys-ai's cache sits beside the report: each configuration reads its own link


def rm_sidecar(report: Path, _cache: Path) -> None:
    """nsys-ai keeps its Parquet cache beside the report: REPORT.nsys-cache (+ lock)."""
    for p in report.parent.glob(report.stem + ".nsys-cache*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()


def rm_dir(_report: Path, cache: Path) -> None:
    shutil.rmtree(cache, ignore_errors=True)


def nothing(_report: Path, _cache: Path) -> None:
    pass


def tools(env: Env) -> list[Tool]:
    tp = str(TUIPERF)
    lang = {"LANG": "C.UTF-8"}

    def nsys_ai(venv: str, label: str) -> Tool:
        exe = str(env.bin(venv, "nsys-ai"))
        return Tool(
            label,
            lambda f, c: [exe, "summary", str(f)],
            lambda f, c, s: [exe, "timeline", str(f), "--gpu", "0", "--trim", "0", f"{s:g}"],
            re.compile(r"nsys-ai Timeline[\s\S]*\bG\d+:S\d+"),
            {**lang, "HOME": str(env.home(venv))},
            re.compile(r"Top kernels"),
            rm_sidecar,
            copy=venv,
        )

    nsys_tui = str(env.bin("plain", "nsys-tui"))
    return [
        Tool(
            "tuiperf",
            lambda f, c: [tp, "summary", str(f), "-r", "cuda_gpu_kern_sum", "--cache-dir", str(c)],
            lambda f, c, s: [tp, str(f), "--cache-dir", str(c)],
            re.compile(r"kernels[\s\S]*\S/col"),
            lang,
            re.compile(r"Time \(%\)|Total Time"),
            rm_dir,
        ),
        Tool(
            "nsys-tui `summary` / `timeline` (no cache of its own)",
            lambda f, c: [nsys_tui, "summary", str(f)],
            lambda f, c, s: [nsys_tui, "timeline", str(f), "--gpu", "0", "--trim", "0", f"{s:g}"],
            re.compile(r"←→:time"),
            {**lang, "HOME": str(env.home("plain"))},
            re.compile(r"Top kernels"),
            nothing,
        ),
        nsys_ai("plain", "nsys-ai as pip installs it (offline)"),
        nsys_ai("ext", "nsys-ai + duckdb-extension-sqlite-scanner"),
    ]


# --- measuring -------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float | None  # None: stalled (killed at the timeout) or failed
    rss_mib: float | None
    note: str = ""


def timed(cmd: list[str], env: dict[str, str], timeout: float, ok: re.Pattern[str]) -> Run:
    """Wall time and peak RSS (os.wait4) of one process; killed after `timeout` seconds."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            cwd=REPO,
            start_new_session=True,
        )
        timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    rss = usage.ru_maxrss / 1024
    note = "extension download failed, fell back to sqlite3" if OFFLINE_HINT in text else ""
    if wall >= timeout:
        return Run(None, rss, f"stalled > {timeout:g} s")
    if proc.returncode != 0 or not ok.search(text):
        last = text.strip().splitlines()[-1:] or ["no output"]
        return Run(None, rss, f"failed (exit {proc.returncode}): {last[0][:100]}")
    return Run(wall, rss, note)


def screen_run(cmd: list[str], tool: Tool, timeout: float) -> Run:
    got = peers_tmux.first_screen(cmd, tool.marker, WORK, tool.env, timeout)
    if got.seconds is not None:
        note = "no kernels drawn" if re.search(r"^S\?", got.screen, re.M) else ""
        return Run(got.seconds, got.rss_mib, note)
    if got.exited:
        last = [ln for ln in got.screen.splitlines() if ln.strip()][-1:] or ["blank screen"]
        return Run(None, got.rss_mib, f"exited without a timeline: {last[0].strip()[:100]}")
    return Run(None, got.rss_mib, f"no first screen after {timeout:g} s")


@dataclass
class Cell:
    runs: list[Run] = field(default_factory=list)

    def seconds(self) -> float | None:
        good = [r.seconds for r in self.runs if r.seconds is not None]
        return statistics.median(good) if good and len(good) == len(self.runs) else None

    def rss(self) -> float | None:
        vals = [r.rss_mib for r in self.runs if r.rss_mib is not None]
        return max(vals) if vals else None

    def notes(self) -> str:
        return "; ".join(sorted({r.note for r in self.runs if r.note}))


KINDS = ("sum_cold", "sum_warm", "tl_cold", "tl_warm")


@dataclass
class Report:
    path: Path  # the copy the tools read
    kernels: int
    span_s: float
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)

    def cell(self, tool: str, kind: str) -> Cell:
        return self.cells.setdefault((tool, kind), Cell())


def prepare(src: Path) -> Path:
    """Fixtures are read-only and nsys-ai writes a cache beside the report: work on a copy."""
    if src.is_relative_to(DATA):
        return src
    dst = WORK / src.name
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copyfile(src, dst)
    return dst


def path_for(report: Report, t: Tool) -> Path:
    """The report as `t` reads it: a hard link in its own folder when it writes beside it."""
    if not t.copy:
        return report.path
    link = WORK / t.copy / report.path.name
    if link.exists() and link.stat().st_size != report.path.stat().st_size:
        link.unlink()
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(report.path, link)
        except OSError:
            shutil.copyfile(report.path, link)
    return link


def describe(path: Path) -> Report:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n, end = db.execute('select count(*), max("end") from CUPTI_ACTIVITY_KIND_KERNEL').fetchone()
    db.close()
    return Report(path, n, math.ceil((end or 0) / 1e8) / 10 + 0.1)


def measure(report: Report, tool_list: list[Tool], runs: int, timeout: float, log) -> None:
    cache = {t.label: WORK / "cache" / f"{report.path.stem}-{i}" for i, t in enumerate(tool_list)}
    for i in range(runs):
        for t in tool_list:  # cold: clear, then summary; then cold first screen
            c = cache[t.label]
            for kind, fn in (("sum_cold", summary_run), ("tl_cold", tl_run)):
                t.clear(path_for(report, t), c)
                log(report, t, kind, i, fn(report, t, c, timeout))
    for t in tool_list:  # warm: prime once, then measure
        c = cache[t.label]
        timed(t.summary(path_for(report, t), c), t.env, timeout, t.ok)
    for i in range(runs):
        for t in tool_list:
            for kind, fn in (("sum_warm", summary_run), ("tl_warm", tl_run)):
                log(report, t, kind, i, fn(report, t, cache[t.label], timeout))
    for t in tool_list:
        t.clear(path_for(report, t), cache[t.label])


def summary_run(report: Report, t: Tool, cache: Path, timeout: float) -> Run:
    return timed(t.summary(path_for(report, t), cache), t.env, timeout, t.ok)


def tl_run(report: Report, t: Tool, cache: Path, timeout: float) -> Run:
    if t.timeline is None:
        return Run(None, None, "no timeline view")
    return screen_run(t.timeline(path_for(report, t), cache, report.span_s), t, timeout)


# --- output ----------------------------------------------------------------------------


def fmt_s(cell: Cell) -> str:
    s = cell.seconds()
    if s is not None:
        return f"{s:.2f} s"
    notes = [r.note for r in cell.runs if r.seconds is None]
    return notes[0] if notes else "—"


def fmt_rss(cell: Cell) -> str:
    r = cell.rss()
    if r is None:
        return "—"
    return f"{r / 1024:.1f} GiB" if r >= 1024 else f"{r:.0f} MiB"


def ratio(peer: Cell, base: Cell) -> str:
    p, b = peer.seconds(), base.seconds()
    if p is None or b is None:
        return "—"
    return f"{p / b:.1f}×"


def table(reports: list[Report], tool_list: list[Tool], cold: str, warm: str) -> list[str]:
    rows = [
        "| report | kernels | tool (configuration) | cache cold | cache warm | peak RSS "
        "(cold / warm) | cold ÷ tuiperf | warm ÷ tuiperf | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rep in reports:
        base_c, base_w = rep.cell("tuiperf", cold), rep.cell("tuiperf", warm)
        for t in tool_list:
            c, w = rep.cell(t.label, cold), rep.cell(t.label, warm)
            notes = "; ".join(n for n in {c.notes(), w.notes()} if n)
            is_base = t.label == "tuiperf"
            rows.append(
                f"| {rep.path.name} | {rep.kernels:,} | {t.label} | {fmt_s(c)} | {fmt_s(w)} | "
                f"{fmt_rss(c)} / {fmt_rss(w)} | {'1.0×' if is_base else ratio(c, base_c)} | "
                f"{'1.0×' if is_base else ratio(w, base_w)} | {notes} |"
            )
    return rows


def machine() -> str:
    cpu = "?"
    mem = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / 2**20:.0f} GiB"
    py = platform.python_version()
    return f"{platform.node()}: {os.cpu_count()} cores ({cpu}), {mem} RAM, Python {py}"


def tool_version(cmd: list[str]) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True)
    return (out.stdout or out.stderr).strip().splitlines()[0]


def tmux_version() -> str:
    exe = shutil.which("tmux")
    return tool_version([exe, "-V"]) if exe else "tmux missing"


def write(out: Path, reports: list[Report], tool_list: list[Tool], info: dict[str, str]) -> None:
    lines = [
        "# tuiperf beside nsys-tui and nsys-ai",
        "",
        f"Measured {info['date']} by `make bench-peers` (bench/peers.py) on {info['machine']}.",
        f"Load average (1 min) {info['load']}; the machine is shared, so read ratios rather "
        "than seconds. Medians of the runs shown per report; peak RSS is the largest of them.",
        "",
        "Versions:",
        f"- {info['tuiperf']} (`.venv/bin/tuiperf`)",
        f"- nsys-tui, and nsys-ai as pip installs it: {info['plain']} (`{info['env']}/plain`)",
        f"- nsys-ai with the SQLite extension from PyPI: {info['ext']} (`{info['env']}/ext`)",
        f"- {info['tmux']}",
        "",
        "Configurations (each row is one of these):",
        "- **tuiperf**: `tuiperf summary REPORT -r cuda_gpu_kern_sum --cache-dir DIR`; cold = an "
        "empty DIR (converts the report), warm = DIR filled by an earlier run. Timeline: "
        "`tuiperf REPORT --cache-dir DIR`, first screen = the scale label (`… /col`) is drawn.",
        "- **nsys-tui**: `nsys-tui summary REPORT` (its own per-kernel summary, not `nsys stats` "
        "columns). It keeps no cache: its cold and warm columns are the same command (only the "
        "OS page cache differs, and that is warm for every tool). Timeline: `nsys-tui timeline "
        "REPORT --gpu 0 --trim 0 SPAN` (curses), first screen = its key-help line. It draws the "
        "kernels found under the NVTX ranges of the thread that launched the most kernels; where "
        "that thread has no NVTX ranges (the autograd thread in these ViT reports) its screen has "
        "one empty lane `S?` (noted as *no kernels drawn*), so its time is not a comparable one.",
        "- **nsys-ai as pip installs it (offline)**: `nsys-ai summary REPORT` with the DuckDB pip "
        "resolves, no DuckDB extension present and no network: DuckDB tries to download its "
        "SQLite extension, fails, and nsys-ai falls back to Python's sqlite3 (slower; no cache "
        "gets built, so warm is the same path). Timeline: `nsys-ai timeline REPORT --gpu 0 --trim "
        "0 SPAN` (Textual), first screen = its `G0:S…` stream lane is drawn. Its timeline "
        "goes through the same failed downloads before falling back.",
        "- **nsys-ai + duckdb-extension-sqlite-scanner**: the same commands, with the extension "
        "wheel from PyPI installed into DuckDB's extension folder (pip pins DuckDB to the wheel's "
        "version). Cold = no `REPORT.nsys-cache` beside the report (nsys-ai builds its Parquet "
        "cache), warm = that cache built by an earlier run.",
        "",
        "SPAN = the report's last kernel end, rounded up, plus 0.1 s (the peers need a window; "
        "tuiperf opens on the whole report). Terminal: tmux "
        f"{peers_tmux.WIDTH}×{peers_tmux.HEIGHT}, polled every {peers_tmux.POLL_S:g} s; "
        "time from the tool's process start to the marker on screen, then the tool is ended. "
        "÷ tuiperf = peer time / tuiperf time in the same column (above 1 = tuiperf is faster).",
        "",
        "Reports: "
        + "; ".join(
            f"{r.path.name} ({r.kernels:,} kernels, {info['runs'][r.path.name]} "
            f"run(s), load {info['loads'][r.path.name]})"
            for r in reports
        )
        + ".",
        *busy(reports, info),
        "## Time to a kernel summary",
        "",
        *table(reports, tool_list, "sum_cold", "sum_warm"),
        "",
        "## Time to the first timeline screen in a real terminal (tmux)",
        "",
        *table(reports, tool_list, "tl_cold", "tl_warm"),
        "",
    ]
    out.write_text("\n".join(lines))


def busy(reports: list[Report], info: dict) -> list[str]:
    """A warning line for reports measured while the load average exceeded the core count."""
    cores = os.cpu_count() or 1
    hot = [r.path.name for r in reports if float(info["loads"][r.path.name].split("→")[1]) > cores]
    if not hot:
        return [""]
    return [
        "",
        f"The load average rose above the {cores} cores while measuring {', '.join(hot)} (these "
        "tools' own threads and other people's work): those seconds are the least reliable.",
        "",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", type=Path, default=REPO / "bench" / ".peers-venv")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--timeout", type=float, default=180.0, help="seconds before a run counts as stalled"
    )
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "peers.md")
    ap.add_argument("reports", nargs="*", type=Path, default=REPORTS)
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("bench-peers: tmux is missing (apt-get install -y tmux)")
    missing = [p for p in args.reports if not p.exists()]
    if missing:
        raise SystemExit(
            f"bench-peers: missing {', '.join(map(str, missing))}; `make bench` makes them "
            "(bench/run.py decompresses the bundled reports and tiles them into bench/data/)"
        )
    env = Env(args.venv.resolve())
    WORK.mkdir(parents=True, exist_ok=True)
    versions = setup(env)
    tool_list = tools(env)
    loads: dict[str, str] = {}
    runs: dict[str, int] = {}
    reports = []
    started = os.getloadavg()[0]
    for src in args.reports:
        rep = describe(prepare(src))
        reports.append(rep)
        n = 1 if src.stat().st_size > BIG else args.runs
        runs[rep.path.name] = n
        before = os.getloadavg()[0]
        measure(rep, tool_list, n, args.timeout, log)
        loads[rep.path.name] = f"{before:.2f}→{os.getloadavg()[0]:.2f}"
    info = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "load": f"{started:.2f} at the start, {os.getloadavg()[0]:.2f} at the end",
        "tuiperf": tool_version([str(TUIPERF), "--version"]),
        "tmux": tmux_version(),
        "env": os.path.relpath(env.root, REPO),
        "runs": runs,
        "loads": loads,
        **versions,
    }
    write(args.out, reports, tool_list, info)
    print(f"wrote {args.out}")


def log(report: Report, t: Tool, kind: str, i: int, run: Run) -> None:
    report.cell(t.label, kind).runs.append(run)
    secs = "—" if run.seconds is None else f"{run.seconds:.2f} s"
    rss = "—" if run.rss_mib is None else f"{run.rss_mib:.0f} MiB"
    print(
        f"{report.path.name:24} {kind:8} #{i} {t.label[:44]:44} {secs:>9} {rss:>9} {run.note}",
        flush=True,
    )


if __name__ == "__main__":
    main()
