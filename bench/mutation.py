"""Mutation testing of the core modules (`make mutation`; not in CI: too slow).

Each module runs on its own, against the tests for that module only, in a scratch copy of
the checkout (mutmut 3 writes its mutants under `mutants/` of the folder it runs in; the
checkout itself is never touched). mutmut picks, for each mutant, the tests that called
the mutated function in-process; tests that reach the code only through a subprocess
(`python -m tuiperf ...`) are not picked, so every survivor is run again against the
module's test files that start a subprocess, with the mutant switched on
(MUTANT_UNDER_TEST, which the subprocesses inherit). What still survives is listed, with
its diff, in bench/mutation/<module>.txt; bench/mutation.md explains each one.

    python bench/mutation.py                      # every module, 15 min each
    python bench/mutation.py step_budget diff     # some
    python bench/mutation.py --minutes 5 --work /tmp/mut
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "mutation"
U = "tests/unit/"
#: module (short name) -> (its file, the tests for it)
MODULES: dict[str, tuple[str, list[str]]] = {
    "step_budget": ("tuiperf/analysis/budget/step_budget.py", [
        U + "test_step_budget.py", U + "test_budget_planted.py", U + "test_budget_cli.py",
        U + "test_compile_warmup.py", U + "test_cuda_graphs.py", U + "test_oracle_step_time.py",
        U + "test_oracle_step_budget_mut.py", U + "test_oracle_step_budget_mut_edges.py",
        U + "test_oracle_capture_cost.py", U + "test_oracle_unlinked_ops.py",
        U + "test_oracle_untraced_mark.py", U + "test_oracle_step_budget_given_steps.py"]),
    "intervals": ("tuiperf/analysis/intervals.py", [
        U + "test_analysis_intervals.py", U + "test_oracle_intervals.py"]),
    "interval_sets": ("tuiperf/analysis/interval_sets.py", [U + "test_oracle_intervals.py"]),
    "comm": ("tuiperf/analysis/budget/comm.py", [U + "test_comm.py", U + "test_oracle_comm.py"]),
    "diff": ("tuiperf/analysis/diff/compare.py", [
        U + "test_diff.py", U + "test_oracle_diff.py", U + "test_oracle_diff_rows.py",
        U + "test_oracle_diff_mut.py", U + "test_oracle_diff_mut_rows.py"]),
    "ranks_set": ("tuiperf/analysis/ranks/assemble.py", [
        U + "test_oracle_ranks_set.py", U + "test_oracle_ranks_waits.py",
        U + "test_oracle_ranks_assemble.py"]),
    "query": ("tuiperf/model/timeline/query.py", [
        U + "test_query.py", U + "test_oracle_query.py", U + "test_sort_order.py",
        U + "test_oracle_query_sort.py", U + "test_oracle_query_text.py"]),
    "stats": ("tuiperf/summaries/stats.py", [
        U + "test_summary_golden.py", U + "test_groupstats.py", U + "test_oracle_stats.py"]),
    "roofline": ("tuiperf/analysis/ncu/roofline.py", [
        U + "test_ncu_depth_roofline.py", U + "test_oracle_roofline.py"]),
    "sample": ("tuiperf/analysis/sample.py", [U + "test_analysis_sample.py"]),
    "early": ("tuiperf/tui/early.py", ["tests/tui/test_early_open.py"]),
    "arrays": ("tuiperf/model/arrays.py", [
        U + "test_first_screen_imports.py", U + "test_from_numpy.py"]),
    "narrow": ("tuiperf/load/cache/narrow.py", [
        U + "test_cache_narrow.py", U + "test_cache_details_file.py",
        U + "test_stored_columns.py"]),
    "lane_split": ("tuiperf/model/timeline/lane_split.py", [
        U + "test_lane_index.py", U + "test_lanes.py"]),
    "lane_intervals": ("tuiperf/model/timeline/lane_intervals.py", [
        U + "test_lanes.py", U + "test_lane_index.py"]),
    "lane_cache": ("tuiperf/model/timeline/lane_cache.py", [
        U + "test_lanes.py", U + "test_lane_cache.py"]),
    "stored_columns": ("tuiperf/model/stored_columns.py", [U + "test_stored_columns.py"]),
    "trace": ("tuiperf/model/trace.py", [
        U + "test_stored_columns.py", U + "test_narrow_readers.py", U + "test_deferred_details.py",
        U + "test_trace_on_details.py", U + "test_cache_details_file.py",
        U + "test_lanes.py", U + "test_lane_cache.py", U + "test_analysis_sample.py"]),
    "store": ("tuiperf/load/cache/store.py", [
        U + "test_cache.py", U + "test_cache_cap.py", U + "test_cache_details_file.py",
        U + "test_cache_small_compressed.py", U + "test_cache_big_tables_wide.py",
        U + "test_private_cache.py"]),
    "ncu_link": ("tuiperf/model/ncu/link.py", [
        U + "test_ncu_link.py", U + "test_oracle_ncu_link.py"]),
}  # fmt: skip
#: tests too heavy for mutmut's forked runs (process pools, a Dask cluster): run only
#: against the survivors, like the subprocess tests
CONFIRM_ONLY: dict[str, list[str]] = {"ranks_set": [U + "test_ranks.py"]}


def scratch_copy(work: Path) -> None:
    """The checkout's tracked and untracked (not ignored) files, copied into `work`."""
    if work.exists():
        shutil.rmtree(work)
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / name)


def configure(work: Path, target: str, tests: list[str]) -> None:
    """mutmut's settings in setup.cfg (pyproject.toml has no [tool.mutmut], so it is read)."""
    lines = ["[mutmut]", "source_paths=tuiperf", f"only_mutate={target}",
             "pytest_add_cli_args_test_selection=", *(f"    {t}" for t in tests),
             "pytest_add_cli_args=", "    -p", "    no:cacheprovider", ""]  # fmt: skip
    (work / "setup.cfg").write_text("\n".join(lines))


def env_for(work: Path, mutant: str | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(work)}
    env.pop("MUTANT_UNDER_TEST", None)
    if mutant:
        env["MUTANT_UNDER_TEST"] = mutant
    return env


def results(work: Path) -> dict[str, str]:
    """mutant name -> status (killed, survived, timeout, not checked, ...)."""
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=work, env=env_for(work), capture_output=True, text=True,
    ).stdout  # fmt: skip
    got = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+): (.+)$", line)
        if m and "__mutmut_" in m.group(1):
            got[m.group(1)] = m.group(2).strip()
    return got


def spawning(work: Path, tests: list[str]) -> list[str]:
    """The test files that run tuiperf in a subprocess (mutmut never picks them)."""
    return [t for t in tests if re.search(r"subprocess|sys\.executable", (work / t).read_text())]


def confirm(work: Path, mutant: str, tests: list[str], limit: float) -> bool:
    """Whether the mutant survives `tests` (subprocesses included)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        res = subprocess.run(cmd, cwd=work / "mutants", env=env_for(work / "mutants", mutant),
                             capture_output=True, timeout=limit)  # fmt: skip
    except subprocess.TimeoutExpired:
        return False  # a mutant that hangs the tests is caught (mutmut: timeout)
    return res.returncode == 0


def show(work: Path, mutant: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "mutmut", "show", mutant],
        cwd=work, env=env_for(work), capture_output=True, text=True,
    ).stdout  # fmt: skip


def run_module(name: str, work: Path, minutes: float, children: int) -> str:
    target, tests = MODULES[name]
    work = work / name
    scratch_copy(work)
    configure(work, target, tests)
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(children)]
    try:
        subprocess.run(cmd, cwd=work, env=env_for(work), capture_output=True,
                       timeout=minutes * 60)  # fmt: skip
        finished = True
    except subprocess.TimeoutExpired:
        finished = False
    status = results(work)
    return report(name, work, status, tests, finished, time.monotonic() - t0, children)


def report(
    name: str,
    work: Path,
    status: dict[str, str],
    tests: list[str],
    finished: bool,
    spent: float,
    children: int = 2,
) -> str:
    """Confirm the survivors, write bench/mutation/<name>.txt, return the summary line."""
    survived = [m for m, s in status.items() if s == "survived"]
    spawn = spawning(work, tests) + CONFIRM_ONLY.get(name, [])
    with ThreadPoolExecutor(children) as pool:
        alive = list(pool.map(lambda m: not spawn or confirm(work, m, spawn, 600), survived))
    still = [m for m, a in zip(survived, alive) if a]
    counts = {s: list(status.values()).count(s) for s in sorted(set(status.values()))}
    counts["survived"] = len(still)
    counts["killed"] = counts.get("killed", 0) + len(survived) - len(still)
    end = "finished" if finished else "stopped at the time limit"
    tally = ", ".join(f"{k} {v}" for k, v in counts.items())
    line = f"{name}: {len(status)} mutants, {tally}; {end} in {spent / 60:.0f} min"
    OUT.mkdir(parents=True, exist_ok=True)
    body = [line, f"tests: {' '.join(tests)}", ""] + [show(work, m) for m in still]
    (OUT / f"{name}.txt").write_text("\n".join(body))
    return line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help=f"some of: {' '.join(MODULES)} (default: all)")
    ap.add_argument("--minutes", type=float, default=15.0, help="per module (default 15)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/tuiperf-mutation"))
    ap.add_argument("--children", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args(argv)
    unknown = set(args.modules) - set(MODULES)
    if unknown:
        ap.error(f"unknown module(s): {' '.join(sorted(unknown))}")
    for name in args.modules or list(MODULES):
        print(run_module(name, args.work, args.minutes, args.children), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
