"""Frozen value types shared by every part. Everything depends inward on this module."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Outcome(StrEnum):
    """Normalised test outcome (DESIGN.md §4.1). timeout/aborted/error count as failures."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"
    ABORTED = "aborted"
    ERROR = "error"
    INCONCLUSIVE = "inconclusive"

    @property
    def is_failure(self) -> bool:
        return self in FAILING_OUTCOMES


FAILING_OUTCOMES = frozenset({Outcome.FAILED, Outcome.TIMEOUT, Outcome.ABORTED, Outcome.ERROR})


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One compiler/build diagnostic as printed (before repo-relative normalisation).

    `message` is the first line of the text without trailing `[project]` markers; `detail`
    holds the continuation lines of a multi-line message (joined with newlines) or None.
    `file` is the origin exactly as printed (prefixes stripped), None for tool origins,
    in which case `origin` names the tool (`MSBUILD`, `CSC`, `midlrt`).
    """

    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    code: str | None = None
    project: str | None = None
    origin: str | None = None
    subcategory: str | None = None
    detail: str | None = None
    end_line: int | None = None
    end_column: int | None = None

    def key(self) -> tuple[str, str | None, int | None, int | None, str | None, str]:
        """The uniqueness key of DESIGN.md §4.1; the project marker is deliberately not part of it."""
        return (self.severity.value, self.file, self.line, self.column, self.code, self.message)


@dataclass(frozen=True, slots=True)
class TestCase:
    """One executed test (a leaf: data rows are separate cases, data-driven parents are not).

    `message` is the full failure/skip message, `stack` the full stack trace text, both as
    the tool wrote them (None when absent). `file`/`line` are where the tool located the test
    or failure, if it said so.
    """

    __test__ = False  # not a pytest class

    name: str
    outcome: Outcome
    classname: str | None = None
    message: str | None = None
    stack: str | None = None
    file: str | None = None
    line: int | None = None
    duration_s: float | None = None
    stdout: str | None = None


@dataclass(frozen=True, slots=True)
class TestCounts:
    """Counts of leaf test cases. `failed` includes timeout/aborted/error outcomes."""

    __test__ = False

    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: TestCounts) -> TestCounts:
        return TestCounts(
            self.total + other.total,
            self.passed + other.passed,
            self.failed + other.failed,
            self.skipped + other.skipped,
        )


@dataclass(frozen=True, slots=True)
class RunError:
    """A failure of the run itself rather than of one test or diagnostic (host crash, bad file)."""

    source: str
    message: str


@dataclass(frozen=True, slots=True)
class LogTail:
    """The last lines of an input log that yielded no diagnostic and no failed test."""

    source: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SourceInfo:
    path: str
    format: str
    bytes: int


@dataclass(slots=True)
class ParseResult:
    """What one parser made of one input. Parse problems are values (run_errors), not exceptions.

    `failures` holds failing tests only (passed/skipped ones are counted, not kept) unless the
    parser was asked to keep all cases, then `cases` holds every case in file order.
    """

    format: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    failures: list[TestCase] = field(default_factory=list)
    cases: list[TestCase] | None = None
    counts: TestCounts | None = None
    run_errors: list[RunError] = field(default_factory=list)
    printed_diagnostics: int = 0
    notes: list[str] = field(default_factory=list)
    # The last lines of a log in which no parser found a diagnostic or a failed test
    # (ci_agent/parsers/log_tail.py): what the tool said when it stopped, shown as it printed it.
    tail: list[str] | None = None


@dataclass(frozen=True, slots=True)
class ReportDiagnostic:
    severity: Severity
    file: str | None
    line: int | None
    column: int | None
    code: str | None
    message: str
    project: str | None
    origin: str | None
    in_repo: bool
    detail: str | None = None
    count: int = 1  # how many times it was printed (duplicates folded into this one)


@dataclass(frozen=True, slots=True)
class ReportFailure:
    name: str
    outcome: Outcome
    message: str | None
    frames: tuple[str, ...]
    file: str | None
    line: int | None
    classname: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """The distilled, duplicate-free report (DESIGN.md §4.1)."""

    sources: tuple[SourceInfo, ...]
    diagnostics: tuple[ReportDiagnostic, ...]
    counts: TestCounts
    failures: tuple[ReportFailure, ...]
    run_errors: tuple[RunError, ...]
    input_bytes: int
    printed_diagnostics: int
    repo_root: str | None = None
    log_tails: tuple[LogTail, ...] = ()
