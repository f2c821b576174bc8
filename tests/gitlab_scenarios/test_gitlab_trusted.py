"""GitLab: verify is opt-in and checked before money is spent (issue 13 points 1 and 2), as on
GitHub (tests/github_scenarios/test_github_verify_optin.py). (`.ci-agent.yml` from the default
branch, the same on both: tests/platform_scenarios/test_trusted_config.py.)"""

from __future__ import annotations

from ci_agent.cli.init import render_config
from ci_agent.cli.stacks import DOTNET
from tests.gitlab_scenarios.harness import FIX_BRANCH, World
from tests.gitlab_scenarios.steps import answer, assert_dotenv, model_calls, the_status_note
from tests.platform_scenarios.base import push_file

MISSING = "no-such-toolchain-ci-agent"


def test_starter_config_verify_is_not_run_in_the_job(world: World) -> None:
    """The .NET starter config's `verify: dotnet test` (ci-agent init --forge gitlab) in a job
    without dotnet: the attempt is pushed and the fix branch's pipeline decides."""
    push_file(world.repo, "main", ".ci-agent.yml", render_config(DOTNET))
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"))

    assert run.exit_code == 0, str(run)
    assert_dotenv(run, "committed", attempt="1", branch=FIX_BRANCH)
    assert model_calls(world) == 1 and world.origin_tip(FIX_BRANCH) is not None
    assert "waiting for CI" in the_status_note(world, world.fix_mr()["iid"])["body"]


def test_a_verify_input_naming_a_missing_program_costs_nothing(world: World) -> None:
    world.include["verify"] = f"{MISSING} test"
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"))

    assert run.exit_code == 2, str(run)
    assert_dotenv(run, "error")
    said = run.stdout + run.stderr
    assert "the `verify` input (CI_AGENT_INPUT_VERIFY) cannot run" in said and MISSING in said, said
    assert model_calls(world) == 0
    assert world.origin_branches() == ["main"] and world.gitlab.merge_requests == {}


def test_a_verify_that_cannot_run_is_recorded_on_the_merge_request(world: World) -> None:
    world.repo.git("push", "-q", "origin", "main:refs/heads/feature/stars")
    source = world.open_mr("feature/stars", "main", "Stars")
    world.include["verify"] = f"sh -c '{MISSING} --run-tests'"
    answer(world, "broken", "fix")

    first = world.job(world.pipeline("feature/stars", source="merge_request_event", mr_iid=source))
    again = world.job(world.pipeline("feature/stars", source="merge_request_event", mr_iid=source))

    assert first.exit_code == 2 and again.exit_code == 2, str(again)
    assert model_calls(world) == 1, "the second pipeline made no model request"
    assert "could not run on this failure before" in again.stdout + again.stderr
    note = the_status_note(world, source)["body"]
    assert "verify command could not run" in note and "exit 127" in note
    assert world.origin_tip("ci-agent/fix/feature/stars") is None
