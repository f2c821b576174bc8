"""One review: the request sent through the same `ModelClient` seam as the fixer's calls (so
whatever wraps that seam — pricing, caps — sees it too), the answer read as hostile input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ci_agent.errors import ModelServiceError
from ci_agent.llm.client import ModelClient
from ci_agent.llm.types import Usage
from ci_agent.review.request import TOOL_NAME
from ci_agent.review.verdict import Review, no_verdict, read_review


@dataclass(frozen=True, slots=True)
class Reviewed:
    review: Review
    usage: Usage
    calls: int = 1


def read_answer(response: dict[str, Any]) -> Review:
    """The review in a Messages API response; no verdict when there is no complete call of
    `submit_review` (an answer cut off at max_tokens may hold a truncated one)."""
    if response.get("stop_reason") == "max_tokens":
        return no_verdict("the review was cut off at max_tokens")
    content = response.get("content")
    calls = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
             and b.get("name") == TOOL_NAME] if isinstance(content, list) else []
    if not calls:
        return no_verdict("the reviewer answered without submit_review")
    if len(calls) > 1:
        return no_verdict("the reviewer called submit_review more than once")
    return read_review(calls[0].get("input"))


def ask_review(client: ModelClient, request: dict[str, Any]) -> Reviewed:
    """The review of one patch. A service error is no verdict (the patch goes on, capped), not a
    failed attempt: the patch was not judged."""
    try:
        response = client.create(request)
    except ModelServiceError as error:
        return Reviewed(no_verdict(f"the review call failed: {error}"), Usage(), 1)
    return Reviewed(read_answer(response), Usage.from_api(response.get("usage")))
