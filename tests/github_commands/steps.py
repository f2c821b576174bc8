"""Steps the command scenarios repeat: a person's red pull request, reading the status comment,
and what a command that was ignored must have left untouched."""

from __future__ import annotations

from typing import Any

from tests.github_commands.harness import CommandWorld
from tests.github_scenarios.harness import ActionRun, CiRun, same_repo_pr
from tests.github_scenarios.steps import model_calls, status_comments

FEATURE = "feature"
FEATURE_FIX = "ci-agent/fix/feature"


def red_pr(world: CommandWorld, branch: str = FEATURE) -> tuple[int, CiRun]:
    """A person's same-repository pull request whose CI run failed (the sample's bug)."""
    number = world.open_pr(branch)
    ci = world.ci(branch, pull_requests=[same_repo_pr(world, number, branch)], event="pull_request")
    assert ci.conclusion == "failure"
    return number, ci


def status_body(world: CommandWorld, number: int) -> str:
    found = status_comments(world, number)
    assert len(found) == 1, f"exactly one status comment on #{number}: {found}"
    body: str = found[0]["body"]
    return body


def our_eyes(world: CommandWorld, comment_id: int, review: bool = False) -> list[tuple[int, str, str]]:
    reactions = world.github.review_reactions if review else world.github.reactions
    return [r for r in reactions if r[0] == comment_id]


def assert_ignored(world: CommandWorld, since: int, calls_before: int, branches: list[str],
                   comment_id: int, review: bool = False) -> None:
    """No model call, no reaction, no write to the API, nothing pushed."""
    assert model_calls(world) == calls_before
    assert our_eyes(world, comment_id, review) == []
    assert world.writes(since) == []
    assert world.origin_branches() == branches


def pull(world: CommandWorld, number: int) -> dict[str, Any]:
    return world.github.pulls[number]


OUTCOMES = {"fixed", "committed", "proposed", "explained", "escalated", "gave_up", "nothing_to_do",
            "skipped", "refused"}


def assert_outputs(run: ActionRun, outcome: str, **expected: str) -> None:
    """The step's outputs (the scenario steps' check, with the command outcomes too)."""
    assert run.outputs.get("outcome") == outcome, str(run)
    assert outcome in OUTCOMES
    for name, value in expected.items():
        assert run.outputs.get(name) == value, (name, str(run))
