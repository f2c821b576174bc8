"""Two `python -m ci_agent fix --github` processes for the same failing branch, against the GitHub
fake and one bare origin: two failed workflow runs of one commit (two CI workflows, each starting
ci-agent), the same run handled twice (a rerun while the first job still runs), and a job racing a
person's push to the fix branch.

Each race runs under several schedules. The choreographed ones (`SCHEDULES`) put the second job
exactly into one window of the first: both asking the model at once (the push race), the second
starting once the first has pushed but not yet opened the pull request, or once the pull request
exists but the status comment does not. (Plain simultaneous starts are `offset_0`, and
tests/github_scenarios/test_github_process.py.) `$CI_AGENT_RACE_REPEATS=N` adds N plain start offsets
(the second job started 0, 1.5, 3 ... s after the first) for the figure's run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ci_agent.engine.forge import parse_marker
from ci_agent.engine.texts import ESCALATION_TAG
from tests.github_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, CiRun, World
from tests.github_scenarios.steps import answer, fail_attempts
from tests.hardening.concurrency.checks import Forge, check_race
from tests.hardening.concurrency.races import (
    Choreo,
    JobResult,
    Proc,
    RefLog,
    hold_answers,
    model_asks,
    offset_s,
    prepared,
    repeats,
    spawn,
    wait_until,
)
from tests.scenarios.sample_repos import git

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]

PULLS = r"/repos/octo/app/pulls$"
COMMENTS = r"/repos/octo/app/issues/\d+/comments$"
# status_race: both jobs create a status comment at once; the later one must give way
# (86f1915: it deletes its own and edits the older one).
SCHEDULES: list[Any] = ["both_ask", "after_push", "after_pr", "status_race"]
OFFSETS = [f"offset_{i}" for i in range(repeats())]


def forge_of(world: World) -> Forge:
    def open_fix() -> list[int]:
        return [p["number"] for p in world.pulls_from(FIX_BRANCH) if p["state"] == "open"]

    def status(number: int) -> list[str]:
        return [c["body"] for c in world.comments_on(number) if parse_marker(c["body"]) is not None]

    def escalations(number: int) -> list[str]:
        return [c["body"] for c in world.comments_on(number) if c["body"].startswith(ESCALATION_TAG)]

    return Forge(world.repo.origin, open_fix, status, escalations)


def start(world: World, ci: CiRun, label: str, **kwargs: Any) -> Proc:
    with prepared(world):
        job = world.job_after_ci(ci, **kwargs)
    return spawn(label, job.variables, job.workspace, ["fix", "--github"])


def race(world: World, schedule: str, first: Callable[[], Proc], second: Callable[[], Proc],
         choreo: Choreo) -> list[JobResult]:
    """Run the two jobs under `schedule`; returns their results (first job first)."""
    api = world.api
    if schedule == "both_ask":
        # Neither answer is given before both jobs asked: both make an attempt, both push.
        answer(world, "broken", "fix")
        answer(world, "broken", "fix")
        hold_answers(api, model_asks(api, 2))
    a = first()
    b: Proc | None = None
    if schedule == "both_ask":
        b = second()
    elif schedule == "after_push":
        # A's pull request creation waits until B is over: B finds the pushed attempt alone.
        choreo.hold("POST", PULLS, lambda: b is not None and b.done)
        wait_until(lambda: world.origin_tip(FIX_BRANCH) is not None or a.done)
        b = second()
    elif schedule == "after_pr":
        # A's status comment waits until B is over (A reads the comments only then): B finds the
        # pull request without one and writes it, A edits it.
        choreo.hold("GET", COMMENTS, lambda: b is not None and b.done)
        wait_until(lambda: bool(world.pulls_from(FIX_BRANCH)) or a.done)
        b = second()
    elif schedule == "status_race":
        # A listed the comments (none yet) and its creation waits until B posts one too (or B is
        # over): both create.
        choreo.hold("POST", COMMENTS,
                    lambda: choreo.count("POST", COMMENTS) >= 2 or (b is not None and b.done))
        wait_until(lambda: bool(world.pulls_from(FIX_BRANCH)) or a.done)
        b = second()
    else:
        wait_until(lambda: a.done, offset_s(schedule))
        b = second()
    return [a.wait(), b.wait()]


def setup(world: World) -> tuple[Choreo, RefLog, str]:
    world.inputs["github_token"] = USER_TOKEN
    choreo = Choreo()
    choreo.install(world.github)
    reflog = RefLog(world.repo.origin)
    base = world.origin_tip("main")
    assert base is not None
    return choreo, reflog, base


@pytest.mark.parametrize("schedule", SCHEDULES + OFFSETS)
def test_two_failed_workflows_of_one_commit(world: World, schedule: str) -> None:
    choreo, reflog, base = setup(world)
    tests, lint = world.ci("main"), world.ci("main")  # two workflows fail on the same commit
    if schedule != "both_ask":
        answer(world, "broken", "fix")
        answer(world, "broken", "fix")

    results = race(world, schedule, lambda: start(world, tests, "A", run_id=6001),
                   lambda: start(world, lint, "B", run_id=6002), choreo)

    check_race(forge_of(world), reflog, results, base=base, attempts=["1"], kind="github two runs",
               schedule=schedule, model_calls=len(world.api.message_requests))


@pytest.mark.parametrize("schedule", ["both_ask", *OFFSETS])
def test_the_same_run_twice(world: World, schedule: str) -> None:
    choreo, reflog, base = setup(world)
    red = world.ci("main")
    if schedule != "both_ask":
        answer(world, "broken", "fix")
        answer(world, "broken", "fix")

    results = race(world, schedule, lambda: start(world, red, "A", run_id=6100),
                   lambda: start(world, red, "B", run_id=6100, run_attempt=2), choreo)

    check_race(forge_of(world), reflog, results, base=base, attempts=["1"], kind="github same run",
               schedule=schedule, model_calls=len(world.api.message_requests))


def person_pushes(world: World) -> str:
    """A person's commit on the fix branch, from their own fresh clone; returns its sha."""
    return world.human_commit(FIX_BRANCH, "NOTES.md", "A person's note on the fix branch.\n",
                              "docs: a person's note")


@pytest.mark.parametrize("schedule", ["person_first", "person_after", *OFFSETS])
def test_a_job_racing_a_person_on_the_fix_branch(world: World, schedule: str) -> None:
    """Attempt 1 failed on the fix branch; its failed run starts a job (attempt 2) while a person
    pushes to the fix branch: before the job's push (held in its model call until the person's
    push landed), after it, or at a plain offset."""
    choreo, reflog, base = setup(world)
    fail_attempts(world, 1)
    red = world.ci_runs[-1]
    first_tip = world.origin_tip(FIX_BRANCH)
    assert first_tip is not None
    pushed: list[str] = []
    if schedule == "person_first":
        answer(world, "floor", "fix")
        hold_answers(world.api, lambda: bool(pushed))
        job = start(world, red, "job")
        wait_until(lambda: len(world.api.message_requests) >= 2 or job.done)
        pushed.append(person_pushes(world))
    elif schedule == "person_after":
        answer(world, "floor", "fix")
        choreo.hold("POST", COMMENTS, lambda: bool(pushed) or job.done)
        choreo.hold("PATCH", r"/repos/octo/app/issues/comments/\d+$", lambda: bool(pushed) or job.done)
        job = start(world, red, "job")
        wait_until(lambda: world.origin_tip(FIX_BRANCH) != first_tip or job.done)
        pushed.append(person_pushes(world))
    else:
        answer(world, "floor", "fix")
        job = start(world, red, "job")
        wait_until(lambda: job.done, offset_s(schedule))
        pushed.append(person_pushes(world))
    result = job.wait()

    (person,) = pushed
    tip = world.origin_tip(FIX_BRANCH)
    job_won = result.outcome in ("committed", "fixed")
    person_last = git(world.repo.origin, "rev-parse", f"{person}^").strip() != first_tip or not job_won
    # the branch after attempt 1: the job's attempt 2 and the person's commit, in the order pushed
    expected = ["1", ""] if not job_won else (["1", "2", ""] if person_last else ["1", "", "1"])
    check_race(forge_of(world), reflog, [result], base=base, attempts=expected,
               kind="github person", schedule=schedule, keep=[first_tip, person])
    assert tip == person or not person_last


def test_two_jobs_escalating_at_once(world: World) -> None:
    """Three attempts failed; the third one's failed run starts two ci-agent jobs (two workflows
    listening to it). Both find the budget spent: the escalation comment must still be posted once.
    The first job's post waits until the second one posts too (or is over)."""
    choreo, reflog, base = setup(world)
    fail_attempts(world, 3)
    red = world.ci_runs[-1]
    before = choreo.count("POST", COMMENTS)
    b: Proc | None = None
    choreo.hold("POST", COMMENTS, lambda: choreo.count("POST", COMMENTS) >= before + 2
                or (b is not None and b.done))
    a = start(world, red, "A", run_id=6301)
    b = start(world, red, "B", run_id=6302)
    results = [a.wait(), b.wait()]

    check_race(forge_of(world), reflog, results, base=base, attempts=["1", "2", "3"],
               kind="github escalation", schedule="both_post", won=("escalated",), exits=(0, 3),
               model_calls=len(world.api.message_requests))
    assert len(world.api.message_requests) == 3, "no model call once the budget is spent"


def test_both_runs_stay_recorded_after_the_orphan_race(world: World) -> None:
    """Schedule after_push (B finds A's pushed attempt without its pull request and opens it);
    afterwards the marker must say that both failed runs were answered by attempt 1."""
    choreo, reflog, base = setup(world)
    tests, lint = world.ci("main"), world.ci("main")
    answer(world, "broken", "fix")
    answer(world, "broken", "fix")

    results = race(world, "after_push", lambda: start(world, tests, "A", run_id=6401),
                   lambda: start(world, lint, "B", run_id=6402), choreo)

    check_race(forge_of(world), reflog, results, base=base, attempts=["1"], kind="github two runs",
               schedule="after_push (marker)", model_calls=len(world.api.message_requests))
    (number,) = forge_of(world).open_fix_requests()
    (body,) = forge_of(world).status_bodies(number)
    runs = (parse_marker(body) or {}).get("runs", {})
    assert runs == {str(tests.id): "attempt 1", str(lint.id): "attempt 1"}, runs
