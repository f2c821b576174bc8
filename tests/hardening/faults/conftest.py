"""Fixtures of the fault-injection tests: the scenario worlds of tests/github_scenarios and
tests/gitlab_scenarios (imported, not copied), with every client's timeout made small and every
retry wait recorded instead of slept, through the `Waiting` the clients are built with."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_agent.retry import Waiting, waiting_as
from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.fixtures import anthropic_fake
from tests.fakes.gitlab_fake import GitLabFake
from tests.github_scenarios import harness as github
from tests.github_scenarios.fake_site import SiteFake
from tests.gitlab_scenarios import harness as gitlab
from tests.hardening.faults.matrix import CLIENT_TIMEOUT_S
from tests.scenarios.sample_repos import PYTHON, create_sample_repo

__all__ = ["anthropic_fake", "github_world", "gitlab_world", "waits"]


@pytest.fixture
def waits() -> Iterator[list[float]]:
    """Every retry wait any client chose (forges and model): recorded, never slept. The forges'
    timeout is `CLIENT_TIMEOUT_S`; the model's comes from `CI_AGENT_MODEL_TIMEOUT_S` in the job's
    environment."""
    chosen: list[float] = []
    with waiting_as(Waiting(sleep=chosen.append, pace=False, forge_timeout_s=CLIENT_TIMEOUT_S)):
        yield chosen


@pytest.fixture
def github_world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
                 capfd: pytest.CaptureFixture[str], waits: list[float]) -> Iterator[github.World]:
    repo = create_sample_repo(tmp_path, PYTHON)
    site = SiteFake(repo.origin)
    with site:
        yield github.World(tmp_path, repo, site, anthropic_fake, monkeypatch, capfd)
        assert site.failures == [], site.failures


@pytest.fixture
def gitlab_world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
                 capfd: pytest.CaptureFixture[str], waits: list[float]) -> Iterator[gitlab.World]:
    repo = create_sample_repo(tmp_path, PYTHON)
    with GitLabFake(repo.origin) as fake:
        yield gitlab.World(tmp_path, repo, fake, anthropic_fake, monkeypatch, capfd)
        assert fake.failures == [], fake.failures
