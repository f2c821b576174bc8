"""The three-failure budget and failure fingerprints (DESIGN.md §4.3), pure."""

from __future__ import annotations

import pytest

from ci_agent.engine.budget import (
    AttemptRecord,
    AttemptResult,
    Event,
    Reset,
    ResetReason,
    assess,
    failure_keys,
    fingerprint,
)
from ci_agent.report import Outcome, Report, ReportDiagnostic, ReportFailure, RunError, Severity, TestCounts

FAILED, PASSED, PENDING = AttemptResult.FAILED, AttemptResult.PASSED, AttemptResult.PENDING


def failed(n: int, fp: str = "f1", run: str = "") -> AttemptRecord:
    return AttemptRecord(n, FAILED, fp, run=run or f"run-{n}-{fp}")


def test_no_events_is_a_fresh_budget() -> None:
    budget = assess([], 3)
    assert (budget.consecutive_failures, budget.next_attempt, budget.remaining) == (0, 1, 3)
    assert not budget.exhausted


def test_failures_count_and_exhaust_at_three() -> None:
    events: list[Event] = [Reset(ResetReason.HUMAN_COMMIT), failed(1), failed(2, "f2")]
    budget = assess(events, 3)
    assert (budget.consecutive_failures, budget.next_attempt, budget.exhausted) == (2, 3, False)
    budget = assess([*events, failed(3, "f3")], 3)
    assert budget.exhausted and budget.remaining == 0
    assert [f.number for f in budget.failures] == [1, 2, 3]


@pytest.mark.parametrize("reason", list(ResetReason))
def test_every_reset_starts_a_new_count(reason: ResetReason) -> None:
    budget = assess([failed(1), failed(2), Reset(reason), failed(1, "f9")], 3)
    assert budget.consecutive_failures == 1
    assert budget.targeted == ("f9",)


def test_a_passed_attempt_is_a_green_run() -> None:
    budget = assess([failed(1), AttemptRecord(2, PASSED, "f1", run="r2"), failed(1, "f2")], 3)
    assert budget.consecutive_failures == 1


def test_a_pending_attempt_counts_as_failed_because_we_are_red_again() -> None:
    # Verification left to CI: if we are asked again, the pipeline is still red.
    budget = assess([AttemptRecord(1, PENDING, "f1", run="a"), AttemptRecord(2, PENDING, "f1", run="b")], 3)
    assert budget.consecutive_failures == 2


def test_the_same_attempt_recorded_twice_counts_once() -> None:
    twice = failed(1, run="same-id")
    assert assess([twice, twice, failed(2, run="other")], 3).consecutive_failures == 2


def test_max_attempts_is_configurable_and_validated() -> None:
    assert assess([failed(1)], 1).exhausted
    assert not assess([failed(1)], 5).exhausted
    with pytest.raises(ValueError):
        assess([], 0)


def test_no_progress_when_a_targeted_fingerprint_repeats() -> None:
    budget = assess([failed(1, "aaa"), failed(2, "bbb")], 3)
    assert budget.no_progress("aaa")  # back to a failure a patch already tried to fix
    assert budget.no_progress("bbb")
    assert not budget.no_progress("ccc")
    assert not budget.no_progress("")
    assert not assess([failed(1, "aaa"), Reset(ResetReason.RETRY)], 3).no_progress("aaa")


# --- fingerprints -------------------------------------------------------------------------------

def diag(file: str | None, message: str, *, in_repo: bool = True, line: int = 3,
         severity: Severity = Severity.ERROR, code: str | None = "E1") -> ReportDiagnostic:
    return ReportDiagnostic(severity, file, line, 5, code, message, None, None, in_repo)


def failure(name: str, outcome: Outcome = Outcome.FAILED, message: str = "boom") -> ReportFailure:
    return ReportFailure(name, outcome, message, (), None, None)


def report(diagnostics: tuple[ReportDiagnostic, ...] = (), failures: tuple[ReportFailure, ...] = (),
           run_errors: tuple[RunError, ...] = (), root: str | None = None) -> Report:
    return Report((), diagnostics, TestCounts(), failures, run_errors, 0, 0, root)


def test_fingerprint_ignores_order() -> None:
    a = report((diag("src/a.c", "x undeclared"), diag("src/b.c", "y undeclared")),
               (failure("t.test_one"), failure("t.test_two")))
    b = report((diag("src/b.c", "y undeclared"), diag("src/a.c", "x undeclared")),
               (failure("t.test_two"), failure("t.test_one")))
    assert fingerprint(a) == fingerprint(b)
    assert len(fingerprint(a)) == 16


def test_fingerprint_ignores_absolute_prefixes_in_files_and_messages() -> None:
    one = report((diag("/tmp/wt-1/src/a.c", "in /tmp/wt-1/src/a.h: bad", in_repo=False),),
                 root="/tmp/wt-1")
    two = report((diag("/home/runner/work/p/src/a.c", "in /home/runner/work/p/src/a.h: bad",
                       in_repo=False),), root="/home/runner/work/p")
    windows = report((diag("C:\\agent\\_work\\src\\a.c", "in C:\\agent\\_work\\src\\a.h: bad",
                           in_repo=False),))
    relative = report((diag("src/a.c", "in src/a.h: bad"),))
    assert fingerprint(one) == fingerprint(two) == fingerprint(windows) == fingerprint(relative)


def test_fingerprint_ignores_moved_lines_and_test_messages() -> None:
    # A patch that only shifts the error down a line, or changes a timing in the message, is no progress.
    before = report((diag("src/a.c", "x undeclared", line=3),), (failure("t.one", message="took 1.2s"),))
    after = report((diag("src/a.c", "x undeclared", line=4),), (failure("t.one", message="took 1.9s"),))
    assert fingerprint(before) == fingerprint(after)


def test_fingerprint_changes_with_what_fails() -> None:
    base = report((diag("src/a.c", "x undeclared"),))
    assert fingerprint(base) != fingerprint(report((diag("src/a.c", "z undeclared"),)))
    assert fingerprint(base) != fingerprint(report((diag("src/a.c", "x undeclared", code="E2"),)))
    assert fingerprint(base) != fingerprint(report((diag("src/a.c", "x undeclared"),), (failure("t.one"),)))


def test_fingerprint_counts_only_failures() -> None:
    warning = diag("src/a.c", "unused", severity=Severity.WARNING)
    passed = failure("t.ok", Outcome.PASSED)
    assert fingerprint(report((warning,), (passed,))) == ""
    error = diag("src/a.c", "x")
    assert failure_keys(report((warning, error))) == failure_keys(report((error,)))
    # timeout counts as a failure (DESIGN.md §4.1)
    assert fingerprint(report(failures=(failure("t.slow", Outcome.TIMEOUT),))) != ""


def test_run_errors_fingerprint_on_their_first_line() -> None:
    a = report(run_errors=(RunError("pytest", "`pytest` exited with code 2\nlast lines: 0.12s"),))
    b = report(run_errors=(RunError("pytest", "`pytest` exited with code 2\nlast lines: 0.98s"),))
    assert fingerprint(a) == fingerprint(b) != ""


def test_budget_sentence_says_a_pending_attempt_is_waiting() -> None:
    from ci_agent.engine.budget import budget_sentence

    pending = AttemptRecord(1, AttemptResult.PENDING, "f1", run="r1")
    failed = AttemptRecord(1, AttemptResult.FAILED, "f1", "f2", run="r1")
    second = AttemptRecord(2, AttemptResult.PENDING, "f2", run="r2")
    assert budget_sentence(assess([], 3)) == "Budget: 0 of 3 consecutive failed attempts used."
    assert budget_sentence(assess([pending], 3)) == "Budget: attempt 1 of 3 waiting for CI; 0 failed."
    assert budget_sentence(assess([failed], 3)) == "Budget: 1 of 3 consecutive failed attempts used."
    assert budget_sentence(assess([failed, second], 3)) == "Budget: attempt 2 of 3 waiting for CI; 1 failed."
