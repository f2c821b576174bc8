"""Scenario fixtures: the loopback Anthropic fake (tests/fakes) as ci-agent's model endpoint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.fixtures import anthropic_fake
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import DUMMY_KEY

# Sample templates (`samples/**/*.tmpl`, and the shim) are data, never this project's tests.
collect_ignore_glob = ["samples/*"]

__all__ = ["anthropic_fake", "api"]


@pytest.fixture
def api(anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AnthropicFake:
    """The fake as ci-agent's model endpoint, and an environment with nothing else of ours in it."""
    for name in list(os.environ):
        if name.startswith("CI_AGENT_") or name == "ANTHROPIC_BASE_URL":
            monkeypatch.delenv(name)
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    monkeypatch.setenv("CI_AGENT_ANTHROPIC_BASE_URL", anthropic_fake.base_url)
    # Third-party pytest plugins of this environment cost ~1 s per run; the samples need none.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.chdir(tmp_path)
    # A request past the end of a test's script gets a give_up (not a 500 the client would retry
    # for seconds); every test counts the requests, so an extra one still fails it.
    anthropic_fake.reply_always(model.give_up("(the scenario's script has no more answers)"))
    return anthropic_fake
