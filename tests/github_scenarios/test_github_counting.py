"""Counting attempts on GitHub (DESIGN.md §4.3): a human commit on the fix branch starts a new
count; a rerun of the same job counts nothing twice."""

from __future__ import annotations

from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import (
    answer,
    assert_fix_pr_outputs,
    fail_attempts,
    model_calls,
)


def test_a_human_commit_on_the_fix_branch_starts_a_new_count(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    fail_attempts(world, 2)
    world.human_commit(FIX_BRANCH)
    red = world.ci(FIX_BRANCH)
    assert red.conclusion == "failure"
    answer(world, "floor_float", "fix")

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert model_calls(world) == 3
    assert_fix_pr_outputs(world, run, "committed", attempt=1)
    tip = world.origin_tip(FIX_BRANCH)
    assert tip is not None and world.trailers(tip).get("CI-Agent-Attempt") == ["1"]
    assert "ci-agent:escalated" not in world.fix_pull()["labels"]


def test_a_rerun_of_the_same_job_does_not_count_twice(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    fail_attempts(world, 1)
    red = world.ci_runs[-1]
    answer(world, "floor", "floor_float", summary="Guard the division.")
    job = world.after_ci(red, run_id=4242)
    assert job.exit_code == 0, str(job)
    assert_fix_pr_outputs(world, job, "committed", attempt=2)
    tip = world.origin_tip(FIX_BRANCH)

    rerun = world.after_ci(red, run_id=4242, run_attempt=2)

    assert rerun.exit_code == 0, str(rerun)
    assert model_calls(world) == 2, "the rerun asks nobody: its failure was already answered"
    assert world.origin_tip(FIX_BRANCH) == tip, "and pushes nothing"
    # the next real failure is attempt 2's: attempt 3 follows, no escalation yet
    answer(world, "floor_float", "fix")
    third = world.after_ci(world.ci(FIX_BRANCH))
    assert third.exit_code == 0, str(third)
    assert_fix_pr_outputs(world, third, "committed", attempt=3)
    assert "ci-agent:escalated" not in world.fix_pull()["labels"]
