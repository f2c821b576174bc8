"""What a model call costs, in US dollars, from the Messages API's `usage` fields (issue 16).

Prices are USD per million tokens: base input, 5-minute cache write (the TTL ci-agent's cache
breakpoints use), cache read (hits and refreshes), output. Thinking tokens are billed as output
and are part of `output_tokens`.

Source: Anthropic's pricing page https://platform.claude.com/docs/en/about-claude/pricing and the
model overview pages under https://platform.claude.com/docs/en/models/ (Opus 5.5, Sonnet 5.5,
Sonnet 5, Haiku 5.5), as read on 2026-12-03. When a page and a later change disagreed, the table
keeps the higher rate: a cap priced low is a hope, one priced high only stops a little early.
A team with other rates (a discount, Bedrock or Vertex prices) sets `prices:` in the config.

A model id is matched to the longest table key it equals or continues at a `-`
(`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`, never `claude-sonnet-4`), after dropping a
cloud's wrapping (`anthropic.` before, `-v1:0` or `@20250929` after). A model neither the table
nor the config knows is priced at the most expensive rate of each kind the table knows, and
`Pricing.unknown_note` says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ci_agent.config import ModelPrice
from ci_agent.llm.types import Usage

MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per million tokens of each kind. `long_prompt_tokens` > 0: a request whose prompt
    (input + cache writes + cache reads) is larger pays `long` for every token of that call
    (Haiku 5.5's two bands)."""

    input: float
    cache_write: float
    cache_read: float
    output: float
    long_prompt_tokens: int = 0
    long: Rates | None = None

    @classmethod
    def of(cls, price: ModelPrice) -> Rates:
        return cls(price.input, price.cache_write, price.cache_read, price.output)

    def for_prompt(self, prompt_tokens: int) -> Rates:
        if self.long is not None and self.long_prompt_tokens and prompt_tokens > self.long_prompt_tokens:
            return self.long
        return self


def _flat(input_usd: float, cache_write: float, cache_read: float, output: float) -> Rates:
    return Rates(input_usd, cache_write, cache_read, output)


_OPUS_4 = _flat(15, 18.75, 1.50, 75)  # Opus 4, 4.1 and 3 (retired, still on some clouds)
_OPUS_45 = _flat(5, 6.25, 0.50, 25)  # Opus 4.5 to Opus 5
_SONNET_4 = _flat(3, 3.75, 0.30, 15)  # Sonnet 3.5 to 4.6
_SONNET_5 = _flat(2, 2.50, 0.20, 10)  # Sonnet 5 and 5.5 (5.5's overview page: $0.20 cache read)
_FABLE = _flat(10, 12.50, 1.00, 50)  # Fable 5 and Mythos 5

PRICES: Mapping[str, Rates] = {
    "claude-fable-5-1": _flat(10, 12.50, 0.25, 50),
    "claude-mythos-5-1": _flat(10, 12.50, 0.25, 50),
    "claude-fable-5": _FABLE,
    "claude-mythos-5": _FABLE,
    "claude-opus-5-5": _flat(4, 5.00, 0.20, 20),
    "claude-opus-5": _OPUS_45,
    "claude-opus-4-8": _OPUS_45,
    "claude-opus-4-7": _OPUS_45,
    "claude-opus-4-6": _OPUS_45,
    "claude-opus-4-5": _OPUS_45,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-3-opus": _OPUS_4,
    "claude-sonnet-5-5": _SONNET_5,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-sonnet-4": _SONNET_4,
    "claude-3-7-sonnet": _SONNET_4,
    "claude-3-5-sonnet": _SONNET_4,
    # Haiku 5.5: prompts over 100,000 tokens pay five times the rate on every token of the call
    "claude-haiku-5-5": Rates(0.10, 0.125, 0.01, 0.50, 100_000, _flat(0.50, 0.625, 0.05, 2.50)),
    "claude-haiku-4-5": _flat(1, 1.25, 0.10, 5),
    "claude-3-5-haiku": _flat(0.80, 1.00, 0.08, 4),
    "claude-3-haiku": _flat(0.25, 0.30, 0.03, 1.25),
}

# A cloud's wrapping around Anthropic's id: Bedrock `anthropic.claude-...-v1:0` (and regional
# `us.anthropic.`), Vertex `claude-...@20250929`, a `[1m]` context suffix.
_PREFIX = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.")
_SUFFIX = re.compile(r"(?:\[1m\]|-v\d+(?::\d+)?|@\d{8}|-latest)+$")


def normalise(model: str) -> str:
    return _SUFFIX.sub("", _PREFIX.sub("", model.strip().lower()))


def lookup(model: str, table: Mapping[str, Rates]) -> Rates | None:
    """The rates of the longest key `model` equals or continues at a `-` (so dated ids and
    aliases match, and `claude-opus-4-5-…` never lands on `claude-opus-4`)."""
    name = normalise(model)
    matches = [key for key in table
               if name == normalise(key) or name.startswith(normalise(key) + "-")]
    return table[max(matches, key=lambda key: len(normalise(key)))] if matches else None


def dearest(rates: Iterable[Rates]) -> Rates:
    """The most expensive rate of each kind (long-prompt bands included)."""
    every = [band for r in rates for band in (r, r.long) if band is not None]
    return Rates(max(r.input for r in every), max(r.cache_write for r in every),
                 max(r.cache_read for r in every), max(r.output for r in every))


def call_cost(rates: Rates, usage: Usage) -> float:
    """USD of one call's `usage` (the band chosen from that call's prompt size)."""
    prompt = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    band = rates.for_prompt(prompt)
    return (usage.input_tokens * band.input + usage.cache_creation_input_tokens * band.cache_write
            + usage.cache_read_input_tokens * band.cache_read + usage.output_tokens * band.output) / MILLION


@dataclass(frozen=True, slots=True)
class Pricing:
    """The built-in table with the config's `prices:` on top (a configured model wins)."""

    configured: Mapping[str, Rates]

    @classmethod
    def from_config(cls, prices: Iterable[ModelPrice] = ()) -> Pricing:
        return cls({p.model: Rates.of(p) for p in prices})

    def known(self, model: str) -> bool:
        return lookup(model, self.configured) is not None or lookup(model, PRICES) is not None

    def rates(self, model: str) -> Rates:
        """The model's rates; an unknown model pays the dearest rates known (see `unknown_note`)."""
        found = lookup(model, self.configured) or lookup(model, PRICES)
        return found if found is not None else dearest([*PRICES.values(), *self.configured.values()])

    def cost_usd(self, model: str, usage: Usage) -> float:
        return call_cost(self.rates(model), usage)

    def unknown_note(self, model: str) -> str:
        """"" for a model with a price; else the sentence that says how it is priced."""
        if self.known(model):
            return ""
        r = self.rates(model)
        return (f"no price is known for model {model!r}: it is priced at the most expensive rates "
                f"known (USD per million tokens: input {r.input:g}, cache write {r.cache_write:g}, "
                f"cache read {r.cache_read:g}, output {r.output:g}); set `prices:` in .ci-agent.yml "
                "to price it")


def cost_usd(model: str, usage: Usage, prices: Iterable[ModelPrice] = ()) -> float:
    """USD of `usage` on `model` (one call's usage: a long-prompt band applies per call)."""
    return Pricing.from_config(prices).cost_usd(model, usage)


def usd(amount: float) -> str:
    """An amount as people read it: `$0.0123` below a dollar (four places), else `$12.35`."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"

