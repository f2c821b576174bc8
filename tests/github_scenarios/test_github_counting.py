"""Counting attempts on GitHub (DESIGN.md §4.3): a human commit on the fix branch starts a new
count; the `max_attempts` input is the budget. (The three-failure escalation and the rerun that
counts nothing twice, the same on GitLab, are in tests/platform_scenarios/test_fix_cycle.py.)"""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import assert_fix_pr_outputs, fail_attempts
from tests.platform_scenarios.steps import WRONG_SUMMARIES, answer, model_calls


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


def test_max_attempts_input_is_the_budget(world: World) -> None:
    """With `max_attempts: 1` the first failed attempt escalates, and says what it changed."""
    world.inputs.update(github_token=USER_TOKEN, max_attempts="1")
    fail_attempts(world, 1)

    run = world.after_ci(world.ci_runs[-1])

    assert run.exit_code == 3, str(run)
    (escalation,) = [b for b in world.created_comments(world.fix_pull()["number"]) if parse_marker(b) is None]
    assert WRONG_SUMMARIES["floor"] in escalation
    assert "ci-agent:escalated" in world.fix_pull()["labels"]
    assert model_calls(world) == 1
