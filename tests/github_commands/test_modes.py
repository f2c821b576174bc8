"""Modes of the fix workflow (issue 5), on the fakes: mode push commits onto the failing pull
request's own branch (no fix branch, no new pull request, the person's pull request neither
relabelled nor retitled), is skipped on the default branch, and the next failed run of that
branch counts as a failed attempt; `/ci-agent stop` pauses it. (`/ci-agent fix` in mode push, the
same on both forges: tests/slash/scenarios/test_writers.py.)"""

from __future__ import annotations

import pytest

from ci_agent.engine.forge import parse_marker
from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import FEATURE, assert_outputs, red_pr, status_body
from tests.github_scenarios.harness import same_repo_pr
from tests.github_scenarios.steps import RATINGS, WRONG_SUMMARIES, answer, model_calls, version

PUSH = {"mode": "push"}


def test_mode_push_commits_onto_the_pr_branch_and_a_failed_run_counts(world: CommandWorld) -> None:
    number, ci = red_pr(world)
    answer(world, "broken", "floor", summary=WRONG_SUMMARIES["floor"])

    first = world.after_ci(ci, inputs=PUSH)

    assert first.exit_code == 0, str(first)
    assert_outputs(first, "committed", attempt="1", branch=FEATURE, pr_number=str(number))
    (made,) = world.commits(ci.sha, FEATURE)
    assert world.show(FEATURE, RATINGS) == version(world, "floor")
    assert world.origin_branches() == [FEATURE, "main"], "no fix branch"
    assert list(world.github.pulls) == [number], "no new pull request"
    pull = world.github.pulls[number]
    assert pull["title"] == "Add a note" and pull["labels"] == [], "the person's PR is left as it is"
    assert not world.github.requests_to("PATCH", rf"/repos/octo/app/pulls/{number}")
    assert "attempt 1 pushed" in status_body(world, number)
    red = world.ci(FEATURE, pull_requests=[same_repo_pr(world, number, FEATURE)], event="pull_request")
    assert red.sha == made and red.conclusion == "failure"
    answer(world, "floor", "fix")

    second = world.after_ci(red, inputs=PUSH)

    assert_outputs(second, "committed", attempt="2", branch=FEATURE)
    assert model_calls(world) == 2
    # the failed run made attempt 1 a failed attempt: counted before attempt 2 was made
    assert "Budget: 1 of 3 consecutive failed attempts used." in second.summary
    marker = parse_marker(status_body(world, number))
    assert marker is not None and list(marker["results"].values()) == ["failed"]
    assert "Budget: attempt 2 of 3 waiting for CI; 1 failed." in status_body(world, number), \
        "attempt 2 pending: waiting until CI says"
    assert world.commits(ci.sha, FEATURE)[1] == made and world.show(FEATURE, RATINGS) == version(world, "fix")
    assert list(world.github.pulls) == [number]


@pytest.mark.parametrize("job", ["workflow_run after CI", "inline step of a push"])
def test_mode_push_on_the_default_branch_is_skipped(world: CommandWorld, job: str) -> None:
    tip = world.origin_tip("main")
    answer(world, "broken", "fix")

    if job == "inline step of a push":
        run = world.inline("main", inputs=PUSH)
    else:
        run = world.after_ci(world.ci("main"), inputs=PUSH)

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "skipped")
    said = run.stdout + run.summary
    assert "mode push" in said and "main" in said
    assert model_calls(world) == 0
    assert world.origin_branches() == ["main"] and world.origin_tip("main") == tip
    assert world.github.pulls == {} and world.github.comments == {}


def test_stop_pauses_mode_push_on_the_pr_itself(world: CommandWorld) -> None:
    number, ci = red_pr(world)
    stopped = world.command(number, world.say(number, "/ci-agent stop"), inputs=PUSH)
    assert stopped.exit_code == 0 and "ci-agent:paused" in world.github.pulls[number]["labels"], str(stopped)
    answer(world, "broken", "fix")

    run = world.after_ci(ci, inputs=PUSH)

    assert_outputs(run, "skipped")
    assert "ci-agent:paused" in run.stdout
    assert model_calls(world) == 0 and world.origin_tip(FEATURE) == ci.sha
