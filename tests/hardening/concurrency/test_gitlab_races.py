"""Two `python -m ci_agent fix --gitlab` processes for the same failing branch, against the GitLab
fake and one bare origin: two failed pipelines of one commit (a push pipeline and a pipeline run
by hand), the same pipeline's ci-agent job twice (a retried job: same pipeline id, new job id), and
a job racing a person's push to the fix branch. Schedules as in test_github_races.py."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from ci_agent.engine.forge import parse_marker
from ci_agent.engine.texts import ESCALATION_TAG
from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.gitlab_scenarios.harness import FIX_BRANCH, Pipeline, World
from tests.gitlab_scenarios.steps import answer, fail_attempts
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

MRS = r"/merge_requests$"
NOTES = r"/merge_requests/\d+/notes$"
SCHEDULES: list[Any] = ["both_ask", "after_push", "after_mr", "status_race"]
OFFSETS = [f"offset_{i}" for i in range(repeats())]
_people = itertools.count(1)


def forge_of(world: World) -> Forge:
    def open_fix() -> list[int]:
        return [int(m["iid"]) for m in world.mrs_from(FIX_BRANCH) if m["state"] == "opened"]

    def status(iid: int) -> list[str]:
        return [n["body"] for n in world.notes_on(iid) if parse_marker(n["body"]) is not None]

    def escalations(iid: int) -> list[str]:
        return [n["body"] for n in world.notes_on(iid) if str(n["body"]).startswith(ESCALATION_TAG)]

    return Forge(world.repo.origin, open_fix, status, escalations)


def start(world: World, p: Pipeline, label: str, job_id: int) -> Proc:
    with prepared(world) as seen:
        world.job(p, job_id=job_id)
    ((variables, workspace),) = seen
    return spawn(label, variables, workspace, ["fix", "--gitlab"])


def race(world: World, schedule: str, first: Callable[[], Proc], second: Callable[[], Proc],
         choreo: Choreo) -> list[JobResult]:
    if schedule == "both_ask":
        hold_answers(world.api, model_asks(world.api, 2))
    a = first()
    b: Proc | None = None
    if schedule == "both_ask":
        b = second()
    elif schedule == "after_push":
        # A's merge request creation waits until B is over: B finds the pushed attempt alone.
        choreo.hold("POST", MRS, lambda: b is not None and b.done)
        wait_until(lambda: world.origin_tip(FIX_BRANCH) is not None or a.done)
        b = second()
    elif schedule == "after_mr":
        # A reads the notes only once B is over: B writes the status note, A edits it.
        choreo.hold("GET", NOTES, lambda: b is not None and b.done)
        wait_until(lambda: bool(world.mrs_from(FIX_BRANCH)) or a.done)
        b = second()
    elif schedule == "status_race":
        choreo.hold("POST", NOTES, lambda: choreo.count("POST", NOTES) >= 2 or (b is not None and b.done))
        wait_until(lambda: bool(world.mrs_from(FIX_BRANCH)) or a.done)
        b = second()
    else:
        wait_until(lambda: a.done, offset_s(schedule))
        b = second()
    return [a.wait(), b.wait()]


def setup(world: World) -> tuple[Choreo, RefLog, str]:
    choreo = Choreo()
    choreo.install(world.gitlab)
    reflog = RefLog(world.repo.origin)
    base = world.origin_tip("main")
    assert base is not None
    return choreo, reflog, base


@pytest.mark.parametrize("schedule", SCHEDULES + OFFSETS)
def test_two_failed_pipelines_of_one_commit(world: World, schedule: str) -> None:
    choreo, reflog, base = setup(world)
    pushed, by_hand = world.pipeline("main"), world.pipeline("main")
    answer(world, "broken", "fix")
    answer(world, "broken", "fix")

    results = race(world, schedule, lambda: start(world, pushed, "A", 80001),
                   lambda: start(world, by_hand, "B", 80002), choreo)

    check_race(forge_of(world), reflog, results, base=base, attempts=["1"], kind="gitlab two pipelines",
               schedule=schedule, model_calls=len(world.api.message_requests))


@pytest.mark.parametrize("schedule", ["both_ask", *OFFSETS])
def test_a_retried_job_of_the_same_pipeline(world: World, schedule: str) -> None:
    choreo, reflog, base = setup(world)
    red = world.pipeline("main")
    answer(world, "broken", "fix")
    answer(world, "broken", "fix")

    results = race(world, schedule, lambda: start(world, red, "A", 80101),
                   lambda: start(world, red, "B", 80102), choreo)

    check_race(forge_of(world), reflog, results, base=base, attempts=["1"], kind="gitlab same pipeline",
               schedule=schedule, model_calls=len(world.api.message_requests))


def person_pushes(world: World) -> str:
    """A person's commit on the fix branch from their own clone; returns its sha."""
    clone = world.tmp / "people" / f"person-{next(_people)}"
    clone.parent.mkdir(parents=True, exist_ok=True)
    git(world.tmp, "clone", "-q", "--branch", FIX_BRANCH, f"file://{world.repo.origin}", str(clone))
    git(clone, "config", "user.name", "A Person")
    git(clone, "config", "user.email", "person@example.com")
    (clone / "NOTES.md").write_text("A person's note on the fix branch.\n")
    git(clone, "add", "NOTES.md")
    git(clone, "commit", "-q", "-m", "docs: a person's note")
    git(clone, "push", "-q", "origin", FIX_BRANCH)
    return git(clone, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("schedule", ["person_first", *OFFSETS])
def test_a_job_racing_a_person_on_the_fix_branch(world: World, schedule: str) -> None:
    _, reflog, base = setup(world)
    fail_attempts(world, 1)
    red = world.pipelines[-1]
    first_tip = world.origin_tip(FIX_BRANCH)
    assert first_tip is not None
    answer(world, "floor", "fix")
    pushed: list[str] = []
    if schedule == "person_first":
        hold_answers(world.api, lambda: bool(pushed))
        job = start(world, red, "job", 80201)
        wait_until(lambda: len(world.api.message_requests) >= 2 or job.done)
    else:
        job = start(world, red, "job", 80201)
        wait_until(lambda: job.done, offset_s(schedule))
    pushed.append(person_pushes(world))
    result = job.wait()

    (person,) = pushed
    job_won = result.outcome in ("committed", "fixed")
    person_last = git(world.repo.origin, "rev-parse", f"{person}^").strip() != first_tip or not job_won
    expected = ["1", ""] if not job_won else (["1", "2", ""] if person_last else ["1", "", "1"])
    check_race(forge_of(world), reflog, [result], base=base, attempts=expected, kind="gitlab person",
               schedule=schedule, keep=[first_tip, person])
