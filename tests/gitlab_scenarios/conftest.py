"""Fixtures of the GitLab scenarios: a `World` (sample repo + bare origin, GitLab fake, Anthropic
fake, runner directory) per test, built by `make_world(sample)`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.fixtures import anthropic_fake
from tests.fakes.gitlab_fake import GitLabFake
from tests.gitlab_scenarios.harness import World
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, Sample, create_sample_repo

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]

MakeWorld = Callable[..., World]


@pytest.fixture
def forge_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """GitLabForge with its retry waits recorded instead of slept: what it chose is read back,
    no test sleeps."""
    from ci_agent.platforms.gitlab.forge import GitLabForge

    waits: list[float] = []
    defaults = dict(GitLabForge.__init__.__kwdefaults__ or {})
    defaults.update(sleep=waits.append)
    monkeypatch.setattr(GitLabForge.__init__, "__kwdefaults__", defaults)
    return waits


@pytest.fixture
def make_world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
               capfd: pytest.CaptureFixture[str], forge_waits: list[float]) -> Iterator[MakeWorld]:
    fakes: list[GitLabFake] = []
    # A request past the end of a test's script gets a give_up (not a 500 the client would retry);
    # every test counts the requests, so an extra one still fails it.
    anthropic_fake.reply_always(model.give_up("(the scenario's script has no more answers)"))

    def build(sample: Sample = PYTHON, substitutions: dict[str, str] | None = None) -> World:
        repo = create_sample_repo(tmp_path, sample, substitutions)
        gitlab = GitLabFake(repo.origin)
        gitlab.__enter__()
        fakes.append(gitlab)
        return World(tmp_path, repo, gitlab, anthropic_fake, monkeypatch, capfd)

    yield build
    for gitlab in fakes:
        gitlab.__exit__(None, None, None)
        assert gitlab.failures == [], gitlab.failures


@pytest.fixture
def world(make_world: MakeWorld) -> World:
    return make_world()
