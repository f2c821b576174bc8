"""`/ci-agent stop` pauses new attempts, not CI's verdicts (issue 13, point 4).

Attempt 1 is pushed, a writer says `/ci-agent stop`, and the fix branch's run finishes while the
label is on. Before, that run was skipped like any other: its verdict was never recorded, so after
`/ci-agent resume` the next red run of the person's branch waited for "attempt 1's CI run"
forever. Now a run on the fix branch still decides the pending attempt while paused (green: the
fix PR is marked ready; red: the failure is counted), and only a new attempt waits for resume.
"""

from __future__ import annotations

from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import FEATURE, FEATURE_FIX, assert_outputs, red_pr, status_body
from tests.github_scenarios.harness import CiRun, same_repo_pr
from tests.github_scenarios.steps import WRONG_SUMMARIES, answer, model_calls

PAUSED = "ci-agent:paused"


def _attempt_then_stop(world: CommandWorld, target: str) -> tuple[int, int]:
    """The person's red PR, attempt 1 (`target`'s version) pushed, then `/ci-agent stop`."""
    number, ci = red_pr(world)
    answer(world, "broken", target, summary=WRONG_SUMMARIES.get(target, "Return 0.0 without ratings."))
    assert world.after_ci(ci).outputs["outcome"] == "committed"
    (fix,) = world.pulls_from(FEATURE_FIX)
    stopped = world.command(number, world.say(number, "/ci-agent stop"))
    assert stopped.exit_code == 0 and PAUSED in world.github.pulls[fix["number"]]["labels"], str(stopped)
    return number, fix["number"]


def _resume(world: CommandWorld, number: int) -> None:
    resumed = world.command(number, world.say(number, "/ci-agent resume"))
    assert resumed.exit_code == 0, str(resumed)


def _red_run_of_the_person(world: CommandWorld, number: int) -> CiRun:
    return world.ci(FEATURE, pull_requests=[same_repo_pr(world, number, FEATURE)], event="pull_request")


def test_a_green_run_while_paused_is_recorded_and_resume_does_not_wait_for_it(world: CommandWorld) -> None:
    number, fix_number = _attempt_then_stop(world, "fix")
    tip = world.origin_tip(FEATURE_FIX)

    green = world.after_ci(world.ci(FEATURE_FIX))

    assert_outputs(green, "fixed", pr_number=str(fix_number))
    assert world.github.pulls[fix_number]["draft"] is False, "ready for review: a verdict, not an attempt"
    assert "green" in status_body(world, fix_number)
    assert PAUSED in world.github.pulls[fix_number]["labels"], "still paused"
    _resume(world, number)

    again = world.after_ci(_red_run_of_the_person(world, number))

    # attempt 1 is decided (passed), so nothing is pending: the person's red run is acted on (here
    # the scripted model has no more answers and gives up), never left waiting
    assert "waiting for its CI" not in again.stdout + again.stderr, str(again)
    assert again.outputs["outcome"] == "gave_up" and model_calls(world) > 1, str(again)
    assert world.origin_tip(FEATURE_FIX) == tip


def test_a_red_run_while_paused_counts_and_resume_makes_the_next_attempt(world: CommandWorld) -> None:
    number, fix_number = _attempt_then_stop(world, "floor")

    red = world.after_ci(world.ci(FEATURE_FIX))

    assert_outputs(red, "skipped")
    said = red.stdout + red.stderr
    assert PAUSED in said and "attempt 1 failed on CI" in said, said
    assert model_calls(world) == 1, "no model call while paused"
    status = status_body(world, fix_number)
    assert "Budget: 1 of 3" in status and "paused" in status, status
    _resume(world, number)
    answer(world, "floor", "fix")

    again = world.after_ci(_red_run_of_the_person(world, number))

    assert_outputs(again, "committed", attempt="2")
    assert model_calls(world) == 2
    assert "waiting for its CI" not in again.stdout + again.stderr
