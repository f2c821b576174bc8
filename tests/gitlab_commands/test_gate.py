"""Who may command ci-agent on GitLab: a Reporter, another project's bot user and ci-agent's own
account are ignored — no model call, no 👀, no note, nothing pushed — whatever the command; and
the award emoji claims a note even when the job that awarded it died. (Two pipelines for one
note, the hourly limit and forks, the same on both forges: tests/slash/scenarios/test_gate.py.)"""

from __future__ import annotations

import pytest

from tests.fakes.gitlab_fake import Fault, server_error
from tests.gitlab_commands.harness import BOT, OTHER_BOT, REPORTER, CommandWorld
from tests.gitlab_commands.steps import FEATURE_FIX, PAUSED, assert_acted, assert_ignored, writes
from tests.gitlab_scenarios.steps import answer, model_calls


@pytest.mark.parametrize(("author", "body"), [
    (REPORTER, "/ci-agent fix"), (OTHER_BOT, "/ci-agent fix"), (BOT, "/ci-agent fix"),
    (REPORTER, "/ci-agent stop"), (OTHER_BOT, "/ci-agent help"),
])
def test_commands_by_others_than_developers_are_ignored(world: CommandWorld, author: str, body: str) -> None:
    iid, _ = world.red_mr()
    note = world.say(iid, body, author)
    answer(world, "broken", "fix")
    branches = world.origin_branches()
    pipeline = world.start_command(iid, note)
    since = len(world.gitlab.requests)

    run = world.job(pipeline)

    assert_ignored(world, run, note)
    assert world.origin_branches() == branches
    assert PAUSED not in world.gitlab.merge_requests[iid]["labels"]
    assert writes(world, since) == [], "nothing written to GitLab"
    # the role is read from the API (members/all), once, and only for someone who is no bot
    asked = [r for r in world.gitlab.requests[since:] if "/members/all" in r.path]
    assert len(asked) == (1 if author == REPORTER else 0), asked
    if author == REPORTER:
        assert run.outcome == "refused" and "write access" in run.stdout, str(run)


def test_the_award_emoji_is_the_claim_when_the_first_job_died_before_answering(world: CommandWorld) -> None:
    """The first job awarded 👀 and then could not write its status note (GitLab answered 500):
    the note is not in any marker, but the second pipeline's job must still not act on it."""
    iid, _ = world.red_mr()
    note = world.say(iid, "/ci-agent fix")
    answer(world, "broken", "fix")
    first, second = world.start_command(iid, note), world.start_command(iid, note)
    notes = r"/merge_requests/\d+/notes$"
    world.gitlab.add_fault(Fault(server_error(500), path=notes, method="POST", times=10))

    died = world.job(first)

    assert died.exit_code != 0 and died.outcome == "error", str(died)
    assert_acted(world, note)
    world.gitlab.faults.clear()

    again = world.job(second)

    assert again.exit_code == 0 and again.outcome == "skipped", str(again)
    assert "already claimed" in again.stdout
    assert model_calls(world) == 0
    assert world.origin_tip(FEATURE_FIX) is None
