"""Fixtures of the GitLab scenarios: a `World` (sample repo + bare origin, GitLab fake, Anthropic
fake, runner directory) per test, built by `make_world(sample)`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ci_agent.retry import Waiting, waiting_as
from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.fixtures import anthropic_fake
from tests.fakes.gitlab_fake import GitLabFake
from tests.gitlab_scenarios.harness import World
from tests.platform_scenarios.base import world_builder

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]

MakeWorld = Callable[..., World]


@pytest.fixture
def forge_waits() -> Iterator[list[float]]:
    """Every client built in the test records its retry waits instead of sleeping them: what it
    chose is read back, no test sleeps."""
    waits: list[float] = []
    with waiting_as(Waiting(sleep=waits.append)):
        yield waits


@pytest.fixture
def make_world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
               capfd: pytest.CaptureFixture[str], forge_waits: list[float]) -> Iterator[MakeWorld]:
    yield from world_builder(tmp_path, anthropic_fake, monkeypatch, capfd, GitLabFake, World)


@pytest.fixture
def world(make_world: MakeWorld) -> World:
    return make_world()
