"""Plain values of the conversation with the model: no SDK, no I/O.

`ModelSettings` is what the config loader maps `.ci-agent.yml` onto; `AskResult` is what one
`ask_for_patch` conversation returns to the attempt engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ci_agent.config import GuidanceFile, thinking_budget_problem, thinking_mode_problem


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    # The API sends null for cache fields when caching did not apply.
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0  # cache writes
    cache_read_input_tokens: int = 0  # cache reads

    @classmethod
    def from_api(cls, usage: object) -> Usage:
        """The `usage` object of a Messages API response (missing or malformed fields are 0)."""
        if not isinstance(usage, Mapping):
            return cls()
        return cls(*(_count(usage, field.name) for field in fields(cls)))  # our names are the API's

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @property
    def total(self) -> int:
        """Every token the model processed: `input_tokens` excludes cached tokens, so the token
        cap counts cache writes and reads on top (a cache read is cheap, not free)."""
        return (self.input_tokens + self.output_tokens + self.cache_creation_input_tokens
                + self.cache_read_input_tokens)

    def to_json(self) -> dict[str, int]:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "total": self.total}


@dataclass(frozen=True, slots=True)
class PatchProposal:
    """A `submit_patch` answer that passed the structured-answer gates and `check`."""

    diff: str
    summary: str
    root_cause: str
    confidence: float  # after the cap
    raw_confidence: float  # as the model stated it (clamped to 0..1)
    assumptions: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    unverified_assumptions: int = 0
    gate_notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GiveUp:
    """The model declined (`give_up`), or the loop stopped at a cap; `reason` says which."""

    reason: str
    by_model: bool = True


@dataclass(frozen=True, slots=True)
class AskResult:
    answer: PatchProposal | GiveUp
    usage: Usage
    turns: int  # model calls made
    rejections: tuple[str, ...] = ()  # every rejection sent back to the model, in order
    # For an accepted patch: go on with the same conversation, the patch turned down with the given
    # text (the reviewer's revision request, `ci_agent.llm.loop`); None where that is not possible.
    resume: Callable[[str], AskResult] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ModelSettings:
    model: str
    max_turns: int = 8
    max_tokens: int = 8192  # per response
    max_total_tokens: int = 400_000  # per conversation, see Usage.total
    timeout_s: float = 300
    language: str = "en"  # a language code or name, or "match"
    notes: tuple[str, ...] = ()  # team notes for the system prompt
    guidance: tuple[GuidanceFile, ...] = ()  # AGENTS.md ... of the trusted side, raw (prompt.py fences them)
    # Extended thinking's token budget per response; 0 = off. Thinking tokens are output tokens,
    # so the budget is part of `max_tokens` and must stay below it (the API's rule).
    thinking_tokens: int = 0
    thinking: str = "off"  # "adaptive": the model decides how much to think (newest models)
    effort: str = ""  # the API's output_config.effort; "": not sent (the model's default)

    def __post_init__(self) -> None:
        problem = (thinking_budget_problem(self.thinking_tokens, self.max_tokens)
                   or thinking_mode_problem(self.thinking, self.thinking_tokens, self.effort))
        if problem:
            raise ValueError(problem)

