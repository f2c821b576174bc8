"""Scripted model behaviours: Messages API responses for the loopback fake, and request readers.

A behaviour is a `Script` (request body -> response body) queued on the fake, one per request.
Responses have the Messages API shape (`type: message`, `role: assistant`, `content` blocks
`text` / `tool_use {id, name, input}`, `stop_reason`, `usage` with the four token counts); the
fake fills `model` from the request. Every tool call gets a fresh `toolu_` id, so a conversation
can only succeed if ci-agent answers exactly that id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tests.fakes.anthropic_fake import Script, message, text, tool_use

Request = dict[str, Any]
Response = dict[str, Any]
# Plausible counts whose sums are recognisable in a summary (2 calls: 2468 input tokens).
USAGE = {"input_tokens": 1234, "output_tokens": 321, "cache_creation_input_tokens": 900,
         "cache_read_input_tokens": 0}


def _reply(*blocks: dict[str, Any]) -> Script:
    def script(request: Request) -> Response:
        return message(*blocks, usage=USAGE)

    return script


def read_file(path: str, note: str = "Let me read the file first.") -> Script:
    return _reply(text(note), tool_use("read_file", {"path": path}))


def submit_patch(diff: str, *, summary: str, root_cause: str, confidence: float = 0.8,
                 assumptions: Iterable[str] = (), open_questions: Iterable[str] = ()) -> Script:
    return _reply(text("Here is the fix."), tool_use("submit_patch", {
        "diff": diff, "summary": summary, "root_cause": root_cause, "confidence": confidence,
        "assumptions": list(assumptions), "open_questions": list(open_questions)}))


def give_up(reason: str) -> Script:
    return _reply(tool_use("give_up", {"reason": reason}))


# ------------------------------------------------------------------ reading recorded requests


def blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)]


def last_user_blocks(request: Request) -> list[dict[str, Any]]:
    users = [m for m in request["messages"] if m["role"] == "user"]
    return blocks(users[-1]["content"]) if users else []


def tool_results(request: Request) -> list[dict[str, Any]]:
    """The tool_result blocks that open the request's last user turn."""
    return [b for b in last_user_blocks(request) if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in blocks(content))


def first_user_text(request: Request) -> str:
    """The opening user turn: the failure report and context of this attempt."""
    first = request["messages"][0]
    return "\n".join(b.get("text", "") for b in blocks(first["content"]) if b.get("type") == "text")


def tool_calls(request: Request) -> list[dict[str, Any]]:
    """Every tool_use block the assistant made in this conversation so far."""
    return [b for m in request["messages"] if m["role"] == "assistant" for b in blocks(m["content"])
            if b.get("type") == "tool_use"]


def is_new_conversation(request: Request) -> bool:
    return len(request["messages"]) == 1
