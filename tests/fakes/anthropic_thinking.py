"""Extended thinking in the Anthropic fake: the blocks it answers with and the API's rules for
sending them back, as the Messages API documents and enforces them (manual mode,
`thinking: {"type": "enabled", "budget_tokens": N}`):

- `budget_tokens` is at least 1024 and less than `max_tokens`;
- `tool_choice` may only be `auto` or `none` ("any" and "tool" force tool use, which thinking
  does not allow), and `temperature`, if set, is 1;
- while a tool-use cycle goes on (the last user turn answers tool calls), the assistant turn
  that made those calls must come back starting with its `thinking` / `redacted_thinking`
  blocks, unchanged: a block whose `signature` (or `data`) is not the one the fake issued is
  refused, so an edited, rebuilt or reordered block fails like it does on the real API;
- thinking blocks only ever appear in assistant turns.

The signature is a digest of the thinking text (the real one is an opaque cryptographic value):
`thinking("...")` makes a block the fake accepts back; changing its text breaks it.
"""

from __future__ import annotations

import hashlib
from typing import Any

MIN_BUDGET_TOKENS = 1024
THINKING_TYPES = ("thinking", "redacted_thinking")
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def _digest(kind: str, text: str) -> str:
    return hashlib.sha256(f"fake-{kind}:{text}".encode()).hexdigest()[:40]


def thinking(text: str) -> dict[str, Any]:
    """A `thinking` block as the API sends it, signed so the fake accepts it back unchanged."""
    return {"type": "thinking", "thinking": text, "signature": _digest("signature", text)}


def redacted_thinking(payload: str = "encrypted") -> dict[str, Any]:
    """A `redacted_thinking` block: opaque `data` the fake accepts back unchanged."""
    return {"type": "redacted_thinking", "data": f"{payload}.{_digest('data', payload)}"}


def _check_block(block: dict[str, Any], where: str) -> None:
    if block["type"] == "thinking":
        text, signature = block.get("thinking"), block.get("signature")
        if not isinstance(text, str) or not isinstance(signature, str):
            raise ValueError(f"{where}: thinking blocks need `thinking` and `signature` strings")
        if signature != _digest("signature", text):
            raise ValueError(f"{where}: Invalid `signature` in `thinking` block")
    else:
        data = block.get("data")
        payload, _, digest = data.rpartition(".") if isinstance(data, str) else ("", "", "")
        if not payload or digest != _digest("data", payload):
            raise ValueError(f"{where}: Invalid `data` in `redacted_thinking` block")


def enabled(body: dict[str, Any]) -> bool:
    """Thinking is on: a fixed budget or adaptive (the same rules for tool_choice and blocks)."""
    thinking_config = body.get("thinking")
    return isinstance(thinking_config, dict) and thinking_config.get("type") in ("enabled", "adaptive")


def _check_config(body: dict[str, Any]) -> None:
    config = body.get("thinking")
    if config is None:
        return
    if not isinstance(config, dict) or config.get("type") not in ("enabled", "disabled", "adaptive"):
        raise ValueError("thinking.type: Input tag does not match any of the expected tags: "
                         "'enabled', 'disabled', 'adaptive'")
    if config["type"] == "disabled":
        return
    if config["type"] == "adaptive":
        if "budget_tokens" in config:
            raise ValueError("thinking.adaptive.budget_tokens: Extra inputs are not permitted")
        _check_forced_tools_and_temperature(body)
        return
    budget = config.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise ValueError("thinking.enabled.budget_tokens: Field required")
    if budget < MIN_BUDGET_TOKENS:
        raise ValueError(f"thinking.enabled.budget_tokens: Input should be greater than or equal "
                         f"to {MIN_BUDGET_TOKENS}")
    if budget >= body["max_tokens"]:
        raise ValueError(f"`max_tokens` must be greater than `thinking.budget_tokens`. Please "
                         f"consult our documentation at {_DOCS}#max-tokens-and-context-window-size")
    _check_forced_tools_and_temperature(body)


def _check_forced_tools_and_temperature(body: dict[str, Any]) -> None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        raise ValueError("Thinking may not be enabled when tool_choice forces tool use.")
    if body.get("temperature", 1) != 1:
        raise ValueError("`temperature` may only be set to 1 when thinking is enabled.")


_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def _check_effort(body: dict[str, Any]) -> None:
    """`output_config.effort`, which steers how much adaptive thinking (and the answer) spends."""
    config = body.get("output_config")
    if config is None:
        return
    if not isinstance(config, dict) or set(config) - {"effort", "format"}:
        raise ValueError("output_config: Extra inputs are not permitted")
    if "effort" in config and config["effort"] not in _EFFORTS:
        raise ValueError("output_config.effort: Input should be " + ", ".join(f"'{e}'" for e in _EFFORTS[:-1])
                         + f" or '{_EFFORTS[-1]}'")


def _contents(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def validate_thinking(body: dict[str, Any]) -> None:
    """Raise ValueError with the API's message when `body` breaks a rule of extended thinking
    (call it once the messages are known to alternate, user first)."""
    _check_config(body)
    _check_effort(body)
    messages: list[dict[str, Any]] = body["messages"]
    for i, msg in enumerate(messages):
        for j, block in enumerate(_contents(msg)):
            if block.get("type") not in THINKING_TYPES:
                continue
            if msg["role"] != "assistant":
                raise ValueError(f"messages.{i}.content.{j}: thinking blocks are only allowed in "
                                 "assistant messages")
            _check_block(block, f"messages.{i}.content.{j}")
    last = _contents(messages[-1])
    if not enabled(body) or len(messages) < 2 or not any(b.get("type") == "tool_result" for b in last):
        return
    calls = _contents(messages[-2])
    first = calls[0].get("type") if calls else "nothing"
    if first not in THINKING_TYPES:
        raise ValueError(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final "
            "`assistant` message must start with a thinking block (preceeding the lastmost set of "
            "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
            f"previous turns. To avoid this requirement, disable `thinking`. Please consult our "
            f"documentation at {_DOCS}")


def misscripted(body: dict[str, Any], reply: dict[str, Any]) -> str:
    """Why a scripted reply could not come from the real API for `body`, or "": thinking blocks
    are only ever answered to a request that enabled thinking."""
    content = reply.get("content")
    blocks = content if isinstance(content, list) else []
    if not enabled(body) and any(isinstance(b, dict) and b.get("type") in THINKING_TYPES for b in blocks):
        return "a reply with thinking blocks was scripted for a request without thinking enabled"
    return ""
