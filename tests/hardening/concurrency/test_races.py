"""Two `python -m ci_agent fix --github|--gitlab` processes for the same failing branch, against the
forge's fake and one bare origin, on each forge: two failed CI runs of one commit (GitHub: two CI
workflows, each starting ci-agent; GitLab: a push pipeline and a pipeline run by hand), the same
run's ci-agent job twice (GitHub: a rerun while the first job still runs; GitLab: a retried job,
same pipeline, new job id), and a job racing a person's push to the fix branch.

Each race runs under several schedules. The choreographed ones put the second job exactly into
one window of the first: both asking the model at once (the push race), the second starting once
the first has pushed but not yet opened the pull / merge request (`after_push`), or once the
request exists but the status comment / note does not (`after_pr`, `after_mr`), or both creating
the status comment at once (`status_race`). (Plain simultaneous starts are `offset_0`, and
tests/github_scenarios/test_github_process.py.) `$CI_AGENT_RACE_REPEATS=N` adds N plain start
offsets (the second job started 0, 1.5, 3 ... s after the first) for the figure's run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ci_agent.engine.forge import parse_marker
from tests.hardening.concurrency.checks import check_race
from tests.hardening.concurrency.races import (
    Choreo,
    JobResult,
    Proc,
    RefLog,
    hold_answers,
    model_asks,
    offset_s,
    repeats,
    wait_until,
)
from tests.hardening.platforms import FIX_BRANCH, Side, cases
from tests.scenarios.sample_repos import git

OFFSETS = [f"offset_{i}" for i in range(repeats())]
# status_race: both jobs create a status comment at once; the later one must give way
# (86f1915: it deletes its own and edits the older one).
TWO_RUNS = cases(github=["both_ask", "after_push", "after_pr", "status_race", *OFFSETS],
                 gitlab=["both_ask", "after_push", "after_mr", "status_race", *OFFSETS])


def race(side: Side, schedule: str, first: Callable[[], Proc], second: Callable[[], Proc],
         choreo: Choreo) -> list[JobResult]:
    """Run the two jobs under `schedule` (the model's answers are queued); returns their results
    (first job first)."""
    if schedule == "both_ask":
        # Neither answer is given before both jobs asked: both make an attempt, both push.
        hold_answers(side.world.api, model_asks(side.world.api, 2))
    a = first()
    b: Proc | None = None
    if schedule == "both_ask":
        b = second()
    elif schedule == "after_push":
        # A's pull / merge request creation waits until B is over: B finds the pushed attempt alone.
        choreo.hold("POST", side.change_requests, lambda: b is not None and b.done)
        wait_until(lambda: side.world.origin_tip(FIX_BRANCH) is not None or a.done)
        b = second()
    elif schedule in ("after_pr", "after_mr"):
        # A's status comment waits until B is over (A reads the comments only then): B finds the
        # request without one and writes it, A edits it.
        choreo.hold("GET", side.comments, lambda: b is not None and b.done)
        wait_until(lambda: bool(side.fix_requests()) or a.done)
        b = second()
    elif schedule == "status_race":
        # A listed the comments (none yet) and its creation waits until B posts one too (or B is
        # over): both create.
        choreo.hold("POST", side.comments,
                    lambda: choreo.count("POST", side.comments) >= 2 or (b is not None and b.done))
        wait_until(lambda: bool(side.fix_requests()) or a.done)
        b = second()
    else:
        wait_until(lambda: a.done, offset_s(schedule))
        b = second()
    return [a.wait(), b.wait()]


def setup(side: Side) -> tuple[Choreo, RefLog, str]:
    side.pushes_start_ci()
    choreo = Choreo()
    choreo.install(side.fake)
    reflog = RefLog(side.world.repo.origin)
    base = side.world.origin_tip("main")
    assert base is not None
    return choreo, reflog, base


@pytest.mark.parametrize(("side", "schedule"), TWO_RUNS, indirect=["side"])
def test_two_failed_runs_of_one_commit(side: Side, schedule: str) -> None:
    choreo, reflog, base = setup(side)
    first, second = side.red("main"), side.red("main")  # two workflows / pipelines fail on one commit
    side.answer("broken", "fix")
    side.answer("broken", "fix")

    results = race(side, schedule, lambda: side.start(first, "A", 6001),
                   lambda: side.start(second, "B", 6002), choreo)

    check_race(side.forge(), reflog, results, base=base, attempts=["1"],
               kind=f"{side.name} two {side.run_word}s", schedule=schedule,
               model_calls=len(side.world.api.message_requests))


@pytest.mark.parametrize("schedule", ["both_ask", *OFFSETS])
def test_the_same_runs_job_twice(side: Side, schedule: str) -> None:
    choreo, reflog, base = setup(side)
    red = side.red("main")
    side.answer("broken", "fix")
    side.answer("broken", "fix")

    results = race(side, schedule, lambda: side.start(red, "A", 6100), lambda: side.retry(red, "B", 6100),
                   choreo)

    check_race(side.forge(), reflog, results, base=base, attempts=["1"],
               kind=f"{side.name} same {side.run_word}", schedule=schedule,
               model_calls=len(side.world.api.message_requests))


def person_pushes(side: Side) -> str:
    """A person's commit on the fix branch, from their own fresh clone; returns its sha."""
    return side.person_pushes(FIX_BRANCH, "NOTES.md", "A person's note on the fix branch.\n",
                              "docs: a person's note")


@pytest.mark.parametrize(("side", "schedule"), cases(github=["person_first", "person_after", *OFFSETS],
                                                     gitlab=["person_first", "person_after", *OFFSETS]),
                         indirect=["side"])
def test_a_job_racing_a_person_on_the_fix_branch(side: Side, schedule: str) -> None:
    """Attempt 1 failed on the fix branch; its failed run starts a job (attempt 2) while a person
    pushes to the fix branch: before the job's push (held in its model call until the person's
    push landed), after it, or at a plain offset."""
    choreo, reflog, base = setup(side)
    side.fail_attempts(1)
    red = side.last_red()
    first_tip = side.world.origin_tip(FIX_BRANCH)
    assert first_tip is not None
    side.answer("floor", "fix")
    pushed: list[str] = []
    if schedule == "person_first":
        hold_answers(side.world.api, lambda: bool(pushed))
        job = side.start(red, "job", 6201)
        wait_until(lambda: len(side.world.api.message_requests) >= 2 or job.done)
    elif schedule == "person_after":
        choreo.hold("POST", side.comments, lambda: bool(pushed) or job.done)
        choreo.hold(*side.comment_edits, lambda: bool(pushed) or job.done)
        job = side.start(red, "job", 6201)
        wait_until(lambda: side.world.origin_tip(FIX_BRANCH) != first_tip or job.done)
    else:
        job = side.start(red, "job", 6201)
        wait_until(lambda: job.done, offset_s(schedule))
    pushed.append(person_pushes(side))
    result = job.wait()

    (person,) = pushed
    tip = side.world.origin_tip(FIX_BRANCH)
    job_won = result.outcome in ("committed", "fixed")
    person_last = git(side.world.repo.origin, "rev-parse", f"{person}^").strip() != first_tip or not job_won
    # the branch after attempt 1: the job's attempt 2 and the person's commit, in the order pushed
    expected = ["1", ""] if not job_won else (["1", "2", ""] if person_last else ["1", "", "1"])
    check_race(side.forge(), reflog, [result], base=base, attempts=expected, kind=f"{side.name} person",
               schedule=schedule, keep=[first_tip, person])
    assert tip == person or not person_last


def test_two_jobs_escalating_at_once(side: Side) -> None:
    """Three attempts failed; the third one's failed run starts two ci-agent jobs (two workflows
    listening to it, two pipelines' jobs). Both find the budget spent: the escalation comment must
    still be posted once. The first job's post waits until the second one posts too (or is over)."""
    choreo, reflog, base = setup(side)
    side.fail_attempts(3)
    red = side.last_red()
    before = choreo.count("POST", side.comments)
    b: Proc | None = None
    choreo.hold("POST", side.comments, lambda: choreo.count("POST", side.comments) >= before + 2
                or (b is not None and b.done))
    a = side.start(red, "A", 6301)
    b = side.start(red, "B", 6302)
    results = [a.wait(), b.wait()]

    check_race(side.forge(), reflog, results, base=base, attempts=["1", "2", "3"],
               kind=f"{side.name} escalation", schedule="both_post", won=("escalated",), exits=(0, 3),
               model_calls=len(side.world.api.message_requests))
    assert len(side.world.api.message_requests) == 3, "no model call once the budget is spent"


def test_both_runs_stay_recorded_after_the_orphan_race(side: Side) -> None:
    """Schedule after_push (B finds A's pushed attempt without its pull / merge request and opens
    it); afterwards the marker must say that both failed runs were answered by attempt 1."""
    choreo, reflog, base = setup(side)
    first, second = side.red("main"), side.red("main")
    side.answer("broken", "fix")
    side.answer("broken", "fix")

    results = race(side, "after_push", lambda: side.start(first, "A", 6401),
                   lambda: side.start(second, "B", 6402), choreo)

    check_race(side.forge(), reflog, results, base=base, attempts=["1"],
               kind=f"{side.name} two {side.run_word}s", schedule="after_push (marker)",
               model_calls=len(side.world.api.message_requests))
    forge = side.forge()
    (number,) = forge.open_fix_requests()
    (body,) = forge.status_bodies(number)
    runs: Any = (parse_marker(body) or {}).get("runs", {})
    assert runs == {str(first.id): "attempt 1", str(second.id): "attempt 1"}, runs
