"""The first request of a `dry_run: true` job in the GitLab include, against its golden."""

from __future__ import annotations

import pytest

from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.gitlab_scenarios.harness import World
from tests.llm.golden import assert_facts, assert_golden, distilled_failures, normalise, printed_parts

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]


def test_the_gitlab_first_request_is_the_golden_one(world: World, capfd: pytest.CaptureFixture[str]) -> None:
    world.include["dry_run"] = True
    red = world.pipeline("main")
    parent = world.repo.git("rev-parse", f"{red.sha}^").strip()

    dry = world.job(red)

    assert dry.exit_code == 0, str(dry)
    assert world.api.requests == []
    assert_golden("gitlab.txt", normalise(dry.stdout, world.tmp, red.sha, parent))
    # the CI's own test results, in the checkout it ran in
    results = sorted((world.tmp / "runner").glob("ci*/test-results/junit.xml"))
    assert len(results) == 1, results
    assert_facts(printed_parts(dry.stdout), distilled_failures(capfd, world.tmp, red.log, *results))
