"""Fixtures of the GitLab slash-command scenarios: a `CommandWorld` (sample repo + bare origin,
the command-aware GitLab fake, the Anthropic fake) per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.gitlab_commands.harness import CommandWorld, command_world
from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits

__all__ = ["anthropic_fake", "forge_waits", "world"]


@pytest.fixture
def world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
          capfd: pytest.CaptureFixture[str], forge_waits: list[float]) -> Iterator[CommandWorld]:
    with command_world(tmp_path, anthropic_fake, monkeypatch, capfd) as world:
        yield world
