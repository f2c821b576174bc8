"""Fixtures of the GitLab slash-command scenarios: a `CommandWorld` (sample repo + bare origin,
the command-aware GitLab fake, the Anthropic fake) per test. The fake's clock starts an hour
before the wall clock, so the poller (which looks back from `now`) sees the notes of a test."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.gitlab_commands.harness import CommandFake, CommandWorld
from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, create_sample_repo

__all__ = ["anthropic_fake", "forge_waits", "world"]


@pytest.fixture
def world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
          capfd: pytest.CaptureFixture[str], forge_waits: list[float]) -> Iterator[CommandWorld]:
    # A request past the end of a test's script gets a give_up; every test counts the requests.
    anthropic_fake.reply_always(model.give_up("(the scenario's script has no more answers)"))
    repo = create_sample_repo(tmp_path, PYTHON)
    with CommandFake(repo.origin) as gitlab:
        gitlab.now = datetime.now(UTC) - timedelta(hours=1)
        yield CommandWorld(tmp_path, repo, gitlab, anthropic_fake, monkeypatch, capfd)
    assert gitlab.failures == [], gitlab.failures
