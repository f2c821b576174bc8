"""The three-failure budget on GitHub (DESIGN.md §4.3): the escalation comment exactly once, the
label, and no fourth model call."""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import (
    WRONG_ORDER,
    WRONG_SUMMARIES,
    assert_outputs,
    fail_attempts,
    model_calls,
    status_comments,
)
from tests.scenarios import model_scripts as model


def test_three_failures_escalate_once_and_a_fourth_run_asks_nobody(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    said = fail_attempts(world, 3)
    last = world.ci_runs[-1]
    assert model_calls(world) == 3
    # attempts 1 and 2 left the same tests failing: the third prompt and status comment say so
    assert "no progress" in model.first_user_text(world.api.message_requests[2]).lower()
    assert "no progress" in said[2].lower() and "no progress" not in said[1].lower()

    escalated = world.after_ci(last)

    assert escalated.exit_code == 3, str(escalated)
    assert model_calls(world) == 3, "the budget is checked before any model call"
    pull = world.fix_pull()
    assert_outputs(escalated, "escalated", branch=FIX_BRANCH, pr_number=str(pull["number"]))
    assert "ci-agent:escalated" in pull["labels"] and "ci-agent" in pull["labels"]
    # one escalation comment besides the status comment (which is edited, never re-posted)
    (escalation,) = [b for b in world.created_comments(pull["number"]) if parse_marker(b) is None]
    assert "escalat" in escalation.lower()
    for number, name in enumerate(WRONG_ORDER, 1):  # it says what each attempt changed
        assert f"attempt {number}" in escalation and WRONG_SUMMARIES[name] in escalation, name
    assert "test_no_ratings_yet" in escalation, "and what still fails (after the last attempt)"
    posted = len(world.created_comments(pull["number"]))

    rerun = world.after_ci(world.rerun(last))  # "Re-run failed jobs" of the same CI run

    assert rerun.exit_code == 0, str(rerun)
    assert_outputs(rerun, "skipped")

    again = world.after_ci(world.ci(FIX_BRANCH))  # a new CI run of the same commit, still red

    assert again.exit_code == 3, str(again)
    assert_outputs(again, "escalated")
    assert model_calls(world) == 3, "a fourth attempt must not reach the model"
    assert len(world.created_comments(pull["number"])) == posted, "escalation posted exactly once"
    assert len(status_comments(world, pull["number"])) == 1
    assert world.fix_pull()["labels"].count("ci-agent:escalated") == 1


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
