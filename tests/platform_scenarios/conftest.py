"""The `platform` fixture: each scenario of this package runs once on GitHub and once on GitLab,
through the platform's driver (tests/platform_scenarios/platforms.py) around its own `World`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from ci_agent.retry import Waiting, waiting_as
from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.fixtures import anthropic_fake
from tests.fakes.gitlab_fake import GitLabFake
from tests.github_scenarios import harness as github
from tests.github_scenarios.fake_site import SiteFake
from tests.gitlab_scenarios import harness as gitlab
from tests.platform_scenarios.base import world_builder
from tests.platform_scenarios.platforms import GitHubPlatform, GitLabPlatform, Platform

__all__ = ["anthropic_fake", "forge_waits", "platform"]

W = TypeVar("W")


@pytest.fixture
def forge_waits() -> Iterator[list[float]]:
    """Every client built in the test runs without request spacing (the fakes need none) and
    records its retry waits instead of sleeping them: what it chose is read back, no test sleeps."""
    waits: list[float] = []
    with waiting_as(Waiting(sleep=waits.append, pace=False)):
        yield waits


@pytest.fixture(params=["github", "gitlab"])
def platform(request: pytest.FixtureRequest, tmp_path: Path, anthropic_fake: AnthropicFake,
             monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
             forge_waits: list[float]) -> Iterator[Platform]:
    if request.param == "github":
        builds = world_builder(tmp_path, anthropic_fake, monkeypatch, capfd, SiteFake, github.World)
        yield from _one(builds, _with_a_pat)
    else:
        labs = world_builder(tmp_path, anthropic_fake, monkeypatch, capfd, GitLabFake, gitlab.World)
        yield from _one(labs, GitLabPlatform)


def _with_a_pat(world: github.World) -> GitHubPlatform:
    """GitHub with a PAT as the job's token: its pushes start CI by themselves, as the GitLab
    project access token's do, so the same scenario runs the same cycle on both."""
    world.inputs["github_token"] = github.USER_TOKEN
    return GitHubPlatform(world)


def _one(builds: Iterator[Callable[..., W]], driver: Callable[[W], Platform]) -> Iterator[Platform]:
    """The driver around one world of the sample; the builder's teardown then stops the fake
    (which must have seen no unexpected request)."""
    build = next(builds)
    yield driver(build())
    next(builds, None)
