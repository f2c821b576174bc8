"""The Messages API's prompt cache, as the loopback fake reports it in `usage` (opt-in:
`AnthropicFake.prompt_cache = PromptCache(...)`).

What the real API does (https://platform.claude.com/docs/en/build-with-claude/prompt-caching),
kept to what our requests exercise:
- the prompt is a sequence of blocks, tools first, then system, then the messages' content
  blocks; a `cache_control` breakpoint marks the prefix up to its block (the model is part of
  the key: another model never reads the entry);
- a breakpoint whose prefix is shorter than the model's minimum writes nothing;
- a breakpoint reads the longest prefix written before, looking back at most 20 blocks from it;
- what the request's breakpoints cover beyond that read is written (`cache_creation_input_tokens`),
  the rest of the prompt is `input_tokens`.
Tokens are counted by the fake's own rule, one per 3 bytes of a block's JSON: denser than
ci-agent's bytes/4 estimate, as real tokenizers are, so a breakpoint ci-agent places after a
long enough prefix is long enough here too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

LOOKBACK_BLOCKS = 20
BYTES_PER_TOKEN = 3


def _plain(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def blocks_of(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """(block without its cache_control, has a breakpoint) in the order the API reads them."""
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    found: list[tuple[Any, bool]] = []
    for block in [*body.get("tools", []), *system]:
        found.append((_plain(block), block.get("cache_control") is not None))
    for msg in body["messages"]:
        content = msg["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            found.append(({"role": msg["role"], **_plain(block)}, block.get("cache_control") is not None))
    return found


def tokens(block: Any) -> int:
    size = len(json.dumps(block, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return -(-size // BYTES_PER_TOKEN)


class PromptCache:
    """Entries written by earlier requests; `usage(body)` answers one request and writes its own."""

    def __init__(self, minimum: Callable[[str], int]) -> None:
        self.minimum = minimum
        self.entries: dict[str, int] = {}  # prefix key -> tokens of the prefix
        self.answered: list[dict[str, int]] = []  # the usage figures of each request, in order

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        blocks = blocks_of(body)
        keys: list[str] = []
        sizes: list[int] = []
        digest = hashlib.sha256(str(body["model"]).encode())
        for block, _ in blocks:
            digest.update(json.dumps(block, sort_keys=True).encode())
            keys.append(digest.copy().hexdigest())
            sizes.append((sizes[-1] if sizes else 0) + tokens(block))
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        read = 0
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK_BLOCKS), -1):
                if keys[i] in self.entries:
                    read = max(read, sizes[i])
                    break
        written = [i for i in marks if sizes[i] >= self.minimum(str(body["model"]))]
        for i in written:
            self.entries[keys[i]] = sizes[i]
        write = max(0, max((sizes[i] for i in written), default=0) - read)
        total = sizes[-1] if sizes else 0
        answer = {"input_tokens": total - read - write, "cache_creation_input_tokens": write,
                  "cache_read_input_tokens": read}
        self.answered.append(answer)
        return answer
