"""Attempts and the three-failure rule (DESIGN.md §4.3), decided from durable state. Pure.

The state is a chronological list of events read from git by `ci_agent.engine.state`: attempt records
(commit trailers `CI-Agent-Attempt: N`, `CI-Agent-Failure: <fingerprint>`, `CI-Agent-Result:
failed|passed|pending`) and resets (a green run, a human commit on the fix branch, a writer's
`/ci-agent retry`). Only what follows the last reset counts.

Attempt numbers count within the current run of failures ("attempt 2 of 3"), so after a reset
the next attempt is 1 again. A `pending` attempt (a patch whose verification is CI itself) counts
as failed here: the budget is only ever consulted because something is red again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ci_agent.report import Report, Severity


class AttemptResult(StrEnum):
    FAILED = "failed"
    PASSED = "passed"
    PENDING = "pending"  # committed, verification left to the CI pipeline


class ResetReason(StrEnum):
    GREEN_RUN = "green run"
    HUMAN_COMMIT = "human commit"
    RETRY = "retry"


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    number: int
    result: AttemptResult
    fingerprint: str  # the failure this attempt tried to fix
    after: str = ""  # the failure its verification showed (failed attempts only)
    run: str = ""  # the attempt's unique id, so re-recording it is harmless
    summary: str = ""  # one line: what the attempt changed


@dataclass(frozen=True, slots=True)
class Reset:
    reason: ResetReason


Event = AttemptRecord | Reset


@dataclass(frozen=True, slots=True)
class Budget:
    max_attempts: int
    consecutive_failures: int
    failures: tuple[AttemptRecord, ...]  # the failed attempts counted, oldest first
    targeted: tuple[str, ...]  # fingerprints every counted attempt tried to fix

    @property
    def exhausted(self) -> bool:
        return self.consecutive_failures >= self.max_attempts

    @property
    def next_attempt(self) -> int:
        return self.consecutive_failures + 1

    @property
    def remaining(self) -> int:
        return max(0, self.max_attempts - self.consecutive_failures)

    def no_progress(self, fingerprint: str) -> bool:
        """The failure we see now is one a patch already tried to fix: the patch changed nothing
        that matters (or the fixes go round in circles)."""
        return bool(fingerprint) and fingerprint in self.targeted


def budget_sentence(budget: Budget) -> str:
    """The budget as the status comment tells it. A pending attempt counts against the budget
    (which is only consulted when something is red again, so an attempt engine run always reads
    it as failed), but while CI has not spoken it is waiting, not failed: "attempt 1 of 3 waiting
    for CI; 0 failed"."""
    failed = sum(1 for f in budget.failures if f.result is AttemptResult.FAILED)
    pending = [f for f in budget.failures if f.result is AttemptResult.PENDING]
    if pending:
        return (f"Budget: attempt {budget.consecutive_failures} of {budget.max_attempts} waiting for CI; "
                f"{failed} failed.")
    return f"Budget: {failed} of {budget.max_attempts} consecutive failed attempts used."


def assess(events: Iterable[Event], max_attempts: int) -> Budget:
    """The budget after `events` (oldest first). A passed attempt is a green run of its own."""
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    failures: list[AttemptRecord] = []
    seen: set[str] = set()
    for event in events:
        if isinstance(event, Reset) or event.result is AttemptResult.PASSED:
            failures.clear()
            seen.clear()
            continue
        # The same attempt recorded twice (a rerun re-recording it) counts once: `run` is its id.
        if event.run and event.run in seen:
            continue
        seen.add(event.run)
        failures.append(event)
    return Budget(max_attempts, len(failures), tuple(failures),
                  tuple(dict.fromkeys(f.fingerprint for f in failures if f.fingerprint)))


# --- failure fingerprints -------------------------------------------------------------------

# The directory part of any path in a message (absolute or relative, POSIX or Windows), so
# `/tmp/wt-1/src/a.h`, `src/a.h` and `C:\\agent\\src\\a.h` all leave `a.h`: the same failure seen
# from two checkouts must fingerprint the same.
_DIRECTORIES = re.compile(r"(?:\b[A-Za-z]:)?[^\s:'\"()<>\[\]]*[\\/]")


def _normalise(text: str | None) -> str:
    return " ".join(_DIRECTORIES.sub("", text or "").split())


def _file_key(path: str | None, in_repo: bool) -> str:
    if not path:
        return ""
    path = path.replace("\\", "/")
    # In-repo paths are already repo-relative; others keep only their last two parts.
    return path if in_repo else "/".join(path.rstrip("/").split("/")[-2:])


def failure_keys(report: Report) -> list[str]:
    """The report's unique failure keys, sorted. Line and column are left out on purpose: a patch
    that adds a line above an error moves it without fixing it, and that is no progress."""
    keys: set[str] = set()
    for d in report.diagnostics:
        if d.severity is Severity.ERROR:
            keys.add("\x1f".join(("diag", _file_key(d.file, d.in_repo), d.code or d.origin or "",
                                  _normalise(d.message))))
    for f in report.failures:
        if f.outcome.is_failure:
            keys.add("\x1f".join(("test", f.name, f.outcome.value)))
    for e in report.run_errors:
        first = e.message.splitlines()[0] if e.message else ""
        keys.add("\x1f".join(("run", _normalise(first))))
    return sorted(keys)


def fingerprint_keys(keys: Sequence[str]) -> str:
    digest = hashlib.sha256("\n".join(sorted(set(keys))).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


def fingerprint(report: Report) -> str:
    """A stable 16-hex-digit hash of what fails, independent of order and of absolute paths.
    Empty when nothing fails."""
    keys = failure_keys(report)
    return fingerprint_keys(keys) if keys else ""
