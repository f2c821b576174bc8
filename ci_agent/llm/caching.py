"""Where prompt-cache breakpoints go: only where they can pay off for the chosen model.

How the API caches (https://platform.claude.com/docs/en/build-with-claude/prompt-caching): a
`cache_control` breakpoint caches the prefix up to its block, in the order tools, system,
messages; a prefix shorter than the model's minimum cacheable length is not cached at all (no
error, no charge: both usage counters stay 0). Writing a cache entry costs 1.25x the base input
price, reading one 0.1x. At most 4 breakpoints per request; a breakpoint finds an earlier entry
only within 20 content blocks before it.

Our prefix has two stable parts and one growing one:
- tools + system (rules, team notes, repository guidance): the same for every attempt on a
  repository, so a breakpoint on the last system block is read by every later attempt and run
  within the cache's lifetime. It is placed only when the estimated prefix meets the minimum.
- the conversation: each request repeats every earlier turn. The newest user turn carries the
  moving breakpoint, written now and read by the next request. It is placed only when a next
  request can come (not on the last turn `max_turns` allows, nor when this request uses up what
  `max_total_tokens` leaves) and the prefix meets the minimum.
  Why also on the FIRST user turn, though a conversation may end in one turn: a tool-use loop
  almost always goes on (the model reads files before it patches; a rejected patch comes back).
  The write costs 0.25x of the turn extra; a second request reads it at 0.1x instead of 1x, so
  the breakpoint pays as soon as a second request follows in more than 28% of conversations
  (0.25 < 0.9 p). One with `max_turns` 1 never has a second request, so it gets none.
- the previous request's breakpoint stays where it was: that is the entry this request reads,
  and a turn with many parallel tool calls adds more than the API's 20-block lookback.
So a request carries at most 3 breakpoints (system, previous turn, newest turn).

The token count is estimated offline (no request to the token-counting endpoint): UTF-8 bytes of
the JSON as sent, divided by 4. Claude's tokenizers give more tokens than that for code, JSON
and most languages, and the API adds its own tool-use system prompt to the prefix, so the
estimate is low: a breakpoint is dropped only when the prefix is clearly short.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
BYTES_PER_TOKEN = 4

# Minimum cacheable prompt length by model family and version, from the "Cache limitations"
# section of https://platform.claude.com/docs/en/build-with-claude/prompt-caching and
# https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-8 (Opus 4.8 lowered
# it to 1024). Keys: (family, major, minor); minor None covers every minor version of a major
# one not listed. Sources disagree on Opus 4.7 (2048 or 4096): the lower figure is taken, since
# a breakpoint under the real minimum caches and costs nothing, while one wrongly dropped loses
# the savings.
MIN_CACHEABLE_TOKENS: dict[tuple[str, int, int | None], int] = {
    ("haiku", 3, None): 2048,  # Haiku 3 and 3.5
    ("haiku", 4, None): 4096,  # Haiku 4.5
    ("sonnet", 3, None): 1024,  # Sonnet 3.5, 3.7
    ("sonnet", 4, None): 1024,  # Sonnet 4, 4.5, 4.6
    ("sonnet", 5, None): 1024,
    ("opus", 3, None): 1024,
    ("opus", 4, None): 1024,  # Opus 4, 4.1, 4.8
    ("opus", 4, 5): 4096,
    ("opus", 4, 6): 4096,
    ("opus", 4, 7): 2048,
    ("opus", 5, None): 512,
}
# A model the table does not know (a newer family, a proxy's alias): the most common minimum.
DEFAULT_MIN_CACHEABLE_TOKENS = 1024

_FAMILY_FIRST = re.compile(r"claude-(haiku|sonnet|opus)-(\d+)(?:[-.](\d{1,2})(?!\d))?")
_VERSION_FIRST = re.compile(r"claude-(\d+)(?:[-.](\d{1,2}))?-(haiku|sonnet|opus)")


def model_version(model: str) -> tuple[str, int, int] | None:
    """(family, major, minor) of a Claude model id, whatever wraps it (`claude-opus-4-6`,
    `claude-3-5-haiku-20241022`, `anthropic.claude-sonnet-4-5-20250929-v1:0`,
    `claude-sonnet-4-5@20250929`); None when it names no Claude family. A date is no minor."""
    name = model.casefold()
    found = _FAMILY_FIRST.search(name)
    if found:
        return found[1], int(found[2]), int(found[3] or 0)
    found = _VERSION_FIRST.search(name)
    if found:
        return found[3], int(found[1]), int(found[2] or 0)
    return None


def min_cacheable_tokens(model: str) -> int:
    version = model_version(model)
    if version is None:
        return DEFAULT_MIN_CACHEABLE_TOKENS
    family, major, minor = version
    exact = MIN_CACHEABLE_TOKENS.get((family, major, minor))
    if exact is not None:
        return exact
    return MIN_CACHEABLE_TOKENS.get((family, major, None), DEFAULT_MIN_CACHEABLE_TOKENS)


def estimate_tokens(*parts: Any) -> int:
    """Tokens of `parts` as the API reads them, estimated low: JSON bytes / 4 (see the module)."""
    size = sum(len(json.dumps(p, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
               for p in parts)
    return size // BYTES_PER_TOKEN


def _clear(blocks: Iterable[dict[str, Any]]) -> None:
    for block in blocks:
        block.pop("cache_control", None)


def place_breakpoints(request: dict[str, Any], later_request: bool, tokens_left: int | None = None) -> None:
    """Set every `cache_control` of `request` (a Messages API body, changed in place) as the
    module says. `later_request`: the turn cap allows another request of this conversation;
    `tokens_left`: what the token cap leaves, which no later request sees when this one (its
    low estimate) uses it up."""
    system: list[dict[str, Any]] = request["system"]
    messages: list[dict[str, Any]] = request["messages"]
    _clear(system)
    for msg in messages:
        _clear(msg["content"])
    minimum = min_cacheable_tokens(request["model"])
    stable = estimate_tokens(request.get("tools", []), system)
    if tokens_left is not None and estimate_tokens(request.get("tools", []), system, messages) >= tokens_left:
        later_request = False
    if system and stable >= minimum:
        system[-1]["cache_control"] = dict(EPHEMERAL)
    # The user turns that may carry a breakpoint: the newest (when a later request can read it)
    # and the one the previous request wrote (two messages back: its answer sits in between).
    candidates = [len(messages) - 3] if len(messages) >= 3 else []
    if later_request:
        candidates.append(len(messages) - 1)
    for index in candidates:
        if stable + estimate_tokens(messages[: index + 1]) >= minimum:
            messages[index]["content"][-1]["cache_control"] = dict(EPHEMERAL)


def breakpoint_count(node: Any) -> int:
    """How many `cache_control` breakpoints a request (or any part of one) carries."""
    if isinstance(node, dict):
        own = 1 if node.get("cache_control") is not None else 0
        return own + sum(breakpoint_count(v) for k, v in node.items() if k != "cache_control")
    if isinstance(node, list):
        return sum(breakpoint_count(v) for v in node)
    return 0
