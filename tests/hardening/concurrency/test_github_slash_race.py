"""Two `python -m ci_agent command --github` processes for ONE `/ci-agent fix` comment (a delivery
GitHub repeated, or the command workflow re-run while the first job still runs), on a person's
red pull request: the 👀 reaction is the claim (201 for the first, 200 for the second), so one job
runs the cycle and the other says the comment was already claimed. Built on the command
scenarios' harness (tests/github_commands)."""

from __future__ import annotations

import pytest

from ci_agent.engine.forge import parse_marker
from tests.github_commands.conftest import world
from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import FEATURE, FEATURE_FIX, red_pr
from tests.github_scenarios.conftest import anthropic_fake, forge_waits
from tests.github_scenarios.steps import answer
from tests.hardening.concurrency.checks import Forge, check_race
from tests.hardening.concurrency.races import (
    Choreo,
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
from tests.hardening.platforms import GitHubSide

__all__ = ["anthropic_fake", "forge_waits", "world"]

REACTIONS = r"/issues/comments/\d+/reactions$"


def forge_of(world: CommandWorld) -> Forge:
    return GitHubSide(world).forge(FEATURE_FIX)


def start(world: CommandWorld, number: int, comment: int, label: str) -> Proc:
    with prepared(world) as seen:
        world.command(number, comment)
    ((variables, workspace),) = seen
    return spawn(label, variables, workspace, ["command", "--github"])


@pytest.mark.parametrize("schedule", ["together", "after_claim",
                                      *(f"offset_{i}" for i in range(repeats()))])
def test_one_comment_two_command_jobs(world: CommandWorld, schedule: str) -> None:
    choreo = Choreo()
    choreo.install(world.github)
    reflog = RefLog(world.repo.origin)
    number, ci = red_pr(world)
    comment = world.say(number, "/ci-agent fix")
    answer(world, "broken", "fix")
    answer(world, "broken", "fix")

    a = start(world, number, comment, "A")
    if schedule == "after_claim":
        wait_until(lambda: choreo.count("POST", REACTIONS) >= 1 or a.done)
    elif schedule.startswith("offset_"):
        wait_until(lambda: a.done, offset_s(schedule))
    b = start(world, number, comment, "B")
    results = [a.wait(), b.wait()]

    check_race(forge_of(world), reflog, results, base=ci.sha, attempts=["1"], kind="github slash",
               schedule=schedule, model_calls=len(world.api.message_requests))
    assert sorted(r.outcome for r in results) == ["committed", "skipped"], "\n".join(map(str, results))
    assert len(world.api.message_requests) == 1, "the comment is acted on once"
    source = [c for c in world.comments_on(number) if parse_marker(c["body"]) is not None]
    assert len(source) == 1, f"one status comment on the person's #{number}: {source}"
    assert world.origin_tip(FEATURE) == ci.sha, "the person's branch is never pushed to"


def test_a_command_racing_the_automatic_job(world: CommandWorld) -> None:
    """A writer types `/ci-agent fix` while the automatic workflow_run job for the same red run is
    starting: both at once, both answered by the model only once both asked."""
    reflog = RefLog(world.repo.origin)
    number, ci = red_pr(world)
    comment = world.say(number, "/ci-agent fix")
    answer(world, "broken", "fix")
    answer(world, "broken", "fix")
    hold_answers(world.api, model_asks(world.api, 2))
    with prepared(world) as seen:
        world.after_ci(ci)
    ((variables, workspace),) = seen
    automatic = spawn("automatic", variables, workspace, ["fix", "--github"])
    command = start(world, number, comment, "command")
    results = [automatic.wait(), command.wait()]

    check_race(forge_of(world), reflog, results, base=ci.sha, attempts=["1"],
               kind="github command vs automatic", schedule="both_ask",
               model_calls=len(world.api.message_requests))
    source = [c for c in world.comments_on(number) if parse_marker(c["body"]) is not None]
    assert len(source) == 1, f"one status comment on the person's #{number}: {source}"
    assert world.origin_tip(FEATURE) == ci.sha, "the person's branch is never pushed to"
