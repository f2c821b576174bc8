"""Edges of the command handler: the comment is read back from the API (the payload's copy is
only a hint), a deleted comment or a merged pull request does nothing, a review (diff) comment
is acknowledged on its own reaction route, the commands that need no code work on a fork's pull
request (no checkout), and `/ci-agent explain` after an escalation."""

from __future__ import annotations

import pytest

from tests.github_commands.harness import WRITER, CommandWorld
from tests.github_commands.steps import (
    FEATURE,
    FEATURE_FIX,
    assert_ignored,
    assert_outputs,
    our_eyes,
    red_pr,
    status_body,
)
from tests.github_scenarios.harness import ACTIONS_BOT, ROOT_CAUSE
from tests.github_scenarios.steps import WRONG_SUMMARIES, answer, model_calls


def test_the_comment_is_read_back_from_the_api_not_the_payload(world: CommandWorld) -> None:
    number = world.open_pr()
    comment = world.say(number, "Thanks, looks good.")
    since = len(world.github.requests)

    run = world.command(number, comment, body="/ci-agent fix")  # a payload that does not match GitHub

    assert run.outputs["outcome"] == "skipped", str(run)
    assert_ignored(world, since, 0, [FEATURE, "main"], comment)


def test_a_deleted_comment_does_nothing(world: CommandWorld) -> None:
    number, _ = red_pr(world)
    comment = world.say(number, "/ci-agent fix")
    job = world.command_job(number, comment)  # GitHub delivered the event ...
    del world.github.comments[comment]  # ... and the writer deleted the comment before the job ran
    since = len(world.github.requests)

    run = job.run()

    assert_outputs(run, "skipped")
    assert "gone" in run.stdout
    assert_ignored(world, since, 0, [FEATURE, "main"], comment)


def test_a_review_comment_by_a_writer_runs_and_is_acknowledged_on_its_route(world: CommandWorld) -> None:
    number = world.open_pr()
    comment = world.say(number, "/ci-agent help", review=True)

    run = world.command(number, comment, review=True)

    assert run.exit_code == 0, str(run)
    assert our_eyes(world, comment, review=True) == [(comment, "eyes", ACTIONS_BOT)]
    assert world.github.reactions == [], "not on the issue comment with the same id space"
    assert "`/ci-agent fix" in status_body(world, number)


def test_a_command_on_a_merged_pull_request_does_nothing(world: CommandWorld) -> None:
    number, _ = red_pr(world)
    world.github.pulls[number].update(state="closed", merged=True)
    answer(world, "broken", "fix")

    run = world.command(number, world.say(number, "/ci-agent fix"))

    assert_outputs(run, "skipped")
    assert "merged" in status_body(world, number)
    assert model_calls(world) == 0 and world.origin_branches() == [FEATURE, "main"]


def _escalated(world: CommandWorld) -> tuple[int, int]:
    world.inputs["max_attempts"] = "1"
    number, ci = red_pr(world)
    answer(world, "broken", "floor", summary=WRONG_SUMMARIES["floor"])
    world.after_ci(ci)
    assert world.after_ci(world.ci(FEATURE_FIX)).outputs["outcome"] == "escalated"
    (fix_pr,) = world.pulls_from(FEATURE_FIX)
    return number, fix_pr["number"]


def test_explain_after_an_escalation_still_explains(world: CommandWorld) -> None:
    _, fix_number = _escalated(world)
    answer(world, "floor", "fix")

    run = world.command(fix_number, world.say(fix_number, "/ci-agent explain"), inputs={"max_attempts": "1"})

    assert_outputs(run, "explained")
    assert model_calls(world) == 2
    assert ROOT_CAUSE in status_body(world, fix_number)


@pytest.mark.parametrize("name", ["help", "stop", "resume"])
def test_commands_without_code_work_on_a_fork_pr(world: CommandWorld, name: str) -> None:
    number = world.open_pr("patch-1", fork="stranger/app", user="stranger")
    comment = world.say(number, f"/ci-agent {name}", WRITER)

    run = world.command(number, comment)

    assert run.exit_code == 0, str(run)
    assert list(run.workspace.iterdir()) == []
    assert our_eyes(world, comment) == [(comment, "eyes", ACTIONS_BOT)]
    assert ("ci-agent:paused" in world.github.pulls[number]["labels"]) == (name == "stop")


def test_status_on_a_fork_pr_is_answered(world: CommandWorld) -> None:
    number = world.open_pr("patch-1", fork="stranger/app", user="stranger")

    run = world.command(number, world.say(number, "/ci-agent status"))

    assert run.exit_code == 0, str(run)
    assert "status" in status_body(world, number)
