"""The `scene` fixture: each scenario of this folder runs once on GitHub and once on GitLab."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.fixtures import anthropic_fake
from tests.slash.scenarios.scene import Scene, scene_on

__all__ = ["anthropic_fake", "scene"]


@pytest.fixture(params=["github", "gitlab"])
def scene(request: pytest.FixtureRequest, tmp_path: Path, anthropic_fake: AnthropicFake,
          monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> Iterator[Scene]:
    with scene_on(request.param, tmp_path, anthropic_fake, monkeypatch, capfd) as scene:
        yield scene
