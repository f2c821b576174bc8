"""Issue 12's verify attack (tests/hardening/secrets/exfil.py) on `fix --gitlab`: the include's
`verify` input set, ci-agent in its own process as the job's container runs it, with
CI_JOB_TOKEN, CI_REGISTRY_PASSWORD, the project token and a project variable in its environment,
and the runner's checkout holding the job token in its origin URL. The patch's conftest carries
off nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.gitlab_scenarios.harness import BOT, World
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

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    yield from reachable_tmp_path()


@needs_root
def test_fix_gitlab_verify_reaches_no_secret(world: World, tmp_path: Path) -> None:
    canaries = Canaries.fresh()
    home, drop = lair(tmp_path, canaries)
    world.gitlab.add_token(canaries.env["CI_AGENT_GITLAB_TOKEN"], BOT, "project")
    world.gitlab.add_token(canaries.env["CI_JOB_TOKEN"], "maint", "job")
    world.variables.update({k: v for k, v in canaries.env.items() if not k.startswith(("INPUT_", "CI_JOB"))})
    world.include["verify"] = PYTEST
    plain_clone = world.clone
    checkouts: list[Path] = []

    def runner_clone(ref: str, name: str) -> Path:
        path = plain_clone(ref, name)
        if name.startswith("job-"):  # ci-agent's job; another job's checkout is not ours to hide
            credential_checkout(path, world.repo.origin, canaries)
            checkouts.append(path)
        return path

    world.clone = runner_clone  # type: ignore[method-assign]
    red = world.pipeline("main")
    world.api.reply(attack_answer(world.repo, drop, [tmp_path / "runner", home]))

    run = world.job(red, env={"CI_JOB_TOKEN": canaries.env["CI_JOB_TOKEN"], "HOME": str(home)}, process=True)

    assert run.exit_code == 0, str(run)
    assert "verified" in run.stderr and "ok=True" in run.stderr, str(run)
    assert_sandboxed_and_empty(drop, canaries, checkouts[-1], home)
