"""The reviewer's side of the Anthropic fake (issue 16): a request that offers `submit_review`
is the adversarial reviewer's, answered from its own queue (`AnthropicFake.review(...)`), so the
fixer's scripted replies stay what every test scripted. With nothing queued the reviewer
approves with no issues — and reports no usage, so the token totals tests assert stay the
fixer's (a test that counts the reviewer's tokens scripts a review with `usage`)."""

from __future__ import annotations

import itertools
from typing import Any

REVIEW_TOOL = "submit_review"
_ids = itertools.count(1)


def is_review_request(body: object) -> bool:
    tools = body.get("tools") if isinstance(body, dict) else None
    return isinstance(tools, list) and any(isinstance(t, dict) and t.get("name") == REVIEW_TOOL
                                           for t in tools)


def issue(severity: str = "critical", dimension: str = "root_cause", message: str = "treats the symptom",
          file: str = "", line: int = 0) -> dict[str, Any]:
    return {"severity": severity, "dimension": dimension, "file": file, "line": line, "message": message}


def review_input(verdict: str = "approve", *issues: dict[str, Any], summary: str = "") -> dict[str, Any]:
    return {"verdict": verdict, "issues": list(issues),
            "summary": summary or {"approve": "The patch fixes the cause.", "revise": "Fix the issues first.",
                                   "reject": "The patch hides the failure."}.get(verdict, "?")}


def review_reply(verdict: str = "approve", *issues: dict[str, Any], summary: str = "",
                 usage: dict[str, int] | None = None, raw_input: Any = None) -> dict[str, Any]:
    """A reviewer's answer: a `submit_review` call (`raw_input` replaces its input verbatim, for
    hostile answers)."""
    tool_input = review_input(verdict, *issues, summary=summary) if raw_input is None else raw_input
    number = next(_ids)
    return {"id": f"msg_review_{number:06d}", "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": f"toolu_review_{number:06d}", "name": REVIEW_TOOL,
                         "input": tool_input}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, **(usage or {})}}


def default_review(body: dict[str, Any]) -> dict[str, Any]:
    return review_reply("approve")
