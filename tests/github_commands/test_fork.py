"""A fork's pull request: the command job has no checkout at all (the command workflow checks out
same-repository heads only). The refusal itself, the same on both forges, is in
tests/slash/scenarios/test_gate.py."""

from __future__ import annotations

import pytest

from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import assert_outputs
from tests.github_scenarios.steps import answer


@pytest.mark.parametrize("name", ["fix", "apply"])
def test_fix_and_apply_on_a_fork_pr_run_without_a_checkout(world: CommandWorld, name: str) -> None:
    number = world.open_pr("patch-1", fork="stranger/app", user="stranger")
    answer(world, "broken", "fix")
    comment = world.say(number, f"/ci-agent {name}")

    run = world.command(number, comment)

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "refused")
    assert list(run.workspace.iterdir()) == [], "the job had no checkout"
