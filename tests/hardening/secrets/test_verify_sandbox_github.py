"""Issue 12's verify attack (tests/hardening/secrets/exfil.py) on `fix --github`: a workflow_run
job with the `verify` input set, ci-agent in its own process as the container's entrypoint, the
checkout's `.git/config` as actions/checkout leaves it (token in the origin URL and an
`http.extraheader`), the runner's folders open to any user. The patch's conftest carries off
nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.github_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.github_scenarios.harness import World
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
def test_fix_github_verify_reaches_no_secret(world: World, tmp_path: Path) -> None:
    canaries = Canaries.fresh()
    home, drop = lair(tmp_path, canaries)
    world.github.tokens[canaries.env["INPUT_GITHUB_TOKEN"]] = "octocat"
    red = world.ci("main")
    world.api.reply(attack_answer(world.repo, drop, [tmp_path / "runner", home]))
    world.inputs.update(anthropic_api_key=canaries.env["INPUT_ANTHROPIC_API_KEY"],
                        github_token=canaries.env["INPUT_GITHUB_TOKEN"], verify=PYTEST)
    others = {k: v for k, v in canaries.env.items() if not k.startswith("INPUT_")}
    job = world.job_after_ci(red, env={**others, "HOME": str(home)})
    credential_checkout(job.workspace, world.repo.origin, canaries)

    run = job.run(process=True)

    assert run.exit_code == 0, str(run)
    assert "verified" in run.stderr and "ok=True" in run.stderr, str(run)
    assert_sandboxed_and_empty(drop, canaries, job.workspace, home)
