"""A fork's pull request: `fix` and `apply` are refused with the fork sentence, by a job that has
no checkout at all (the command workflow checks out same-repository heads only)."""

from __future__ import annotations

import pytest

from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import assert_outputs, our_eyes, status_body
from tests.github_scenarios.harness import ACTIONS_BOT
from tests.github_scenarios.steps import answer, model_calls


@pytest.mark.parametrize("name", ["fix", "apply"])
def test_fix_and_apply_on_a_fork_pr_are_refused_without_a_checkout(world: CommandWorld, name: str) -> None:
    number = world.open_pr("patch-1", fork="stranger/app", user="stranger")
    answer(world, "broken", "fix")
    comment = world.say(number, f"/ci-agent {name}")

    run = world.command(number, comment)

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "refused")
    assert list(run.workspace.iterdir()) == [], "the job had no checkout"
    said = status_body(world, number)
    assert "comes from a fork" in said and "secrets" in said
    assert model_calls(world) == 0 and world.origin_branches() == ["main"]
    assert list(world.github.pulls) == [number]
    assert our_eyes(world, comment) == [(comment, "eyes", ACTIONS_BOT)]
