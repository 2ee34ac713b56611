#!/usr/bin/env python3
"""Compare tuiperf's first finding and its saving estimate with the independent ground truth.

    python bench/advice/compare.py [DATA_DIR] [--out bench/advice.md] [--check]

For each capture `<program>.sqlite[.xz]` in DATA_DIR (default bench/advice/data): the ground
truth (ground_truth.py, which never imports tuiperf) against `tuiperf analyze --format json`
run as a subprocess. For each pair `<p>` / `<p>_fix` (or `_fixed`): the estimated saving of the
base capture (tuiperf's first finding, and the ground truth's) against the measured one: base
minus fix STEADY_STEP_MS from the runs without nsys in `<p>.log` / `<p>_fix.log`, and the
difference of the ground truth's GPU-side step times of the two captures.

Writes a markdown report (bench/advice.md). --check exits 1 when the first finding is right on
fewer than 90 % of the captures or the estimate is within 2x of the measured saving on fewer
than 80 % of the pairs. Compressed captures are decompressed once into a cache in the temporary
directory (keyed by name, size and mtime), never beside the data.
"""

from __future__ import annotations

import argparse
import json
import lzma
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TUIPERF = REPO / ".venv" / "bin" / "tuiperf"
CACHE = Path(tempfile.gettempdir()) / "tuiperf_advice_cache"
FIX_SUFFIXES = ("_fix", "_fixed")
#: variants whose change is the first finding's own fix (its option 1 or 2), beside `_fix`
TOP_SUFFIXES = ("_top", "_batch")
VARIANT_SUFFIXES = FIX_SUFFIXES + TOP_SUFFIXES
RIGHT_TARGET, WITHIN_TARGET = 0.90, 0.80

#: ground-truth class -> tuiperf rule ids accepted as the first finding
ACCEPT: dict[str, set[str]] = {
    "cpu_bound": {"cpu_bound"},
    "inference_launch_bound": {"inference_launch_bound", "cpu_bound"},
    "tiny_optimizer_kernels": {"tiny_optimizer_kernels"},
    "dataloader_starvation": {"dataloader_starvation"},
    "host_sync_per_step": {"host_sync_per_step", "cuda_api_sync", "cuda_memcpy_sync"},
    "pageable_copy": {
        "pageable_h2d_in_steps",
        "copy_bound",
        "cuda_memcpy_async",
        "cuda_memcpy_sync",
    },
    "copy_bound": {"copy_bound", "pageable_h2d_in_steps"},
    "fp32_no_tensor_cores": {"fp32_no_tensor_cores"},
    "misaligned_gemm": {"misaligned_gemm"},
    "exposed_comm": {"exposed_comm", "gloo_staging"},
    "gpu_bound_healthy": {"gpu_bound", "gpu_bound_healthy", "top_kernel"},
    "graphs_untraced": {"graphs_untraced"},
}

sys.path.insert(0, str(HERE))
import already  # noqa: E402  (beside this file; independent of tuiperf)
import ground_truth  # noqa: E402  (beside this file; independent of tuiperf)

# ----------------------------------------------------------------------------- files


def plain_copy(path: Path) -> Path:
    """The capture as a plain .sqlite: itself, or a cached decompressed copy."""
    if path.suffix != ".xz":
        return path
    st = path.stat()
    stem = path.name[: -len(".sqlite.xz")]
    out = CACHE / f"{stem}.{st.st_size}.{st.st_mtime_ns}.sqlite"
    if out.exists():
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob(f"{stem}.*.sqlite"):
        old.unlink()
    tmp = out.with_suffix(".part")
    with lzma.open(path) as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    tmp.rename(out)
    return out


def captures(data: Path) -> dict[str, Path]:
    """Program name -> capture file (a plain .sqlite wins over its .xz)."""
    out: dict[str, Path] = {}
    for p in sorted(data.glob("*.sqlite.xz")) + sorted(data.glob("*.sqlite")):
        name = p.name.removesuffix(".xz").removesuffix(".sqlite")
        out[name] = p
    return out


def is_fix(name: str) -> bool:
    return name.endswith(VARIANT_SUFFIXES)


# ----------------------------------------------------------------------------- logs

NUM = r"([0-9]+(?:\.[0-9]+)?)"


def last_value(text: str, tag: str) -> float | None:
    vals = re.findall(rf"^{tag}\W+{NUM}", text, re.M)
    return float(vals[-1]) if vals else None


def log_times(data: Path, name: str) -> dict[str, Any]:
    """STEADY_STEP_MS (and BATCH) without nsys and under nsys for capture `name`: from
    `<name>.plain.log` / `<name>.nsys.log` (capture.sh's raw files), else from the program's log
    `<program>.log` with its `#### <variant>, without|under nsys` sections, else `<name>.log`."""
    plain, nsys = data / f"{name}.plain.log", data / f"{name}.nsys.log"
    if plain.exists() or nsys.exists():
        out: dict[str, Any] = {}
        for key, path in (("plain", plain), ("nsys", nsys)):
            text = path.read_text(errors="replace") if path.exists() else ""
            out[key] = last_value(text, "STEADY_STEP_MS")
            out.setdefault("batch", last_value(text, "BATCH"))
        return out
    for prog in sorted(data.glob("*.log"), key=lambda p: -len(p.stem)):
        if name.startswith(prog.stem):
            variant = name[len(prog.stem) :].lstrip("_") or "base"
            found = sectioned_log(prog, variant)
            if found is not None:
                return found
    return combined_log(data / f"{name}.log")


SECTION = re.compile(r"^#{3,}\s*(\w+),\s*(without|under)\s+nsys", re.I | re.M)


def sectioned_log(path: Path, variant: str) -> dict[str, Any] | None:
    """The values of one variant (base, fix, node, ...) in a log of `#### <variant>, without
    nsys` / `#### <variant>, under nsys` sections; None when the log has no such section."""
    text = path.read_text(errors="replace")
    heads = list(SECTION.finditer(text))
    out: dict[str, Any] = {"plain": None, "nsys": None, "batch": None}
    found = False
    for k, h in enumerate(heads):
        if h.group(1).lower() != variant.lower():
            continue
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        body = text[h.end() : end]
        run = "plain" if h.group(2).lower() == "without" else "nsys"
        out[run] = last_value(body, "STEADY_STEP_MS")
        out["batch"] = out["batch"] or last_value(body, "BATCH")
        found = True
    return out if found else None


def combined_log(path: Path) -> dict[str, Any]:
    """A log holding both runs: a STEADY_STEP_MS value is "nsys" when its line, or the last
    line before it that names a run (mentions nsys, plain, bare or without), says nsys without
    negating it."""
    out: dict[str, Any] = {"plain": None, "nsys": None, "batch": None}
    if not path.exists():
        return out
    ctx = ""
    text = path.read_text(errors="replace")
    out["batch"] = last_value(text, "BATCH")
    for line in text.splitlines():
        m = re.search(rf"STEADY_STEP_MS\W*{NUM}", line)
        if m is None:
            if re.search(r"nsys|plain|bare|without|no[-_ ]?prof", line, re.I):
                ctx = line
            continue
        head = line[: m.start()] + line[m.end() :]
        run = "nsys" if under_nsys(head if re.search("nsys", head, re.I) else ctx) else "plain"
        out[run] = float(m.group(1))
    return out


def under_nsys(text: str) -> bool:
    if not re.search("nsys", text, re.I):
        return False
    neg = r"no[-_ ]?nsys|without[-_ ]?nsys|nsys\s*[=:]\s*(0|no|false|off)"
    return not re.search(neg, text, re.I)


# ----------------------------------------------------------------------------- the two sides


@dataclass
class Row:
    name: str
    gt: dict[str, Any]
    tp: dict[str, Any]
    expected: str = ""
    log: dict[str, Any] = field(default_factory=dict)


def run_tuiperf(path: Path) -> dict[str, Any]:
    try:
        res = subprocess.run(
            [str(TUIPERF), "analyze", "--format", "json", str(path)],
            capture_output=True,
            text=True,
            timeout=900,
        )
    except subprocess.TimeoutExpired:
        return {"error": "tuiperf timed out"}
    if res.returncode != 0:
        return {"error": f"tuiperf exit {res.returncode}: {res.stderr.strip()[-300:]}"}
    return tuiperf_summary(json.loads(res.stdout))


def tuiperf_summary(d: dict[str, Any]) -> dict[str, Any]:
    budget = d.get("budget") or {}
    step = budget.get("step_ns")
    if step is None and budget.get("steady_median_ns"):
        step = sum(budget["steady_median_ns"].values())
    findings = d.get("findings") or []
    first = findings[0] if findings else {}
    n = budget.get("steady_steps") or 0
    saving = first.get("est_saving_ns")
    per_step = saving / n if saving is not None and n else None
    return {
        "rule": first.get("rule", "(none)"),
        "title": first.get("title", ""),
        "step_ns": step,
        "step_basis": budget.get("step_basis", "sum of steady_median_ns"),
        "steady_steps": n,
        "saving_ns": per_step,
        "rules": [f.get("rule") for f in findings[:4]],
        "fixes": [{k: f.get(k) for k in ("rule", "fix", "snippet")} for f in findings],
        "savings": {
            f.get("rule"): f["est_saving_ns"] / n
            for f in findings
            if f.get("est_saving_ns") is not None and n
        },
    }


def run_ground_truth(path: Path) -> dict[str, Any]:
    try:
        return ground_truth.run(str(path))
    except Exception as exc:  # a broken capture is a row, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}


def expected(name: str) -> str:
    """The program's own 'Expected bottleneck:' sentence, from the longest programs/<p>.py whose
    name starts `name` (variants: `<p>_fix`, `<p>_node`)."""
    progs = sorted(
        (p for p in (HERE / "programs").glob("*.py") if name.startswith(p.stem)),
        key=lambda p: -len(p.stem),
    )
    if not progs:
        return ""
    m = re.search(r"Expected bottleneck:\s*(.+?)(?:\n\s*\n|$)", progs[0].read_text(), re.S)
    return " ".join(m.group(1).split())[:160] if m else ""


def collect(data: Path) -> list[Row]:
    caps = captures(data)
    plain = {name: plain_copy(p) for name, p in caps.items()}
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(run_tuiperf, p) for name, p in plain.items()}
        rows = []
        for name, p in plain.items():
            gt = run_ground_truth(p)
            tp = futures[name].result()
            rows.append(Row(name, gt, tp, expected(name), log_times(data, name)))
    return rows


# ----------------------------------------------------------------------------- judging


def accepted(gt: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for cls in [gt.get("bottleneck", ""), *gt.get("also_acceptable", [])]:
        out |= ACCEPT.get(cls, {cls})
    return out


def right(row: Row) -> bool | None:
    if "error" in row.gt or "error" in row.tp:
        return None
    return row.tp["rule"] in accepted(row.gt)


def within_2x(est: float | None, measured: float | None) -> bool | None:
    if est is None or measured is None:
        return None
    if measured <= 0:
        return est <= 0.1 * max(abs(measured), 1.0) or est <= 0
    return 0.5 <= est / measured <= 2.0


#: the class each program's --fix addresses (from its docstring), to judge the estimate of the
#: finding that names the applied fix; AMP fixes (bf16 autocast over TF32) count as
#: fp32_no_tensor_cores, the nearest class of the vocabulary
FIX_CLASS = {
    "cpu_bound": "cpu_bound",
    "data_bound": "dataloader_starvation",
    "dataloader_heavy": "pageable_copy",
    "ddp_gloo": "exposed_comm",
    "hf_bert_fp32": "fp32_no_tensor_cores",
    "hf_generate": "inference_launch_bound",
    "hf_gpt2_trainer": "misaligned_gemm",
    "lightning_resnet18": "fp32_no_tensor_cores",
    "optimizer_foreach_off": "tiny_optimizer_kernels",
    "reduce_overhead": "cpu_bound",
    "sync_metrics": "host_sync_per_step",
    "timm_vit_loader": "dataloader_starvation",
    "tv_resnet_recipe": "fp32_no_tensor_cores",
}

#: what each `_top`/`_batch` variant (capture.sh's PLAN) changes: every one applies a lever of
#: the cpu_bound finding's fix, "1) a bigger batch" or "2) torch.compile(mode='reduce-overhead')"
APPLIED = {
    "compile_ahead_top": "2) mode='reduce-overhead' (already compiled)",
    "compile_default_top": "2) mode='reduce-overhead' (already compiled)",
    "ddp_gloo_top": "1) batch 64 -> 256",
    "hf_gpt2_trainer_top": "1) batch 16 -> 32",
    "lightning_resnet18_top": "1) batch 256 -> 1024",
    "sync_metrics_top": "1) batch 64 -> 256",
    "tv_resnet_recipe_top": "1) batch 32 -> 128",
}


@dataclass
class Pair:
    base: Row
    fix: Row | None  # None: only the log has the fix (its capture was not kept)
    fix_log: dict[str, Any]
    variant: str = "_fix"

    @property
    def fix_name(self) -> str:
        name = self.base.name + self.variant
        return name if self.fix else f"{name} (log only)"

    @property
    def fix_class(self) -> str | None:
        if self.variant in TOP_SUFFIXES:
            return "cpu_bound"
        return FIX_CLASS.get(self.base.name)

    @property
    def applied(self) -> str:
        return APPLIED.get(self.base.name + self.variant, "the program's --fix")

    @property
    def top_fix(self) -> bool | None:
        """Whether the change applies tuiperf's first finding's lever (its class is one the
        first finding's rule stands for)."""
        rule = self.base.tp.get("rule")
        if rule is None or self.fix_class is None:
            return None
        if self.applied.startswith("2)"):  # the fix's second lever, not the one it leads with
            return False
        return rule in ACCEPT.get(self.fix_class, {self.fix_class})

    @property
    def work_ratio(self) -> float:
        """Base batch / fix batch: the fix's step time scaled to the base step's work."""
        a, b = self.base.log.get("batch"), self.fix_log.get("batch")
        return a / b if a and b else 1.0

    @property
    def measured_plain(self) -> float | None:
        a, b = self.base.log.get("plain"), self.fix_log.get("plain")
        return (a - b * self.work_ratio) * 1e6 if a is not None and b is not None else None

    @property
    def measured_capture(self) -> float | None:
        a = self.base.gt.get("step_ns")
        b = self.fix.gt.get("step_ns") if self.fix else None
        return float(a - b * self.work_ratio) if a is not None and b is not None else None

    @property
    def measured(self) -> float | None:
        plain = self.measured_plain
        return plain if plain is not None else self.measured_capture

    def scaled(self, est: float | None, step: float | None) -> float | None:
        """An estimate in the measured saving's units: its share of the capture's step times
        the base's plain step (the capture's step may be another unit, e.g. one token, and
        nsys stretches it), or as it is when there is no plain step."""
        plain = self.base.log.get("plain")
        if est is None or plain is None or self.measured_plain is None:
            return est
        return est / step * plain * 1e6 if step else None

    def tp_est(self, first: bool) -> float | None:
        tp = self.base.tp
        if first:
            return self.scaled(tp.get("saving_ns"), tp.get("step_ns"))
        rules = ACCEPT.get(self.fix_class or "", set())
        hits = [v for r, v in tp.get("savings", {}).items() if r in rules and v is not None]
        return self.scaled(max(hits) if hits else 0.0, tp.get("step_ns"))

    def gt_est(self, first: bool) -> float | None:
        gt = self.base.gt
        if "error" in gt:
            return None
        est = (
            gt["est_saving_ns"]
            if first
            else gt["class_savings_ns_per_step"].get(self.fix_class or "", 0.0)
        )
        return self.scaled(est, gt.get("step_ns"))


def pairs(rows: list[Row], data: Path) -> list[Pair]:
    by = {r.name: r for r in rows}
    out = []
    for r in rows:
        if is_fix(r.name) or ("_" in r.name and r.name.rsplit("_", 1)[0] in by):
            continue
        for suf in VARIANT_SUFFIXES:
            f = r.name + suf
            fix_log = by[f].log if f in by else log_times(data, f)
            if f in by or fix_log.get("plain") is not None:
                out.append(Pair(r, by.get(f), fix_log, suf))
    return out


# ----------------------------------------------------------------------------- the report


def ms(ns: float | None) -> str:
    return "–" if ns is None else f"{ns / 1e6:.2f}"


def yes(v: bool | None) -> str:
    return "–" if v is None else ("yes" if v else "**no**")


def capture_table(rows: list[Row]) -> list[str]:
    out = [
        "| program | true bottleneck (ground truth) | as good | tuiperf first finding | match "
        "| step ms GT | step ms tuiperf (basis) | GT est ms | tuiperf est ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        gt, tp = r.gt, r.tp
        if "error" in gt:
            out.append(f"| {r.name} | error: {gt['error']} | | {tp.get('rule', '')} | – | | | | |")
            continue
        out.append(
            f"| {r.name} | {gt['bottleneck']} | {', '.join(gt.get('also_acceptable', [])) or '–'} "
            f"| {tp.get('rule', tp.get('error', ''))} | {yes(right(r))} | {ms(gt['step_ns'])} "
            f"| {ms(tp.get('step_ns'))} ({tp.get('step_basis', '')}) | {ms(gt['est_saving_ns'])} "
            f"| {ms(tp.get('saving_ns'))} |"
        )
    return out


def pair_table(ps: list[Pair]) -> list[str]:
    out = [
        "| pair | change | fix addresses | top finding's fix | measured ms (no nsys) "
        "| measured ms (captures) | first finding est ms: tuiperf / GT | within 2x "
        "| fix-class est ms: tuiperf / GT | within 2x |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in ps:
        m = p.measured
        t1, g1, t2, g2 = p.tp_est(True), p.gt_est(True), p.tp_est(False), p.gt_est(False)
        out.append(
            f"| {p.base.name} / {p.fix_name} | {p.applied} | {p.fix_class or '?'} "
            f"| {yes(p.top_fix)} | {ms(p.measured_plain)} "
            f"| {ms(p.measured_capture)} | {ms(t1)} / {ms(g1)} "
            f"| {yes(within_2x(t1, m))} / {yes(within_2x(g1, m))} | {ms(t2)} / {ms(g2)} "
            f"| {yes(within_2x(t2, m))} / {yes(within_2x(g2, m))} |"
        )
    return out


def detail(rows: list[Row]) -> list[str]:
    out = ["## Per capture", ""]
    for r in rows:
        gt = r.gt
        out.append(f"### {r.name}")
        if r.expected:
            out.append(f"- program says: {r.expected}")
        if "error" in gt:
            out += [f"- ground truth: {gt['error']}", ""]
            continue
        split = ", ".join(
            f"{k} {v / 1e6:.2f}" for k, v in gt["idle_split_ns_per_step"].items() if v
        )
        out += [
            f"- steps: {gt['step_source']}, {gt['n_steady']} steady; step {ms(gt['step_ns'])} ms "
            f"(CPU median {ms(gt['cpu_step_median_ns'])}, queue depth "
            f"{gt['queue_depth_ns'] / 1e3:.0f} us); GPU busy {100 * gt['busy_share']:.1f} %",
            f"- idle ms/step: {split or 'none'}",
            f"- precision: {gt['precision_shares']}; "
            f"fallback GEMMs {gt['fallback_gemm_share']:.1%}",
            "- class savings ms/step: "
            + ", ".join(f"{k} {v / 1e6:.2f}" for k, v in gt["class_savings_ns_per_step"].items()),
            f"- lever: {gt['lever']}; as good: {', '.join(gt['also_acceptable']) or '–'}",
            log_line(r.log),
            f"- tuiperf: {', '.join(str(x) for x in r.tp.get('rules', [])) or r.tp.get('error')}",
            f"- advises what the run already does: {', '.join(already_done(r)) or 'nothing'}",
            "",
        ]
    return out


def already_done(row: Row) -> list[str]:
    """The findings that advise a switch the program already has (already.DOES)."""
    return already.violations(row.name, row.tp.get("fixes", []))


def count(vals: list[bool | None]) -> tuple[int, int]:
    known = [v for v in vals if v is not None]
    return sum(known), len(known)


def log_line(log: dict[str, Any]) -> str:
    plain, nsys = log.get("plain"), log.get("nsys")
    if plain is None and nsys is None:
        return "- logs: none"
    stretch = f" (nsys stretches the step {nsys / plain:.2f}x)" if plain and nsys else ""
    return f"- logs: STEADY_STEP_MS {plain} without nsys, {nsys} under nsys{stretch}"


def summary(rows: list[Row], ps: list[Pair]) -> tuple[list[str], bool]:
    right_n, judged = count([right(r) for r in rows])
    top = [p for p in ps if p.top_fix]
    # tuiperf claiming no saving where the fix saved time is a miss, not a pair left out
    t1 = count([within_2x(p.tp_est(True) or 0.0, p.measured) for p in top])
    g1 = count([within_2x(p.gt_est(True), p.measured) for p in top])
    t2 = count([within_2x(p.tp_est(False) or 0.0, p.measured) for p in ps])
    g2 = count([within_2x(p.gt_est(False), p.measured) for p in ps])
    ok = judged > 0 and right_n >= RIGHT_TARGET * judged
    ok = ok and (t1[1] == 0 or t1[0] >= WITHIN_TARGET * t1[1])
    judged_already = [r for r in rows if r.name in already.DOES and "error" not in r.tp]
    repeats = [
        f"{r.name} ({', '.join(already_done(r))})" for r in judged_already if already_done(r)
    ]
    ok = ok and not repeats
    lines = [
        f"- first finding right on {right_n} of {judged} captures (target ≥ {RIGHT_TARGET:.0%})",
        f"- pairs whose change applies the lever tuiperf's first finding leads with (its fix's "
        f"option 1, or the program's --fix where it is that lever): first finding's estimate "
        f"within 2x of the measured saving on {t1[0]} of {t1[1]} (target ≥ {WITHIN_TARGET:.0%}); "
        f"the ground truth's: {g1[0]} of {g1[1]}",
        f"- every pair: estimate of the finding that names the applied fix within 2x on {t2[0]} "
        f"of {t2[1]}; the ground truth's: {g2[0]} of {g2[1]}",
        f"- captures where a finding advises what the program already does (its switches read "
        f"from its source, bench/advice/already.py): {len(repeats)} of {len(judged_already)} "
        f"(target 0){': ' + '; '.join(repeats) if repeats else ''}",
    ]
    return lines, ok


def render(rows: list[Row], ps: list[Pair], data: Path) -> tuple[str, bool]:
    lines, ok = summary(rows, ps)
    text = [
        "# tuiperf advice against the ground truth",
        "",
        f"Captures: `{data}`. Ground truth: `bench/advice/ground_truth.py` (independent of "
        "tuiperf; its rules are in its docstring). Written by `bench/advice/compare.py`.",
        "Savings are per step. 'Measured' is base minus fix STEADY_STEP_MS without nsys when the "
        "logs have it, else the ground truth's GPU-side step time difference of the captures; "
        "when the fix changes the batch (BATCH in the logs), the fix's step time is first scaled "
        "to the base batch (base - fix x base batch / fix batch). Against a measured saving "
        "without nsys, an estimate is taken as its share of the capture's step times the base's "
        "plain step (the capture's step can be another unit, and nsys stretches it). "
        "'fix addresses': the class of the program's --fix (compare.FIX_CLASS).",
        "",
        "## Summary",
        "",
        *lines,
        "",
        "## First finding",
        "",
        *capture_table(rows),
        "",
        "## Pairs",
        "",
        *(pair_table(ps) if ps else ["(no `<p>` / `<p>_fix` pairs)"]),
        "",
        *detail(rows),
    ]
    return "\n".join(text) + "\n", ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default=str(HERE / "data"))
    ap.add_argument("--out", default=str(REPO / "bench" / "advice.md"))
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    data = Path(args.data)
    rows = collect(data)
    if not rows:
        print(f"no captures in {data}", file=sys.stderr)
        return 1
    ps = pairs(rows, data)
    text, ok = render(rows, ps, data)
    Path(args.out).write_text(text)
    print("\n".join(summary(rows, ps)[0]))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
