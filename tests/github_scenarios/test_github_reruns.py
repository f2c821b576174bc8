"""Runs from other places: inline mode on the fix branch carries on the cycle; a source pull
request listed in the workflow_run payload gets the status comment too. (A job that dies on the
model service and is rerun, the same on GitLab: tests/platform_scenarios/test_fix_cycle.py.)"""

from __future__ import annotations

from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World, open_person_pr, same_repo_pr
from tests.github_scenarios.steps import assert_fix_pr_outputs, the_status_comment
from tests.platform_scenarios.steps import answer, version
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON


def test_inline_mode_on_the_fix_branch_carries_on(world: World) -> None:
    """The fix branch's own CI job fails and its ci-agent step runs: attempt 1 failed, attempt 2."""
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "floor", summary="Divide with //.")
    first = world.inline("main")
    assert first.exit_code == 0, str(first)
    answer(world, "floor", "fix")

    second = world.inline(FIX_BRANCH)

    assert second.exit_code == 0, str(second)
    assert_fix_pr_outputs(world, second, "committed", attempt=2)
    assert len(world.pulls_from(FIX_BRANCH)) == 1
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")
    assert "test_average_of_several_ratings" in model.first_user_text(world.api.message_requests[1])


def test_the_source_pull_request_gets_the_status_comment_too(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    open_person_pr(world)
    ci = world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                  event="pull_request")
    answer(world, "broken", "fix")

    run = world.after_ci(ci)

    assert run.exit_code == 0, str(run)
    (pull,) = world.pulls_from("ci-agent/fix/feature/stars")
    assert pull["base"] == "feature/stars"
    the_status_comment(world, pull["number"])
    the_status_comment(world, 1)
    assert world.github.pulls[1]["labels"] == [], "the person's PR is not labelled as ours"


def test_inline_step_in_a_shallow_checkout(world: World) -> None:
    """The 5-minute setup: one step added to an existing workflow whose actions/checkout keeps its
    default `fetch-depth: 1`. The cycle must still work across runs (trailers, fix branch)."""
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "floor", summary="Divide with //.")
    first = world.inline("main", shallow=True)
    assert first.exit_code == 0, str(first)
    assert_fix_pr_outputs(world, first, "committed", attempt=1)
    answer(world, "floor", "fix")

    second = world.inline(FIX_BRANCH, shallow=True)

    assert second.exit_code == 0, str(second)
    assert_fix_pr_outputs(world, second, "committed", attempt=2)
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")
