"""Is a CI failure flaky? Ask the forge to run the failed jobs once more, before any model call
(issue 16, DESIGN.md §3 "triage").

    check_flaky(forge, run_id, report, settings, marker, wait=None) -> FlakyCheck
    quarantine_candidates(marker, quarantine_after) -> tuple[str, ...]

`FlakyCheck.outcome` is one of
- `flaky`: the re-run passed. `verdict` is a `Verdict("flaky", ...)` naming the report's failed
  tests; each gets one more flaky verdict in the marker (`ForgeState.flaky`). No patch.
- `real`: the re-run failed again: go on to the model.
- `pending`: the re-run had not finished within `triage.rerun_timeout_s` (or its state could not
  be read). The marker says so; the run's next event (GitHub's `workflow_run` of the re-run's
  attempt, a rerun of our job) concludes it. No patch for now.
- `unavailable`: the forge refused the re-run (permissions, a run still running, a token that
  cannot retry jobs), or the check is off (`triage.flaky: false`). `note` says why in one line: go
  on to the model. Re-runs that are not allowed never block a fix.

Once per run: the marker's `reruns[run id]` records the re-run when it is asked (pending) and
what it concluded, so a rerun of our job or the re-run's own completion event never asks again.
A concluded record is answered as it is with `again=True` (an earlier job acted on it: the
caller decides whether to act twice). `FlakyCheck.marker` carries the new records: the caller
writes it into the status comment.

Waiting polls `Forge.run_state` at once, then with a growing interval (`Wait`), through an
injected sleep: tests never sleep for real. The time waited is the larger of the clock's and
the sleeps' sum, so a sleep that returns at once still ends the wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from ci_agent.config import Settings
from ci_agent.engine.forge import Forge, RunState
from ci_agent.engine.marker import ForgeState
from ci_agent.engine.marker_entries import MAX_NOTE, MAX_RERUN_TESTS, RerunRecord, bounded
from ci_agent.errors import ForgeError
from ci_agent.report import Report
from ci_agent.retry import Sleep, current_waiting
from ci_agent.triage import Verdict

FlakyOutcome = Literal["flaky", "real", "pending", "unavailable"]
# A re-run that ended like this failed again; any other end (cancelled, skipped) tells nothing.
_FAILED_AGAIN = frozenset({"failure", "timed_out", "startup_failure"})


@dataclass(frozen=True)
class Wait:
    """How `check_flaky` waits for a re-run: the first pause, how it grows, its cap."""

    sleep: Sleep = time.sleep
    clock: Callable[[], float] = time.monotonic
    first_s: float = 15.0
    factor: float = 1.5
    max_s: float = 120.0


@dataclass(frozen=True)
class FlakyCheck:
    outcome: FlakyOutcome
    marker: ForgeState
    verdict: Verdict | None = None  # flaky only
    note: str = ""  # one line for people: why unavailable, what is pending
    again: bool = False  # concluded by an earlier job: this one only read the record
    quarantine: tuple[str, ...] = ()  # flaky: the verdict's tests now quarantine candidates


def check_flaky(forge: Forge, run_id: int, report: Report, settings: Settings, marker: ForgeState,
                wait: Wait | None = None) -> FlakyCheck:
    key = str(run_id)
    if not settings.triage.flaky:
        return FlakyCheck("unavailable", marker, note="Flaky re-runs are off (triage.flaky: false).")
    known = marker.reruns.get(key)
    if known is not None and known.concluded:
        return replace(_concluded(known, run_id, marker, settings), again=True)
    if known is None:
        tests = failed_tests(report)
        try:
            started = forge.rerun_failed_jobs(run_id)
        except ForgeError as error:
            note = f"CI could not run the failed jobs again: {error}"
            record = RerunRecord("unavailable", 0, tests, _one_line(note))
            return FlakyCheck("unavailable", marker.with_rerun(key, record), note=record.note)
        known = RerunRecord("pending", started.attempt, tests)
        marker = marker.with_rerun(key, known)
    state = _await(forge, run_id, known.attempt, settings.triage.rerun_timeout_s,
                   wait or Wait(sleep=current_waiting().sleep))
    if isinstance(state, str):
        return FlakyCheck("pending", marker, note=state)
    record = _conclusion(known, state)
    marker = marker.with_rerun(key, record)
    if record.state == "flaky":
        marker = marker.with_flaky(record.tests, key)
    return _concluded(record, run_id, marker, settings)


def failed_tests(report: Report) -> tuple[str, ...]:
    """The report's failed tests as the marker keeps them (bounded, each once)."""
    names = dict.fromkeys(bounded(f.name) for f in report.failures if f.name)
    return tuple(names)[:MAX_RERUN_TESTS]


def quarantine_candidates(marker: ForgeState, quarantine_after: int) -> tuple[str, ...]:
    """The tests with `quarantine_after` or more flaky verdicts, most often flaky first (0: none)."""
    if quarantine_after <= 0:
        return ()
    found = sorted((-record.count, test) for test, record in marker.flaky.items()
                   if record.count >= quarantine_after)
    return tuple(test for _count, test in found)


def _await(forge: Forge, run_id: int, attempt: int, timeout_s: float, wait: Wait) -> RunState | str:
    """The run once its re-run attempt is completed, or why we stopped waiting (a note). A run
    still completed at an older attempt after one pause never started the re-run (the forge
    starts the new attempt when asked): the run as it is, not a wait until the timeout."""
    start, slept, pause, polls = wait.clock(), 0.0, wait.first_s, 0
    while True:
        try:
            state = forge.run_state(run_id)
        except ForgeError as error:
            return _one_line(f"Could not read the re-run of run {run_id}: {error}")
        polls += 1
        if state.status == "completed" and (state.attempt >= attempt or polls > 1):
            return state
        left = timeout_s - max(wait.clock() - start, slept)
        if left <= 0:
            return (f"CI is running the failed jobs of run {run_id} again (attempt {attempt}, "
                    f"{state.status.replace('_', ' ')}); its result decides when it is done.")
        pause_s = min(pause, left)
        wait.sleep(pause_s)
        slept += pause_s
        pause = min(pause * wait.factor, wait.max_s)


def _conclusion(pending: RerunRecord, state: RunState) -> RerunRecord:
    if state.attempt < pending.attempt:
        note = (f"CI shows no re-run of the failed jobs (the run is still at attempt {state.attempt}, "
                f"the re-run was to be attempt {pending.attempt}).")
        return replace(pending, state="unavailable", note=note)
    if state.passed:
        return replace(pending, state="flaky", attempt=state.attempt)
    if state.conclusion in _FAILED_AGAIN:
        return replace(pending, state="real", attempt=state.attempt)
    note = f"The re-run of the failed jobs ended {state.conclusion or 'without a conclusion'}."
    return replace(pending, state="unavailable", attempt=state.attempt, note=note)


def _concluded(record: RerunRecord, run_id: int, marker: ForgeState, settings: Settings) -> FlakyCheck:
    if record.state == "flaky":
        verdict = _flaky_verdict(record, run_id)
        quarantine = quarantine_candidates(marker, settings.triage.quarantine_after)
        return FlakyCheck("flaky", marker, verdict,
                          quarantine=tuple(t for t in quarantine if t in record.tests))
    if record.state == "real":
        return FlakyCheck("real", marker)
    return FlakyCheck("unavailable", marker, note=record.note)


def _flaky_verdict(record: RerunRecord, run_id: int) -> Verdict:
    what = f"{len(record.tests)} failed test(s)" if record.tests else "The failed jobs"
    reason = (f"{what} passed when CI ran the failed jobs of run {run_id} again "
              f"(attempt {record.attempt}): a flaky failure, not one to patch.")
    return Verdict("flaky", reason, (f"run {run_id} attempt {record.attempt}: success",), record.tests)


def _one_line(text: str) -> str:
    return bounded(" ".join(text.split()), MAX_NOTE)
