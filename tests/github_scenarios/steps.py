"""The checks every GitHub scenario repeats (the fix PR, its status comment, the outputs); the
scripted model answers are every platform's (tests/platform_scenarios/steps.py)."""

from __future__ import annotations

from typing import Any

from tests.github_scenarios.harness import FIX_BRANCH, ActionRun, World
from tests.platform_scenarios import platforms
from tests.platform_scenarios.base import OUTCOMES, with_marker
from tests.platform_scenarios.steps import RATINGS, WRONG_SUMMARIES, answer, diff, model_calls, version

__all__ = ["RATINGS", "WRONG_SUMMARIES", "answer", "assert_fix_pr_outputs", "assert_outputs", "diff",
           "fail_attempts", "model_calls", "status_comments", "the_status_comment", "version"]


def status_comments(world: World, number: int) -> list[dict[str, Any]]:
    return with_marker(world.comments_on(number))


def the_status_comment(world: World, number: int) -> dict[str, Any]:
    found = status_comments(world, number)
    assert len(found) == 1, f"exactly one status comment on #{number}: {found}"
    return found[0]


def assert_outputs(run: ActionRun, outcome: str, **expected: str) -> None:
    assert run.outputs.get("outcome") == outcome, str(run)
    assert outcome in OUTCOMES
    for name, value in expected.items():
        assert run.outputs.get(name) == value, (name, str(run))


def assert_fix_pr_outputs(world: World, run: ActionRun, outcome: str, attempt: int) -> dict[str, Any]:
    pull = world.fix_pull()
    assert_outputs(run, outcome, attempt=str(attempt), branch=FIX_BRANCH, pr_number=str(pull["number"]),
                   pr_url=f"https://github.com/octo/app/pull/{pull['number']}")
    assert int(run.outputs.get("tokens", "0")) > 0, str(run)
    return pull


def fail_attempts(world: World, count: int) -> list[str]:
    """Attempts 1..count, each a wrong patch on top of the last, each failing the branch's CI.
    Returns the status comment's text after each attempt was pushed."""
    said, _ = platforms.fail_attempts(platforms.GitHubPlatform(world), count)
    return said
