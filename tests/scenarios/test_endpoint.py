"""The Anthropic endpoint override the README documents (issue 13 point 14): `ANTHROPIC_BASE_URL`,
the SDK's own variable, sends the model requests elsewhere (a proxy, a gateway); ci-agent's
`CI_AGENT_ANTHROPIC_BASE_URL` wins over it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import fix, user_repo
from tests.scenarios.sample_repos import PYTHON


def _closed_port_url() -> str:
    """A loopback URL nothing listens on: a request sent there fails to connect."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_anthropic_base_url_alone_sends_the_requests_there(
        api: AnthropicFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CI_AGENT_ANTHROPIC_BASE_URL")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
    repo = user_repo(tmp_path, PYTHON)
    api.reply(model.give_up("Not enough to go on."))

    run = fix(repo, capfd)

    assert run.exit_code == 4, str(run)
    assert len(api.message_requests) == 1, "the request reached the endpoint ANTHROPIC_BASE_URL names"


def test_ci_agent_anthropic_base_url_wins_over_anthropic_base_url(
        api: AnthropicFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", _closed_port_url())  # CI_AGENT_... names the fake
    repo = user_repo(tmp_path, PYTHON)
    api.reply(model.give_up("Not enough to go on."))

    run = fix(repo, capfd)

    assert run.exit_code == 4, str(run)
    assert len(api.message_requests) == 1
