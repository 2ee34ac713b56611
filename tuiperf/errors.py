"""Errors that carry the process exit code (see UX.md §10)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1
    USAGE = 2
    MISSING_TOOL = 3
    SLOWER = 4  # `diff --fail-if-slower`: the after report's step got slower
    FINDINGS = 5  # `analyze --fail-on`: a finding of that severity or worse exists
    INTERNAL = 70  # a bug in tuiperf (EX_SOFTWARE of sysexits.h)
    INTERRUPTED = 130


class TuiperfError(Exception):
    """An error the user should see as one line; `code` is the exit status."""

    code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, code: ExitCode | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class BadReportError(TuiperfError):
    """The input is not a report we can read, or it is damaged."""

    code = ExitCode.FAILURE


class UsageError(TuiperfError):
    code = ExitCode.USAGE


class MissingToolError(TuiperfError):
    """An external tool (nsys, ncu_report) is needed and not available."""

    code = ExitCode.MISSING_TOOL


class CacheError(TuiperfError):
    code = ExitCode.FAILURE
