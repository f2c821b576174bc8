"""GitLab: verify is opt-in and checked before money is spent, and `.ci-agent.yml` comes from the
default branch (issue 12; issue 13 points 1 and 2), as on GitHub
(tests/github_scenarios/test_github_verify_optin.py, test_github_trusted_config.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.github_scenarios.harness import ROOT_CAUSE, SUMMARY
from tests.github_scenarios.steps import diff
from tests.github_scenarios.test_github_trusted_config import (
    CHANGED,
    MAIN_NOTE,
    PR_NOTE,
    hostile_config,
    workflow_plus_fix,
)
from tests.gitlab_scenarios.harness import FIX_BRANCH, World
from tests.gitlab_scenarios.steps import RATINGS, answer, assert_dotenv, model_calls, the_status_note, version
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

MISSING = "no-such-toolchain-ci-agent"


def commit_file(world: World, branch: str, path: str, text: str, *, new_branch: bool = False) -> None:
    clone = world.clone("main" if new_branch else branch, "edit")
    git(clone, "checkout", "-q", "-B", branch)
    (clone / path).write_text(text)
    git(clone, "add", path)
    git(clone, "commit", "-q", "-m", f"change {path}")
    git(clone, "push", "-q", "origin", branch)


def test_starter_config_verify_is_not_run_in_the_job(world: World) -> None:
    """The .NET starter config's `verify: dotnet test` (ci-agent init --forge gitlab) in a job
    without dotnet: the attempt is pushed and the fix branch's pipeline decides."""
    from ci_agent.cli.init import render_config
    from ci_agent.cli.stacks import DOTNET

    commit_file(world, "main", ".ci-agent.yml", render_config(DOTNET))
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


def test_a_merge_requests_config_has_no_effect_until_merged(world: World, tmp_path: Path) -> None:
    canary = tmp_path / "verify-ran"
    commit_file(world, "main", ".ci-agent.yml", f"notes:\n  - \"{MAIN_NOTE}\"\n")
    commit_file(world, "feature/stars", ".ci-agent.yml", hostile_config(canary), new_branch=True)
    source = world.open_mr("feature/stars", "main", "Stars")
    red = world.pipeline("feature/stars", source="merge_request_event", mr_iid=source)
    fix = diff(version(world, "broken"), version(world, "fix"))
    world.api.reply(model.submit_patch(fix + workflow_plus_fix(), summary=SUMMARY, root_cause=ROOT_CAUSE),
                    model.submit_patch(fix, summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    assert model_calls(world) == 2, "the workflow edit was rejected and sent back"
    systems = json.dumps([r["system"] for r in world.api.message_requests])
    assert MAIN_NOTE in systems and PR_NOTE not in systems
    files = git(world.repo.origin, "diff", "--name-only", f"{red.sha}..refs/heads/ci-agent/fix/feature/stars")
    assert files.split() == [RATINGS]
    assert not canary.exists()
    (mr,) = world.mrs_from("ci-agent/fix/feature/stars")
    for iid in (mr["iid"], source):
        assert the_status_note(world, iid)["body"].count(CHANGED) == 1
