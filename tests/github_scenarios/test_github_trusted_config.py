"""Configuration from the trusted side on GitHub (issue 12): the `config` input's file is read from
the default branch too, and must be inside the repository; an unchanged config says nothing.
(A contributor branch's hostile `.ci-agent.yml` having no effect until merged, the same on
GitLab: tests/platform_scenarios/test_trusted_config.py.)
"""

from __future__ import annotations

import pytest

from tests.github_scenarios.harness import (
    USER_TOKEN,
    World,
    open_person_pr,
    same_repo_pr,
)
from tests.github_scenarios.steps import answer, model_calls, the_status_comment
from tests.platform_scenarios.base import push_file
from tests.platform_scenarios.configs import CHANGED, MAIN_NOTE, PR_NOTE, system_text, workflow_plus_fix


def commit_file(world: World, branch: str, path: str, text: str, *, new_branch: bool = False) -> str:
    return push_file(world.repo, branch, path, text, new_branch=new_branch)


# What the slash-command runs' check of the same rule (tests/github_commands) takes from here.
__all__ = ["CHANGED", "MAIN_NOTE", "PR_NOTE", "commit_file", "system_text", "workflow_plus_fix"]


def test_a_config_input_file_is_read_from_the_default_branch_too(world: World) -> None:
    """The `config` input names another file: the branch's edit of it has no effect either."""
    commit_file(world, "main", ".github/ci-agent.yml", f"notes:\n  - \"{MAIN_NOTE}\"\n")
    commit_file(world, "feature/stars", ".github/ci-agent.yml", f"notes:\n  - \"{PR_NOTE}\"\n",
                new_branch=True)
    open_person_pr(world, "feature/stars", push=False)
    world.inputs.update(github_token=USER_TOKEN, config="./.github/ci-agent.yml")
    ci = world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                  event="pull_request")
    answer(world, "broken", "fix")

    run = world.after_ci(ci)

    assert run.exit_code == 0, str(run)
    assert MAIN_NOTE in system_text(world) and PR_NOTE not in system_text(world)
    assert "`.github/ci-agent.yml` changed on this branch" in the_status_comment(world, 1)["body"]


@pytest.mark.parametrize("name", ["/etc/passwd", "../outside.yml"])
def test_a_config_input_outside_the_repository_is_refused(world: World, name: str) -> None:
    world.inputs.update(github_token=USER_TOKEN, config=name)
    run = world.after_ci(world.ci("main"))
    assert run.exit_code == 2, str(run)
    assert "input config must name a file inside the repository" in run.stderr + run.stdout
    assert model_calls(world) == 0


def test_an_unchanged_config_says_nothing(world: World) -> None:
    commit_file(world, "main", ".ci-agent.yml", f"notes:\n  - \"{MAIN_NOTE}\"\n")
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")
    run = world.after_ci(world.ci("main"))
    assert run.exit_code == 0, str(run)
    assert MAIN_NOTE in system_text(world)
    (pull,) = world.pulls_from("ci-agent/fix/main")
    assert "changed on this branch" not in the_status_comment(world, pull["number"])["body"]
