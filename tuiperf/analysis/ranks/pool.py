"""Run the per-rank map step (analysis.ranks.summary.summarize) over a set of reports: in this
process, on a local process pool (the default), or on an existing Dask cluster.

Each report is converted into the cache and reduced independently; the results come back
as data (RankResult, or Failed with its one-line reason), in the order of the paths.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from tuiperf import settings
from tuiperf.analysis.ranks.summary import Failed, Job, RankResult, summarize
from tuiperf.errors import MissingToolError

Result = list[RankResult] | Failed


def split(results: Sequence[Result]) -> tuple[list[RankResult], list[Failed]]:
    """The ranks of all reports, and the reports that failed."""
    ok = [r for res in results if not isinstance(res, Failed) for r in res]
    return ok, [res for res in results if isinstance(res, Failed)]


def run_local(jobs: Sequence[Job], workers: int | None = None) -> list[Result]:
    """On a process pool of `workers` processes (default: one per report, at most one per
    CPU); in this process when that is one."""
    n = workers or min(len(jobs), os.cpu_count() or 1)
    if n <= 1 or len(jobs) <= 1:
        return [summarize(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=n) as pool:
        return list(pool.map(summarize, jobs))


def run_dask(jobs: Sequence[Job], address: str) -> list[Result]:
    """On the Dask cluster whose scheduler is at `address` (needs tuiperf[dask], and tuiperf
    importable on the workers)."""
    try:
        from distributed import Client
    except ImportError as e:
        raise MissingToolError(
            "--scheduler needs Dask's distributed package: pip install 'tuiperf[dask]'"
        ) from e
    try:
        client = Client(address, timeout="30s")
    except (OSError, TimeoutError, ValueError) as e:
        raise MissingToolError(f"--scheduler {address}: cannot reach it ({e})") from e
    with client:
        futures = client.map(summarize, list(jobs), pure=False)
        return list(client.gather(futures))


def scheduler_from_env() -> str | None:
    """The scheduler Dask's own configuration names (DASK_SCHEDULER_ADDRESS, or
    `scheduler-address` in its config files), when Dask is installed."""
    env = settings.dask_scheduler()
    if env:
        return env
    try:
        import dask.config
    except ImportError:
        return None
    value = dask.config.get("scheduler-address", default=None)
    return str(value) if value else None
