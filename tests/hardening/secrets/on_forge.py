"""Canaries on a forge's job (either side of tests/hardening/platforms): the secrets ci-agent is
given there, and the places where none may show up afterwards."""

from __future__ import annotations

import pytest

from tests.hardening.platforms import Ran, Side
from tests.hardening.secrets.canaries import (
    ANNOTATIONS,
    COMMITS,
    CONSOLE,
    ENV_API_KEY,
    ENV_CUSTOM,
    ENV_FORGE_TOKEN,
    FORGE,
    GIT_CONFIG,
    MODEL,
    OUTPUTS,
    SUMMARY,
    Canary,
    annotation_lines,
    anthropic_key,
    console,
    custom_secret,
    read,
    request_text,
)


def env_canaries(side: Side, monkeypatch: pytest.MonkeyPatch) -> list[Canary]:
    """The API key, the forge token (of the forge's shape) and a custom secret, given to ci-agent
    as the forge gives them (GitHub: the action's inputs and the job's environment; GitLab: CI/CD
    variables)."""
    key, token, custom = anthropic_key(), side.fresh_token(), custom_secret()
    side.give_secrets(key, token, custom, monkeypatch)
    return [Canary(ENV_API_KEY, key), Canary(ENV_FORGE_TOKEN, token), Canary(ENV_CUSTOM, custom)]


def places(side: Side, run: Ran, commits: str, exclude_comment: int | None = None) -> dict[str, str]:
    """Where the canaries are looked for after `run`; GitHub's workflow commands make annotations
    too (GitLab has none)."""
    found = {MODEL: request_text(side.world.api.requests), FORGE: side.ours_on_forge(exclude_comment),
             SUMMARY: run.summary, OUTPUTS: run.outputs_text, CONSOLE: console(run.stdout, run.stderr),
             GIT_CONFIG: read(run.workspace / ".git" / "config"), COMMITS: commits}
    if side.name == "github":
        found[ANNOTATIONS] = annotation_lines(run.stdout)
    return found
