"""The files the GitLab job leaves (`ci-agent.env` for `artifacts:reports:dotenv`, the summary)
when they cannot be written (issue 13, point 13): the real outcome or error stays the job's, and
the failed write is one extra line. The checkout is the branch's content, so the obstacle here is a
committed `ci-agent.env`: a directory (cannot be a file), or a symbolic link out of the checkout
(never followed: the job would write wherever the branch points it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci_agent.errors import ExitCode
from tests.gitlab_scenarios.harness import World
from tests.gitlab_scenarios.steps import answer, model_calls

TARGET_TEXT = "a file outside the checkout\n"


def _commit_obstacle(world: World, kind: str) -> Path:
    """`ci-agent.env` on main is a directory, or a symbolic link to a file outside any checkout."""
    outside = world.tmp / "outside" / "profile"
    outside.parent.mkdir()
    outside.write_text(TARGET_TEXT)
    clone = world.repo.path
    if kind == "link":
        os.symlink(outside, clone / "ci-agent.env")
    else:
        (clone / "ci-agent.env").mkdir()
        (clone / "ci-agent.env" / "README").write_text("not the job's report\n")
    world.repo.git("add", "ci-agent.env")
    world.repo.git("commit", "-q", "-m", "something named like the job's dotenv report")
    world.repo.git("push", "-q", "origin", "main")
    return outside


WHY = {"link": "cannot write ci-agent.env: it is a symbolic link",
       "directory": "cannot write ci-agent.env: Is a directory"}


@pytest.mark.parametrize("kind", sorted(WHY))
def test_an_unwritable_dotenv_leaves_the_real_error(world: World, kind: str) -> None:
    outside = _commit_obstacle(world, kind)
    red = world.pipeline("main")

    # no token at all: the job's real error is a usage error (exit 2) naming the variable
    run = world.job(red, drop=("CI_AGENT_GITLAB_TOKEN", "CI_JOB_TOKEN"))

    assert run.exit_code == ExitCode.USAGE, str(run)
    assert "ci-agent: error: neither CI_AGENT_GITLAB_TOKEN nor CI_JOB_TOKEN" in run.stderr, str(run)
    assert f"ci-agent: also: {WHY[kind]}" in run.stderr, str(run)
    assert "## ci-agent: error" in (run.workspace / "ci-agent-summary.md").read_text()
    assert outside.read_text() == TARGET_TEXT, "the link was not followed"


@pytest.mark.parametrize("kind", sorted(WHY))
def test_an_unwritable_dotenv_leaves_the_real_outcome(world: World, kind: str) -> None:
    outside = _commit_obstacle(world, kind)
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"))

    assert run.exit_code == 0, str(run)
    assert "ci-agent: committed: attempt 1 pushed" in run.stdout, str(run)
    assert f"ci-agent: also: {WHY[kind]}" in run.stderr, str(run)
    assert model_calls(world) == 1 and len(world.gitlab.merge_requests) == 1
    assert outside.read_text() == TARGET_TEXT, "the link was not followed"
