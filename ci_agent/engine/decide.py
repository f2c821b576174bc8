"""What one CI cycle does, decided from what it observed (DESIGN.md §4.3). Pure: plain values in,
a `Decision` out; `ci_agent.engine.execute` carries it out.

The cycle observes in stages, each costing more than the one before: the trigger and the marker
(free), the failure's logs and results (`COLLECT`: downloads), the run folded into the marker
(`OBSERVE`), the budget, and the verdicts before the model (`TRIAGE`: infrastructure, pre-existing,
flaky; `engine/triage_run.py`). `decide` asks for the next observation it needs, or names the
outcome. After the attempt engine ran, `after_engine` names what its outcome turns into.

`TRIAGE` comes only where a new attempt would start on a red run: never for `/ci-agent explain`
(it changes no code), never once the budget is spent (the escalation comes first), never for a run
that decided nothing new (handled, stale, paused), never for a writer's `/ci-agent fix` (the
person saw the failure and asked for a patch: the way past a verdict they judge wrong). On the
fix branch it comes after `OBSERVE`, and a verdict there undoes the fold: a run that failed for
the environment or a flaky test decides nothing about our attempt (it is not counted as failed),
and the next run of that commit decides it.
"""

from __future__ import annotations

from dataclasses import dataclass

# Observations the decision needs first
COLLECT = "collect"  # read the failure's logs and results
OBSERVE = "observe"  # fold this run on the fix branch into the marker (a verdict on our attempt)
TRIAGE = "triage"  # the verdicts before the model: is this failure ours to fix?
# Outcomes
SKIP = "skip"  # nothing to do for a reason `why` names; only the job summary says so
NOTHING_TO_DO = "nothing_to_do"  # the logs show no failure (`why` says which case)
SUCCESS = "success"  # CI is green on the fix branch
HELD = "held"  # a red run while `/ci-agent stop` holds: the verdict is written, no attempt
ORPHANED = "orphaned"  # a pushed attempt no change request shows: open it
WAITING = "waiting"  # the tip is an attempt CI has not decided: no new one
ESCALATE = "escalate"  # the budget is spent: tell a person, once
JUDGED = "judged"  # a triage verdict (`why`: flaky, pre_existing or infrastructure): no patch
ATTEMPT = "attempt"  # run the attempt engine

# Why a run is skipped or has nothing to do
HANDLED = "handled"  # a rerun of a run already handled
NO_VERDICT = "no_verdict"  # the run on the fix branch was cancelled or skipped
STALE = "stale"  # the run tested an older commit of the fix branch
NOTHING_TO_EXPLAIN = "nothing_to_explain"
GREEN_LOGS_ON_FIX_BRANCH = "green_logs_on_fix_branch"  # misconfigured inputs, not a green run
NOTHING_FAILS = "nothing_fails"
RERUN_PENDING = "rerun_pending"  # the flaky check's re-run has not finished: its result decides
# `Situation.triage` once TRIAGE was observed: no verdict, a verdict's kind, or the re-run pending
NO_TRIAGE_VERDICT = ""
PENDING = "pending"


@dataclass(frozen=True)
class Situation:
    """What the cycle knows so far. `red` is None until the failure was collected, `verdict` ""
    until the run was folded into the marker (`marker.observe_run`'s verdict after), `triage` None
    until the verdicts before the model were looked for (then `NO_TRIAGE_VERDICT`, a verdict's
    kind, or `PENDING`)."""

    command: bool  # a writer's `/ci-agent fix` or `explain` started the run
    explain: bool
    observing: bool  # the run is on the branch that holds our attempts (it decides them)
    handled: bool  # the marker lists this run id as handled already
    failed: bool  # the run failed (the trigger says so)
    concluded: bool  # the run concluded `success` (a run neither failed nor concluded: cancelled ...)
    paused: bool  # `/ci-agent stop` holds (the change request is labelled paused)
    has_change_request: bool  # the fix change request exists
    tip_pending: bool  # the branch tip is an attempt CI has not decided yet
    exhausted: bool  # the attempt budget is spent
    red: bool | None = None
    verdict: str = ""
    triage: str | None = None


@dataclass(frozen=True)
class Decision:
    kind: str
    why: str = ""  # for SKIP and NOTHING_TO_DO
    green: bool = False  # for OBSERVE: the run passed


def decide(s: Situation) -> Decision:
    if s.handled and not s.command:
        return Decision(SKIP, HANDLED)
    if s.observing and not s.failed:  # a green run (inline: `job_status: success`)
        if not s.concluded:  # cancelled, skipped ...: no verdict either way
            return Decision(SKIP, NO_VERDICT)
        return _observed(s, green=True)
    if s.red is None:
        return Decision(COLLECT)
    if s.explain:
        return _attempt(s) if s.red else Decision(NOTHING_TO_DO, NOTHING_TO_EXPLAIN)
    if s.observing:
        # Inline, this step runs because a step failed: logs that show nothing failing are
        # misconfigured inputs, never proof of a green run (that comes from the run's conclusion).
        return _observed(s, green=False) if s.red else Decision(NOTHING_TO_DO, GREEN_LOGS_ON_FIX_BRANCH)
    if not s.red:
        return Decision(NOTHING_TO_DO, NOTHING_FAILS)
    if s.tip_pending:
        return Decision(ORPHANED if not s.has_change_request and not s.command else WAITING)
    return _attempt(s)


def _observed(s: Situation, green: bool) -> Decision:
    if not s.verdict:
        return Decision(OBSERVE, green=green)
    # A writer's command on a run already handled, while a newer attempt waits: that one decides.
    if s.verdict == "stale" or (s.command and s.verdict == "seen" and s.tip_pending):
        return Decision(SKIP, STALE)
    if green:
        return Decision(SUCCESS)
    if s.paused:
        return Decision(HELD)
    return _attempt(s)


def _attempt(s: Situation) -> Decision:
    # before any model call; an explanation changes no code, so it spends no attempt
    if s.explain:
        return Decision(ATTEMPT)
    if s.exhausted:
        return Decision(ESCALATE)
    if s.command:  # a writer asked for a patch: their judgment beats the verdicts (triage_run)
        return Decision(ATTEMPT)
    if s.triage is None:
        return Decision(TRIAGE)
    if s.triage == PENDING:
        return Decision(SKIP, RERUN_PENDING)
    if s.triage != NO_TRIAGE_VERDICT:
        return Decision(JUDGED, s.triage)
    return Decision(ATTEMPT)


# What the attempt engine's outcome (`attempt.Outcome.status`) turns into.
DRY_RUN = "dry_run"
EXPLAINED = "explained"
UNVERIFIABLE = "unverifiable"
PROPOSE = "propose"  # mode propose: the patch goes into the status comment
PUSH = "push"
NO_PATCH = "no_patch"  # the model gave up, or nothing was left to fix


def after_engine(status: str, propose: bool) -> str:
    """`propose`: mode propose on the failing branch itself (not a fix branch)."""
    if status in ("dry_run", "explained", "unverifiable"):
        return {"dry_run": DRY_RUN, "explained": EXPLAINED, "unverifiable": UNVERIFIABLE}[status]
    if status == "escalated":
        return ESCALATE
    if status in ("fixed", "committed"):
        return PROPOSE if propose else PUSH
    return NO_PATCH
