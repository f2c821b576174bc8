"""The production seams of the attempt engine (`ci_agent.engine.attempt.Seams`), shared by
`fix --local` and the CI cycle: the Anthropic client, the tool-use loop, the first request (for a
dry run), context gathering and redaction; and the model settings from the configuration."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ci_agent.config import Settings
from ci_agent.context import gather_context, render_context
from ci_agent.engine.attempt import Seams
from ci_agent.engine.money import new_meter
from ci_agent.errors import UsageError
from ci_agent.llm.client import ModelClient
from ci_agent.llm.loop import ask_for_patch, first_request
from ci_agent.llm.tools import RepoTools
from ci_agent.llm.types import AskResult, ModelSettings
from ci_agent.logguard import log_line
from ci_agent.redact import Redactor
from ci_agent.report import Report

API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "CI_AGENT_ANTHROPIC_BASE_URL"


def model_settings(settings: Settings, default_model: str) -> ModelSettings:
    m = settings.model
    return ModelSettings(model=m.name or default_model, max_turns=m.max_turns, max_tokens=m.max_tokens,
                         max_total_tokens=m.max_total_tokens, timeout_s=m.timeout_s,
                         language=settings.language, notes=settings.notes,
                         thinking_tokens=m.thinking_tokens, thinking=m.thinking, effort=m.effort,
                         guidance=settings.context.guidance)


def real_seams(settings: Settings, env: Mapping[str, str], redactor: Redactor,
               client_factory: Callable[[], ModelClient] | None = None) -> Seams:
    """The production seams: the Anthropic client (unless `client_factory` is given), the
    tool-use loop, context, redaction."""
    redact = redactor.redact

    def anthropic_client() -> ModelClient:
        # The SDK is imported only when a model call is about to happen: a dry run, an exhausted
        # budget and every other verb start without it.
        from ci_agent.llm.anthropic_client import AnthropicClient

        key = env.get(API_KEY_ENV, "")
        if not key:
            raise UsageError(f"{API_KEY_ENV} is not set; it is needed to ask Claude (--dry-run needs no key)")
        return AnthropicClient(key, base_url=env.get(BASE_URL_ENV) or None,
                               timeout_s=settings.model.timeout_s)

    def ask(client: ModelClient, model: ModelSettings, user_text: str, repo: Path,
            check: Callable[[str], list[str]], files: tuple[str, ...]) -> AskResult:
        tools = RepoTools(repo, settings.context.exclude_globs, redact)
        return ask_for_patch(client, model, user_text, tools, check, files, redact)

    def request(model: ModelSettings, user_text: str) -> dict[str, Any]:
        return first_request(model, user_text, redact)  # exactly what ask_for_patch sends first

    def context(repo: Path, report: Report) -> str:
        return render_context(gather_context(repo, report, settings.context, redactor))

    return Seams(client_factory or anthropic_client, ask, request, context, redact,
                 new_meter(settings, _warn))


def _warn(text: str) -> None:
    print(log_line(f"ci-agent: warning: {text}"), file=sys.stderr, flush=True)
