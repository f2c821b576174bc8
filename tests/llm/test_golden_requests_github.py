"""The first request of a `dry_run: true` job on GitHub (after a red CI run), against its golden."""

from __future__ import annotations

import pytest

from tests.github_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.github_scenarios.harness import USER_TOKEN, World
from tests.llm.golden import assert_facts, assert_golden, distilled_failures, normalise, printed_parts

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]


def test_the_github_first_request_is_the_golden_one(world: World, capfd: pytest.CaptureFixture[str]) -> None:
    world.inputs.update(github_token=USER_TOKEN, dry_run="true")
    red = world.ci("main")
    parent = world.repo.git("rev-parse", f"{red.sha}^").strip()

    dry = world.after_ci(red)

    assert dry.exit_code == 0, str(dry)
    assert world.api.requests == []
    assert_golden("github.txt", normalise(dry.stdout, world.tmp, red.sha, parent))
    # the CI's own test results, in the checkout it ran in
    results = sorted((world.tmp / "runner").glob("ci*/test-results/junit.xml"))
    assert len(results) == 1, results
    assert_facts(printed_parts(dry.stdout), distilled_failures(capfd, world.tmp, red.log, *results))
