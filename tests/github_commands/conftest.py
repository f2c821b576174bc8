"""Fixtures of the command scenarios: a `CommandWorld` (sample repo + bare origin, the GitHub
fake with live pull request heads, the Anthropic fake, a runner directory) per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.github_commands.harness import WRITER, CommandSite, CommandWorld
from tests.github_scenarios.conftest import anthropic_fake, forge_waits
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, create_sample_repo

__all__ = ["anthropic_fake", "forge_waits", "world"]


@pytest.fixture
def world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
          capfd: pytest.CaptureFixture[str], forge_waits: list[float]) -> Iterator[CommandWorld]:
    # A request past the end of a test's script gets a give_up; every test counts the requests.
    anthropic_fake.reply_always(model.give_up("(the scenario's script has no more answers)"))
    repo = create_sample_repo(tmp_path, PYTHON)
    with CommandSite(repo.origin) as github:
        assert isinstance(github, CommandSite)
        github.collaborators[WRITER] = "write"
        github.collaborators["alice"] = "write"
        github.add_workflow("ci.yml")  # the CI workflow the command template names (ci_workflow)
        yield CommandWorld(tmp_path, repo, github, anthropic_fake, monkeypatch, capfd)
    assert github.failures == [], github.failures
