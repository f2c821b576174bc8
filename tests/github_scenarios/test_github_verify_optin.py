"""Verify in CI is opt-in and checked before money is spent (issue 12; issue 13 points 1 and 2).

- The starter `.ci-agent.yml` that `ci-agent init` writes has `commands.verify` (`dotnet test`
  for .NET). In the action's image there is no such toolchain: honouring it in `fix --github`
  failed every attempt after paying for it. In CI only the `verify` input runs a command in the job.
- A `verify` input whose program this job cannot start is refused before the model is called:
  exit 2, a sentence naming the input, no model request, nothing pushed.
- A verify that starts but cannot run (here: exit 127, a tool the script calls is missing) is no
  verdict on the patch; it is recorded in the status comment's marker, so a rerun for the same
  failure makes no model request.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ci_agent.cli.main import main
from ci_agent.engine.forge import parse_marker
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World, open_person_pr, same_repo_pr
from tests.github_scenarios.steps import answer, assert_fix_pr_outputs, model_calls, the_status_comment
from tests.scenarios.sample_repos import git

MISSING = "no-such-toolchain-ci-agent"


def _commit_starter_config(world: World, stack: str) -> str:
    """`ci-agent init --stack <stack>` in a person's clone; its `.ci-agent.yml` pushed to main."""
    clone = world.checkout("main", f"init-{stack}")
    assert main(["init", "--repo", str(clone), "--stack", stack, "--forge", "github"]) == 0
    text = (clone / ".ci-agent.yml").read_text()
    git(clone, "add", ".ci-agent.yml")
    git(clone, "commit", "-q", "-m", "ci-agent init")
    git(clone, "push", "-q", "origin", "main")
    return text


def test_starter_config_verify_is_not_run_in_ci(world: World) -> None:
    """Issue 13 point 1: the .NET starter config's `verify: dotnet test` in a job without dotnet.
    Before the fix: every attempt ran `dotnet`, failed, and the job exited non-zero after paying."""
    assert shutil.which("dotnet") is None, "this test needs a machine without dotnet, like the image"
    starter = _commit_starter_config(world, "dotnet")
    assert 'verify: "dotnet test --nologo"' in starter
    assert "fix --local` only" in starter, "the starter config says where its verify is used"
    world.inputs["github_token"] = USER_TOKEN
    red = world.ci("main")
    answer(world, "broken", "fix")

    run = world.after_ci(red)  # the verify input is empty (the default)

    assert run.exit_code == 0, str(run)
    assert model_calls(world) == 1
    pull = assert_fix_pr_outputs(world, run, "committed", attempt=1)
    assert world.origin_tip(FIX_BRANCH) is not None, "the attempt was pushed"
    status = the_status_comment(world, pull["number"])["body"]
    assert "waiting for CI" in status
    assert "dotnet" not in run.stderr + run.stdout, "no in-job verify ran"


def test_verify_input_naming_a_missing_program_costs_nothing(world: World) -> None:
    """Issue 13 point 2: before the fix the error came after the model call, on every red run."""
    world.inputs.update(github_token=USER_TOKEN, verify=f"{MISSING} test --nologo")
    red = world.ci("main")
    answer(world, "broken", "fix")

    for _ in range(2):  # the rerun pays nothing either
        run = world.after_ci(red)

        assert run.exit_code == 2, str(run)
        assert run.outputs.get("outcome") == "error"
        said = run.stderr + run.stdout
        assert "the `verify` input cannot run" in said and MISSING in said, said
        assert "no model request was made" in said
        assert model_calls(world) == 0
        assert world.origin_tip(FIX_BRANCH) is None, "nothing pushed"
        assert world.pulls_from(FIX_BRANCH) == []


def test_verify_input_naming_a_script_the_repository_lacks_costs_nothing(world: World) -> None:
    """A relative program is looked up in the tree being fixed (`./gradlew` style)."""
    world.inputs.update(github_token=USER_TOKEN, verify="./tools/verify.sh --fast")
    run = world.after_ci(world.ci("main"))

    assert run.exit_code == 2, str(run)
    assert "./tools/verify.sh is not a file in the repository" in run.stderr + run.stdout
    assert model_calls(world) == 0 and world.origin_tip(FIX_BRANCH) is None


def _pr_world(world: World) -> None:
    open_person_pr(world)


def test_a_verify_that_cannot_run_is_recorded_and_the_rerun_pays_nothing(world: World,
                                                                       tmp_path: Path) -> None:
    """The verify program starts but a tool it calls is missing (exit 127): that says nothing
    about the patch. Recorded in the marker of the PR's status comment; the rerun of the run and a
    new run with the same failure make no model request; another verify command is tried."""
    _pr_world(world)
    world.inputs.update(github_token=USER_TOKEN, verify=f"sh -c '{MISSING} --run-tests'")
    ci = world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                  event="pull_request")
    answer(world, "broken", "fix")

    first = world.after_ci(ci)

    assert first.exit_code == 2, str(first)
    assert first.outputs.get("outcome") == "error" and int(first.outputs["tokens"]) > 0
    assert model_calls(world) == 1
    assert world.origin_tip("ci-agent/fix/feature/stars") is None, "an unverified patch is never pushed"
    status = the_status_comment(world, 1)["body"]
    assert "verify command could not run" in status and "exit 127" in status, status
    marker = parse_marker(status)
    assert marker is not None and marker["unverifiable"][0]["verify"] == f"sh -c '{MISSING} --run-tests'"

    rerun = world.after_ci(world.rerun(ci))
    again = world.after_ci(world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                                    event="pull_request"))

    for later in (rerun, again):
        assert later.exit_code == 2, str(later)
        assert "could not run on this failure before" in later.stderr + later.stdout
    assert model_calls(world) == 1, "no rerun paid for the same model call again"

    answer(world, "broken", "fix")
    world.inputs["verify"] = "sh -c 'exit 0'"  # the maintainers fixed the input
    fixed = world.after_ci(world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                                    event="pull_request"))
    assert fixed.exit_code == 0, str(fixed)
    assert model_calls(world) == 2
    assert fixed.outputs.get("outcome") == "fixed"
