"""What a dry run shows in CI (`dry_run: true` on GitHub and GitLab): the request that would have
been sent to the model, as a person reads it (system text, the user turn, the tools offered), and
its size. Pure functions of the request body; the platforms print them (redacted) in the job log.

And what a dry run writes: nothing. `DryRunLedger` stands in for the ledger of `fix --local
--dry-run`, so the attempt engine records as always and no side record reaches the repository.

The token figure is an estimate (about four bytes of English text or code per token): the exact
count needs the model's tokenizer, and a dry run sends nothing anywhere to ask for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ci_agent.engine.budget import Event
from ci_agent.engine.ledger import Build, Ledger
from ci_agent.engine.state import Recorded
from ci_agent.llm.metered import Meter, MeteredClient
from ci_agent.llm.pricing import Pricing, usd

BYTES_PER_TOKEN = 4


def request_bytes(request: Mapping[str, Any]) -> int:
    """Size of the request body as JSON (compact, UTF-8), which is what goes over the wire."""
    return len(json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _texts(blocks: Any) -> list[str]:
    if isinstance(blocks, str):
        return [blocks]
    if not isinstance(blocks, list):
        return []
    return [str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]


def system_text(request: Mapping[str, Any]) -> str:
    return "\n\n".join(_texts(request.get("system")))


def user_text(request: Mapping[str, Any]) -> str:
    turns = [m for m in request.get("messages") or [] if isinstance(m, Mapping) and m.get("role") == "user"]
    return "\n\n".join(t for m in turns for t in _texts(m.get("content")))


def tool_names(request: Mapping[str, Any]) -> list[str]:
    return [str(t.get("name", "")) for t in request.get("tools") or [] if isinstance(t, Mapping)]


def estimated_tokens(request: Mapping[str, Any]) -> int:
    """What the model would read: the system and user text and the tool definitions."""
    tools = json.dumps(request.get("tools") or [], ensure_ascii=False, separators=(",", ":"))
    size = sum(len(t.encode("utf-8")) for t in (system_text(request), user_text(request), tools))
    return -(-size // BYTES_PER_TOKEN)


def estimated_cost(request: Mapping[str, Any], pricing: Pricing) -> float:
    """The first call's worst case in USD, by the rule the money caps apply before each call
    (`ci_agent.llm.metered`): bytes / 2 input tokens, a full `max_tokens` answer."""
    return MeteredClient(_Unsent, Meter(pricing)).estimate(dict(request))


def size_sentence(request: Mapping[str, Any], pricing: Pricing | None = None) -> str:
    return (f"the request is {request_bytes(request)} bytes, about {estimated_tokens(request)} tokens "
            f"(estimated), for model {request.get('model', '?')}, at most "
            f"{usd(estimated_cost(request, pricing or Pricing.from_config()))} for this first call")


class _Unsent:
    """A dry run's model client: nothing is ever sent."""

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("a dry run sends nothing")


def request_text(request: Mapping[str, Any]) -> str:
    """The request as a person reads it in a job log."""
    return (f"--- system ---\n{system_text(request)}\n\n--- user ---\n{user_text(request)}\n\n"
            f"--- tools: {', '.join(tool_names(request))} ---\n")



class DryRunLedger:
    """Reads what `ledger` holds; keeps what would have been recorded in `would_record`, in memory
    only, and never shows it to `events` (a dry run counts the budget as the real run would find
    it, and what it prints must not depend on writes that never happen)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self.would_record: list[tuple[str, Event]] = []

    def events(self) -> list[Event]:
        return self._ledger.events()

    def record(self, head: str, build: Build) -> Recorded:
        event = build(self.events())
        self.would_record.append((head, event))
        return Recorded(event, "")
