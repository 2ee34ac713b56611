"""The Python API, for notebooks and scripts: `tuiperf.open(path)` and what it returns.

    import tuiperf
    p = tuiperf.open("run.sqlite")            # or .nsys-rep, a torch.profiler trace, ...
    p.kernels                                 # pyarrow.Table; p.kernels.to_pandas()
    p.summary("cuda_gpu_kern_sum").to_pandas()
    p.step_budget()                           # analysis.budget.step_budget.Budget, or None
    p.analyze().to_pandas()                   # one row per finding
    p.sql("SELECT name, sum(duration_ns) FROM kernels GROUP BY name")  # tuiperf[sql]
    p.memory()                                # GPU memory (tuiperf memory), or with a
    tuiperf.api.memory("snap.pickle")         # PyTorch allocator snapshot

Reports are read through the same conversion cache as the CLI (OpenOptions). pandas is
optional (`pip install tuiperf[pandas]`) and imported only by the `to_pandas` methods.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tuiperf import schema, settings
from tuiperf.analysis.budget.context import Ctx
from tuiperf.analysis.engine import AnalyzeOptions, all_rule_ids
from tuiperf.analysis.engine import analyze as run_rules
from tuiperf.analysis.findings import AnalysisResult, Finding, RuleCheck
from tuiperf.analysis.rules.nsys import NsysOptions
from tuiperf.analysis.sample import Sample
from tuiperf.errors import UsageError
from tuiperf.load import detect as det
from tuiperf.load.ncu.open import open_ncu
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.load.progress import OnProgress
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.model.trace import Trace, TraceMeta

if TYPE_CHECKING:
    import pandas

    from tuiperf.analysis.budget.step_budget import Budget
    from tuiperf.analysis.gpumem.summary import MemoryReport

__all__ = ["Analysis", "Profile", "Summary", "memory", "open"]

PANDAS_MISSING = "to_pandas() needs pandas, which is not installed: pip install 'tuiperf[pandas]'"


def _pandas() -> Any:
    """pandas, imported on first use, or an ImportError that names the extra."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError(PANDAS_MISSING) from e
    return pandas


def _frame(table: pa.Table) -> pandas.DataFrame:
    _pandas()
    return table.to_pandas()


def open(
    path: str | os.PathLike[str],
    ncu: str | os.PathLike[str] | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    progress: OnProgress | None = None,
) -> Profile:
    """A report, opened: an Nsight Systems export or `.nsys-rep`, a torch.profiler trace,
    a `tuiperf convert` folder, or an Nsight Compute report (`.ncu-rep`, ncu CSV) alone.

    `ncu`: an Nsight Compute report of the same program, beside the timeline. `cache_dir`
    and `use_cache` are the CLI's `--cache-dir` and `--no-cache` (`TUIPERF_NO_CACHE` set
    also turns the cache off); `progress` receives `tuiperf.load.progress.Progress` steps.
    """
    opts = OpenOptions(
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        use_cache=use_cache and not settings.no_cache(),
        progress=progress,
    )
    first = Path(path)
    if det.detect(first) in (det.NCU_REP, det.NCU_CSV):
        if ncu is not None:
            raise UsageError(f"{first}: an Nsight Compute report; give the timeline first")
        return Profile(None, open_ncu(first, opts))
    km = open_ncu(Path(ncu), opts) if ncu is not None else None
    return Profile(open_trace(first, opts), km)


def memory(
    path: str | os.PathLike[str],
    other: str | os.PathLike[str] | None = None,
    *,
    at_ns: int | None = None,
    use_cache: bool = True,
) -> MemoryReport:
    """`tuiperf memory PATH [OTHER]`: a PyTorch allocator snapshot, a timeline report with
    memory events, or one of each. The report's `devices` hold per GPU the curve
    (`curve.allocated`, `curve.reserved`, `curve.time_ns`), the peaks, what is live at the
    peak (or `at_ns`) by source line (`at.sites`), per-step memory and any out-of-memory;
    `findings` the memory findings."""
    from tuiperf.analysis.gpumem.run import memory_report
    from tuiperf.load.gpumem.open import open_memory

    opts = OpenOptions(use_cache=use_cache and not settings.no_cache())
    inputs = open_memory(Path(path), Path(other) if other is not None else None, opts)
    return memory_report(inputs.memory, inputs.trace, at_ns, inputs.timeline_memory)


@dataclass(frozen=True, eq=False)
class Summary:
    """One summary report (`tuiperf summary --report NAME`): typed values, one column per
    key, with the header `nsys stats` prints for it in `headers`."""

    name: str
    table: pa.Table
    headers: dict[str, str]

    def __len__(self) -> int:
        return self.table.num_rows

    def to_pandas(self, nsys_headers: bool = False) -> pandas.DataFrame:
        """A DataFrame; with `nsys_headers`, columns named as in `nsys stats`' CSV."""
        df = _frame(self.table)
        return df.rename(columns=self.headers) if nsys_headers else df


#: the columns of Analysis.table(), one row per finding
FINDING_COLUMNS = (
    "rule", "severity", "title", "scope", "kernel", "count", "est_saving_ns",
    "est_saving_pct", "budget_part", "source", "fix", "message",
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class Analysis:
    """What `tuiperf analyze` reports: the ranked findings (dataclasses), the rules that
    ran, and the step budget when the report has training steps."""

    result: AnalysisResult

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings

    @property
    def checks(self) -> list[RuleCheck]:
        return self.result.checks

    @property
    def budget(self) -> Budget | None:
        budget: Budget | None = self.result.budget
        return budget

    @property
    def sample(self) -> Sample | None:
        """The stretch of the run a huge report was analysed over (None: all of it)."""
        part: Sample | None = self.result.sample
        return part

    def __len__(self) -> int:
        return len(self.findings)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __getitem__(self, i: int) -> Finding:
        return self.findings[i]

    def table(self) -> pa.Table:
        """The findings, best first, as an Arrow table (FINDING_COLUMNS)."""
        rows = [{k: _finding_row(f)[k] for k in FINDING_COLUMNS} for f in self.findings]
        return pa.Table.from_pylist(rows, schema=_FINDINGS_SCHEMA)

    def to_pandas(self) -> pandas.DataFrame:
        return _frame(self.table())


_FINDINGS_SCHEMA = pa.schema(
    [
        *((k, pa.string()) for k in ("rule", "severity", "title", "scope", "kernel")),
        ("count", pa.int64()),
        ("est_saving_ns", pa.int64()),
        ("est_saving_pct", pa.float64()),
        *((k, pa.string()) for k in ("budget_part", "source", "fix", "message")),
    ]
)


def _finding_row(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity.word,
        "title": f.title,
        "scope": f.scope.text(),
        "kernel": f.kernel,
        "count": f.count,
        "est_saving_ns": f.est_saving_ns,
        "est_saving_pct": f.est_saving_pct,
        "budget_part": f.budget_part,
        "source": f.source,
        "fix": f.fix.text,
        "message": f.message,
    }


@dataclass(eq=False)
class Profile:
    """An opened report: its tables (pyarrow), summaries, step budget and findings; `ncu`,
    the Nsight Compute metrics when opened with an ncu report."""

    trace: Trace | None
    ncu: KernelMetrics | None = None
    _ctx: Ctx | None = field(default=None, init=False, repr=False)
    _sql: Any = field(default=None, init=False, repr=False)

    @property
    def meta(self) -> TraceMeta:
        return self._timeline().meta

    @property
    def table_names(self) -> list[str]:
        """The canonical tables' names (schema.TABLES): the properties below, and `table`."""
        return list(schema.TABLES)

    def table(self, name: str) -> pa.Table:
        """The canonical table `name` (empty, with its schema, when the report lacks it)."""
        if name not in schema.TABLES:
            raise UsageError(f"unknown table {name!r}; tables: {', '.join(schema.TABLES)}")
        return self._timeline().table(name)

    @property
    def kernels(self) -> pa.Table:
        """GPU kernels."""
        return self.table("kernels")

    @property
    def memcpy(self) -> pa.Table:
        """GPU memory copies."""
        return self.table("memcpy")

    @property
    def memset(self) -> pa.Table:
        """GPU memory sets."""
        return self.table("memset")

    @property
    def graphs(self) -> pa.Table:
        """Whole CUDA graph executions (nsys's default graph-trace mode)."""
        return self.table("graphs")

    @property
    def api(self) -> pa.Table:
        """CUDA runtime and driver API calls."""
        return self.table("api")

    @property
    def nvtx(self) -> pa.Table:
        """NVTX and record_function ranges."""
        return self.table("nvtx")

    @property
    def osrt(self) -> pa.Table:
        """OS runtime calls."""
        return self.table("osrt")

    @property
    def sync(self) -> pa.Table:
        """CUDA synchronisations."""
        return self.table("sync")

    @property
    def overhead(self) -> pa.Table:
        """Profiler overhead."""
        return self.table("overhead")

    @property
    def gpu_memory(self) -> pa.Table:
        """GPU memory allocations and frees."""
        return self.table("gpu_memory")

    @property
    def devices(self) -> pa.Table:
        """The GPUs."""
        return self.table("devices")

    @property
    def processes(self) -> pa.Table:
        """The processes."""
        return self.table("processes")

    @property
    def threads(self) -> pa.Table:
        """The threads."""
        return self.table("threads")

    @property
    def streams(self) -> pa.Table:
        """The CUDA streams."""
        return self.table("streams")

    @property
    def callsites(self) -> pa.Table:
        """Host calls with a Python stack (nsys backtraces, Kineto with_stack cpu_ops)."""
        return self.table("callsites")

    @property
    def frames(self) -> pa.Table:
        """The Python frames of those stacks, a tree (`parent_id`)."""
        return self.table("frames")

    @property
    def cpu_samples(self) -> pa.Table:
        """CPU samples of each thread (nsys `--sample`), `stack_id` into `sample_stacks`."""
        return self.table("cpu_samples")

    @property
    def sample_stacks(self) -> pa.Table:
        """The CPU samples' call stacks, a tree (`parent_id`)."""
        return self.table("sample_stacks")

    @property
    def thread_state(self) -> pa.Table:
        """OS threads running or waiting, from the scheduler's switches (nsys)."""
        return self.table("thread_state")

    @property
    def gpu_metrics(self) -> pa.Table:
        """GPU metrics samples per device (nsys `--gpu-metrics-devices`), in their units."""
        return self.table("gpu_metrics")

    def summary(self, name: str) -> Summary:
        """A summary report by name or alias (tuiperf.summaries.names: the `nsys stats`
        reports, `op_sum`, `step_budget`), kept in the cache entry like the CLI's."""
        from tuiperf.analysis.budget import metrics_report
        from tuiperf.analysis.budget import rows as budget_report
        from tuiperf.summaries.names import REPORT_NAMES, resolve
        from tuiperf.summaries.reports import compute_cached

        found = resolve(name)
        if found is None:
            raise UsageError(f"unknown report {name!r}; reports: {', '.join(REPORT_NAMES)}")
        budget_report.offer()
        metrics_report.offer()
        stats = compute_cached(self._timeline(), found)
        return Summary(found, stats.data, {c.key: c.header for c in stats.columns})

    def step_budget(self) -> Budget | None:
        """Where each steady-state training step's time goes; None without steps."""
        return self._context().budget

    def analyze(
        self,
        rules: list[str] | None = None,
        gap_ms: int = 500,
        util_threshold: int = 50,
        util_chunks: int = 30,
        max_events: int | None = None,
    ) -> Analysis:
        """The findings of `tuiperf analyze` (with the same options), best first. A report of
        more than `max_events` events (default 10M) is analysed over a sample of its run
        (0: whole)."""
        only = None
        if rules is not None:
            known = set(all_rule_ids())
            bad = [r for r in rules if r not in known]
            if bad:
                raise UsageError(f"unknown rule {bad[0]!r}; rules: {', '.join(sorted(known))}")
            only = frozenset(rules)
        if max_events is not None and max_events < 0:
            raise UsageError("max_events must be 0 (the whole report) or more")
        opts = AnalyzeOptions(NsysOptions(gap_ms, util_threshold, util_chunks), only, max_events)
        return Analysis(run_rules(self.trace, self.ncu, opts))

    def memory(
        self, snapshot: str | os.PathLike[str] | None = None, at_ns: int | None = None
    ) -> MemoryReport:
        """GPU memory as `tuiperf memory` reports it: from this report's own memory events
        (nsys --cuda-memory-usage=true, torch.profiler profile_memory=True), or from a
        PyTorch allocator `snapshot` of the same run (this report adds its steps)."""
        from tuiperf.analysis.gpumem.run import memory_report
        from tuiperf.load.gpumem.open import NO_KINETO_MEMORY, NO_NSYS_MEMORY, timeline_memory
        from tuiperf.load.gpumem.snapshot import load_snapshot

        trace = self._timeline()
        own = timeline_memory(trace, Path(trace.meta.source))
        if snapshot is not None:
            return memory_report(load_snapshot(Path(snapshot)), trace, at_ns, own)
        if own is None:
            why = NO_KINETO_MEMORY if trace.meta.format == det.KINETO else NO_NSYS_MEMORY
            raise UsageError(f"{trace.meta.source}: {why}")
        return memory_report(own, trace, at_ns)

    def sql(self, query: str, limit: int | None = None) -> pa.Table:
        """One SELECT over the views of `tuiperf sql` (docs/sql.md), read-only, as an Arrow
        table; at most `limit` rows. Needs DuckDB (`pip install 'tuiperf[sql]'`)."""
        from tuiperf.sql.session import Session, Source

        if self._sql is None:
            self._sql = Session({"main": Source(self.trace, self.ncu)})
        return self._sql.query(query, limit).table

    def sql_schema(self) -> pa.Table:
        """The views `sql` offers: one row per view and column, with type and unit."""
        from tuiperf.sql.session import Session, Source

        return Session({"main": Source(self.trace, self.ncu)}, empty=True).describe()

    def _timeline(self) -> Trace:
        if self.trace is None:
            source = (self.ncu.meta.get("source") if self.ncu is not None else None) or "report"
            raise UsageError(f"{source}: an Nsight Compute report has no timeline; see .ncu")
        return self.trace

    def _context(self) -> Ctx:
        if self._ctx is None:
            self._ctx = Ctx(self._timeline())
        return self._ctx

    def __repr__(self) -> str:
        ncu = "" if self.ncu is None else f" ncu={len(self.ncu)} kernels"
        if self.trace is None:
            return f"<tuiperf.Profile{ncu}>"
        counts = ", ".join(f"{n}={c:,}" for n, c in self.trace.counts().items() if c)
        return f"<tuiperf.Profile {Path(self.trace.meta.source).name}: {counts}{ncu}>"
