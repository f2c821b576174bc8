"""Issue 12's verify attack (tests/hardening/secrets/exfil.py) on the fix job of each forge, with
the `verify` input set and ci-agent in its own process as the job's container runs it. GitHub: a
workflow_run job, the checkout's `.git/config` as actions/checkout leaves it (token in the origin
URL and an `http.extraheader`), the runner's folders open to any user. GitLab: CI_JOB_TOKEN,
CI_REGISTRY_PASSWORD, the project token and a project variable in the job's environment, and the
runner's checkout holding the job token in its origin URL. The patch's conftest carries off
nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitlab_scenarios.harness import BOT
from tests.hardening.platforms import GitHubSide, Side
from tests.hardening.secrets.exfil import (
    Canaries,
    assert_sandboxed_and_empty,
    attack_answer,
    credential_checkout,
    lair,
    needs_root,
    reachable_tmp_path,
)
from tests.scenarios.sample_repos import PYTEST


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    yield from reachable_tmp_path()


def plant(side: Side, canaries: Canaries) -> dict[str, str]:
    """The canaries where the forge gives them to the job; returns the job's own environment.
    GitHub: the action's key and token inputs (the token octocat's), the rest in the environment.
    GitLab: the project token and the job token known to the fake, the rest as CI/CD variables,
    CI_JOB_TOKEN set by the runner."""
    if isinstance(side, GitHubSide):
        side.world.github.tokens[canaries.env["INPUT_GITHUB_TOKEN"]] = "octocat"
        side.world.inputs.update(anthropic_api_key=canaries.env["INPUT_ANTHROPIC_API_KEY"],
                                 github_token=canaries.env["INPUT_GITHUB_TOKEN"])
        return {k: v for k, v in canaries.env.items() if not k.startswith("INPUT_")}
    side.world.gitlab.add_token(canaries.env["CI_AGENT_GITLAB_TOKEN"], BOT, "project")
    side.world.gitlab.add_token(canaries.env["CI_JOB_TOKEN"], "maint", "job")
    variables = {k: v for k, v in canaries.env.items() if not k.startswith(("INPUT_", "CI_JOB"))}
    side.world.variables.update(variables)
    return {"CI_JOB_TOKEN": canaries.env["CI_JOB_TOKEN"]}


@needs_root
def test_fix_verify_reaches_no_secret(side: Side, tmp_path: Path) -> None:
    canaries = Canaries.fresh()
    home, drop = lair(tmp_path, canaries)
    env = plant(side, canaries)
    side.set_input("verify", PYTEST)
    red = side.red("main")
    side.world.api.reply(attack_answer(side.world.repo, drop, [tmp_path / "runner", home]))

    def runner_checkout(workspace: Path) -> None:
        credential_checkout(workspace, side.world.repo.origin, canaries)

    run = side.run_in_process(red, {**env, "HOME": str(home)}, runner_checkout)

    assert run.exit_code == 0, str(run)
    assert "verified" in run.stderr and "ok=True" in run.stderr, str(run)
    assert_sandboxed_and_empty(drop, canaries, run.workspace, home)
