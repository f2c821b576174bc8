"""Two `python -m ci_agent command --gitlab` processes for ONE `/ci-agent fix` note: the relay and
the poller both created a command pipeline for it (the include's `resource_group` serialises
command jobs of one merge request only where the runner honours it; two projects' includes, or an
older include, do not). The 👀 award is the claim (a second award of the same emoji by the same
user answers 404 "already taken"), so one job runs the cycle and the other says so."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ci_agent.engine.forge import parse_marker
from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.gitlab_scenarios.harness import World
from tests.gitlab_scenarios.steps import answer
from tests.hardening.concurrency.checks import Forge, check_race
from tests.hardening.concurrency.races import (
    Choreo,
    Proc,
    RefLog,
    offset_s,
    prepared,
    repeats,
    spawn,
    wait_until,
)
from tests.hardening.platforms import GitLabSide

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]

FEATURE, FEATURE_FIX = "feature/stars", "ci-agent/fix/feature/stars"
AWARDS = r"/notes/\d+/award_emoji$"


def forge_of(world: World) -> Forge:
    return GitLabSide(world).forge(FEATURE_FIX)


def command_job(world: World, mr: int, note: int, label: str, job_id: int) -> Callable[[], Proc]:
    """The command pipeline's job, prepared (its pipeline and checkout made); call to start it."""
    command_pipeline = world.pipeline("main", source="api")
    with prepared(world) as seen:
        world.run_job(command_pipeline, job_id=job_id, force="command",
                      env={"CI_AGENT_COMMAND_MR_IID": str(mr), "CI_AGENT_COMMAND_NOTE_ID": str(note)})
    ((variables, workspace),) = seen
    return lambda: spawn(label, variables, workspace, ["command", "--gitlab"])


@pytest.mark.parametrize("schedule", ["together", *(f"offset_{i}" for i in range(repeats()))])
def test_one_note_two_command_jobs(world: World, schedule: str) -> None:
    choreo = Choreo()
    choreo.install(world.gitlab)
    reflog = RefLog(world.repo.origin)
    world.repo.git("push", "-q", "origin", f"main:refs/heads/{FEATURE}")
    mr = world.open_mr(FEATURE, "main", "Stars")
    red = world.pipeline(FEATURE)
    assert red.status == "failed"
    note = world.gitlab.add_note(mr, "/ci-agent fix", "maint")
    answer(world, "broken", "fix")
    answer(world, "broken", "fix")
    first, second = command_job(world, mr, note, "A", 81001), command_job(world, mr, note, "B", 81002)

    a = first()
    if schedule.startswith("offset_"):
        wait_until(lambda: a.done, offset_s(schedule))
    b = second()
    results = [a.wait(), b.wait()]

    check_race(forge_of(world), reflog, results, base=red.sha, attempts=["1"], kind="gitlab slash",
               schedule=schedule, model_calls=len(world.api.message_requests),
               claims=choreo.count("POST", AWARDS))
    assert sorted(r.outcome for r in results) == ["committed", "skipped"], "\n".join(map(str, results))
    assert len(world.api.message_requests) == 1, "the note is acted on once"
    source = [n for n in world.notes_on(mr) if parse_marker(n["body"]) is not None]
    assert len(source) == 1, f"one status note on the person's !{mr}: {source}"
    assert world.origin_tip(FEATURE) == red.sha, "the person's branch is never pushed to"
