"""The CI cycle's decision (`ci_agent.engine.decide`), over plain values: every early return of
a cycle, and what each outcome of the attempt engine turns into."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ci_agent.engine import decide as d
from ci_agent.engine.decide import Decision, Situation, after_engine, decide

# A failed run on the person's branch, nothing known yet
SOURCE_RUN = Situation(command=False, explain=False, observing=False, handled=False, failed=True,
                       concluded=False, paused=False, has_change_request=False, tip_pending=False,
                       exhausted=False)
# A run on our fix branch
FIX_RUN = replace(SOURCE_RUN, observing=True, has_change_request=True)


def test_a_rerun_of_a_handled_run_changes_nothing() -> None:
    assert decide(replace(SOURCE_RUN, handled=True)) == Decision(d.SKIP, d.HANDLED)
    # a writer's command may act on a run already handled
    assert decide(replace(SOURCE_RUN, handled=True, command=True)) == Decision(d.COLLECT)


def test_a_failed_run_is_read_before_anything_is_decided() -> None:
    assert decide(SOURCE_RUN) == Decision(d.COLLECT)
    assert decide(FIX_RUN) == Decision(d.COLLECT)


def test_logs_that_show_no_failure() -> None:
    assert decide(replace(SOURCE_RUN, red=False)) == Decision(d.NOTHING_TO_DO, d.NOTHING_FAILS)
    assert decide(replace(FIX_RUN, red=False)) == Decision(d.NOTHING_TO_DO, d.GREEN_LOGS_ON_FIX_BRANCH)
    explain = replace(SOURCE_RUN, explain=True, command=True, red=False)
    assert decide(explain) == Decision(d.NOTHING_TO_DO, d.NOTHING_TO_EXPLAIN)


def test_a_red_source_run_attempts_or_escalates() -> None:
    # issue 16: the verdicts before the model come first, then the attempt
    assert decide(replace(SOURCE_RUN, red=True)) == Decision(d.TRIAGE)
    assert decide(replace(SOURCE_RUN, red=True, triage=d.NO_TRIAGE_VERDICT)) == Decision(d.ATTEMPT)
    assert decide(replace(SOURCE_RUN, red=True, exhausted=True)) == Decision(d.ESCALATE)
    # explaining changes no code: a spent budget does not stop it
    assert decide(replace(SOURCE_RUN, red=True, exhausted=True, explain=True)) == Decision(d.ATTEMPT)


def test_an_attempt_waiting_for_ci_blocks_a_new_one() -> None:
    waiting = replace(SOURCE_RUN, red=True, tip_pending=True)
    assert decide(replace(waiting, has_change_request=True)) == Decision(d.WAITING)
    assert decide(replace(waiting, command=True)) == Decision(d.WAITING)
    # pushed but shown by no change request: an earlier job failed to open it
    assert decide(waiting) == Decision(d.ORPHANED)


def test_a_run_on_the_fix_branch_is_folded_into_the_marker_first() -> None:
    assert decide(replace(FIX_RUN, red=True)) == Decision(d.OBSERVE, green=False)
    green = replace(FIX_RUN, failed=False, concluded=True)
    assert decide(green) == Decision(d.OBSERVE, green=True)
    assert decide(replace(green, verdict="passed")) == Decision(d.SUCCESS)
    assert decide(replace(green, verdict="green")) == Decision(d.SUCCESS)


def test_a_run_that_neither_failed_nor_passed_decides_nothing() -> None:
    assert decide(replace(FIX_RUN, failed=False)) == Decision(d.SKIP, d.NO_VERDICT)


@pytest.mark.parametrize("green", [True, False])
def test_a_run_of_an_older_commit_is_stale(green: bool) -> None:
    run = replace(FIX_RUN, failed=not green, concluded=green, red=None if green else True, verdict="stale")
    assert decide(run) == Decision(d.SKIP, d.STALE)


def test_a_command_on_a_handled_run_waits_for_the_newer_attempt() -> None:
    run = replace(FIX_RUN, command=True, handled=True, red=True, verdict="seen")
    assert decide(replace(run, tip_pending=True)) == Decision(d.SKIP, d.STALE)
    assert decide(run) == Decision(d.ATTEMPT)


def test_a_red_run_on_the_fix_branch_attempts_holds_or_escalates() -> None:
    red = replace(FIX_RUN, red=True, verdict="failed")
    assert decide(red) == Decision(d.TRIAGE)  # issue 16: judged before the attempt
    assert decide(replace(red, triage=d.NO_TRIAGE_VERDICT)) == Decision(d.ATTEMPT)
    assert decide(replace(red, paused=True)) == Decision(d.HELD)
    assert decide(replace(red, exhausted=True)) == Decision(d.ESCALATE)


# --- the verdicts before the model (issue 16) -------------------------------------------------------

RED = replace(SOURCE_RUN, red=True)


@pytest.mark.parametrize("kind", ["flaky", "pre_existing", "infrastructure"])
def test_a_verdict_before_the_model_means_no_attempt(kind: str) -> None:
    assert decide(replace(RED, triage=kind)) == Decision(d.JUDGED, kind)
    # on the fix branch too, after the run was folded into the marker
    assert decide(replace(FIX_RUN, red=True, verdict="failed", triage=kind)) == Decision(d.JUDGED, kind)


def test_a_pending_rerun_ends_the_job_and_its_result_decides() -> None:
    assert decide(replace(RED, triage=d.PENDING)) == Decision(d.SKIP, d.RERUN_PENDING)


def test_the_verdicts_are_looked_for_only_where_an_attempt_would_start() -> None:
    # an explanation changes no code: no verdict asked, spent budget or not
    assert decide(replace(RED, explain=True, command=True)) == Decision(d.ATTEMPT)
    assert decide(replace(RED, explain=True, command=True, exhausted=True)) == Decision(d.ATTEMPT)
    # a spent budget escalates first: no re-run is requested, no default branch read
    assert decide(replace(RED, exhausted=True)) == Decision(d.ESCALATE)
    # nothing new to decide: handled, waiting for an attempt, stale, paused
    assert decide(replace(RED, handled=True)) == Decision(d.SKIP, d.HANDLED)
    assert decide(replace(RED, tip_pending=True, has_change_request=True)) == Decision(d.WAITING)
    assert decide(replace(FIX_RUN, red=True, verdict="stale")) == Decision(d.SKIP, d.STALE)
    assert decide(replace(FIX_RUN, red=True, verdict="failed", paused=True)) == Decision(d.HELD)
    # a red run on the fix branch is folded into the marker before it is judged
    assert decide(replace(FIX_RUN, red=True)) == Decision(d.OBSERVE, green=False)
    # a writer's `/ci-agent fix` asked for a patch: no verdict stands in the way
    assert decide(replace(RED, command=True)) == Decision(d.ATTEMPT)
    assert decide(replace(FIX_RUN, command=True, red=True, verdict="failed")) == Decision(d.ATTEMPT)
    assert decide(replace(RED, command=True, exhausted=True)) == Decision(d.ESCALATE)


@pytest.mark.parametrize(("status", "propose", "kind"), [
    ("dry_run", False, d.DRY_RUN), ("explained", False, d.EXPLAINED), ("unverifiable", False, d.UNVERIFIABLE),
    ("escalated", False, d.ESCALATE), ("fixed", False, d.PUSH), ("committed", False, d.PUSH),
    ("committed", True, d.PROPOSE), ("gave_up", False, d.NO_PATCH), ("nothing_to_do", True, d.NO_PATCH),
])
def test_what_the_engine_outcome_turns_into(status: str, propose: bool, kind: str) -> None:
    assert after_engine(status, propose) == kind
