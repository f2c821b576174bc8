"""Protected CI/CD variables (pipelines/gitlab/ci-agent.yml's header): GitLab gives a job the
variables marked "Protected" only on protected refs. `main` is protected, `ci-agent/fix/*` is not
unless the project protects that wildcard, which is the remedy the include file documents."""

from __future__ import annotations

from tests.gitlab_scenarios.harness import FIX_BRANCH, World
from tests.gitlab_scenarios.steps import (
    answer,
    assert_dotenv,
    assert_fix_mr_outputs,
    model_calls,
    version,
)
from tests.scenarios.sample_repos import PYTHON


def test_a_green_fix_branch_needs_no_model_key(world: World) -> None:
    """The success job asks the model nothing: a protected key it cannot see does not matter."""
    world.protected_variables = {"ANTHROPIC_API_KEY"}
    answer(world, "broken", "fix")
    first = world.job(world.pipeline("main"))
    assert_fix_mr_outputs(world, first, "committed", attempt=1)
    green = world.pipeline(FIX_BRANCH)

    done = world.job(green)

    assert "ANTHROPIC_API_KEY" not in done.env, "the harness withholds it on an unprotected ref"
    assert done.exit_code == 0, str(done)
    assert_dotenv(done, "fixed")
    assert world.fix_mr()["draft"] is False


def test_a_protected_key_missing_on_the_fix_branch_is_explained(world: World) -> None:
    world.protected_variables = {"ANTHROPIC_API_KEY"}
    answer(world, "broken", "floor")
    world.job(world.pipeline("main"))
    red = world.pipeline(FIX_BRANCH)

    run = world.job(red)

    said = run.stdout + run.stderr + run.summary
    assert run.outcome == "error" and run.exit_code != 0, str(run)
    assert "ANTHROPIC_API_KEY" in said, said
    assert "protected" in said.lower() and FIX_BRANCH in said, said


def test_a_protected_fix_branch_wildcard_keeps_the_cycle_going(world: World) -> None:
    world.protected_variables = {"ANTHROPIC_API_KEY"}
    world.gitlab.protected_branches.append("ci-agent/fix/*")
    answer(world, "broken", "floor")
    first = world.job(world.pipeline("main"))
    assert first.exit_code == 0, str(first)
    red = world.pipeline(FIX_BRANCH)
    answer(world, "floor", "fix")

    second = world.job(red)

    assert second.env["CI_COMMIT_REF_PROTECTED"] == "true" and "ANTHROPIC_API_KEY" in second.env
    assert second.exit_code == 0, str(second)
    assert_fix_mr_outputs(world, second, "committed", attempt=2)
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")
    assert model_calls(world) == 2
