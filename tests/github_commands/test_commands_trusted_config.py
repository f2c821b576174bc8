"""Slash-command runs read ci-agent's configuration from the default branch (issue 12), like the
fix runs (tests/github_scenarios/test_github_trusted_config.py)."""

from __future__ import annotations

from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import FEATURE, FEATURE_FIX, red_pr, status_body
from tests.github_scenarios.harness import ROOT_CAUSE, SUMMARY, same_repo_pr
from tests.github_scenarios.steps import RATINGS, diff, model_calls, version
from tests.github_scenarios.test_github_trusted_config import (
    CHANGED,
    MAIN_NOTE,
    PR_NOTE,
    commit_file,
    system_text,
    workflow_plus_fix,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git


def test_slash_command_runs_use_the_default_branchs_config(world: CommandWorld) -> None:
    """`/ci-agent fix` on a pull request whose head changes `.ci-agent.yml`: the command job checks
    out the head, and still the default branch's configuration decides."""
    commit_file(world, "main", ".ci-agent.yml", f"notes:\n  - \"{MAIN_NOTE}\"\n")
    number, _ = red_pr(world)
    widened = f"notes:\n  - \"{PR_NOTE}\"\npatch:\n  use_default_deny: false\n"
    commit_file(world, FEATURE, ".ci-agent.yml", widened)
    ci = world.ci(FEATURE, pull_requests=[same_repo_pr(world, number, FEATURE)], event="pull_request")
    comment = world.say(number, "/ci-agent fix")
    fix = diff(version(world, "broken"), version(world, "fix"))
    world.api.reply(model.submit_patch(fix + workflow_plus_fix(), summary=SUMMARY, root_cause=ROOT_CAUSE),
                    model.submit_patch(fix, summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = world.command(number, comment)

    assert run.exit_code == 0, str(run)
    assert model_calls(world) == 2 and PR_NOTE not in system_text(world) and MAIN_NOTE in system_text(world)
    files = git(world.repo.origin, "diff", "--name-only", f"{ci.sha}..refs/heads/{FEATURE_FIX}")
    assert files.split() == [RATINGS]
    assert CHANGED in status_body(world, number)
