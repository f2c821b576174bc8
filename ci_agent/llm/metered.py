"""Money caps at the model seam (issue 16): every model call of an attempt (the fixer's turns and
the reviewer's) goes through one `MeteredClient`, which refuses a call that could take spending
past a cap and adds each call's real cost after it.

The estimate of a call's worst case, before it is sent:
- input tokens: for the first call of a conversation, the request's JSON size in bytes / 2; for
  a later call (more messages than the previous request, no fewer bytes), the previous
  response's `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` (what the
  model was last shown) plus (this request's bytes - the previous request's bytes) / 2; both
  rounded up.
  Two bytes per token over-counts every tokenizer we know of (English text is about four), so
  the estimate is above the real count;
- every input token priced at the dearer of the input and cache-write rates (a call may write
  its whole prompt to the cache), in the long-prompt band when the estimate falls in it;
- output tokens: the request's `max_tokens`, at the output rate.
A call is refused when, for any cap (> 0), spent + estimate > cap: a call that could end exactly
at the cap is made. The real cost is `pricing.call_cost` of the response's `usage`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ci_agent.errors import CiAgentError
from ci_agent.llm.client import ModelClient
from ci_agent.llm.pricing import Pricing, Rates, usd
from ci_agent.llm.types import Usage

ATTEMPT, BRANCH, DAY = "attempt", "fix branch", "day"
_NO_USAGE = Usage()
_CAP_KEYS = {ATTEMPT: "max_cost_per_attempt_usd", BRANCH: "max_cost_per_branch_usd",
             DAY: "max_cost_per_day_usd"}


class CapReached(CiAgentError):
    """A model call refused before it was sent: it could take spending past `cap`."""

    def __init__(self, cap: str, spent: float, limit: float, estimate: float, why: str = "") -> None:
        self.cap, self.spent, self.limit, self.estimate = cap, spent, limit, estimate
        super().__init__(why or cap_sentence(cap, spent, limit, estimate))


def cap_sentence(cap: str, spent: float, limit: float, estimate: float) -> str:
    where = {ATTEMPT: "this attempt", BRANCH: "this fix branch", DAY: "this repository today (UTC)"}[cap]
    then = f", and the next call could cost up to {usd(estimate)}" if estimate else ""
    return (f"the {cap} cost cap stopped ci-agent before a model call: {usd(spent)} spent on {where}, "
            f"cap {usd(limit)} (budget.{_CAP_KEYS[cap]}){then}")


@dataclass(frozen=True, slots=True)
class Caps:
    """USD; 0: no cap."""

    attempt: float = 0.0
    branch: float = 0.0
    day: float = 0.0


def request_bytes(request: dict[str, Any]) -> int:
    return len(json.dumps(request, ensure_ascii=False).encode("utf-8"))


def worst_case(rates: Rates, input_tokens: int, max_tokens: int) -> float:
    """USD of a call with `input_tokens` of prompt and a full `max_tokens` answer, every prompt
    token at the dearer of the input and cache-write rates."""
    band = rates.for_prompt(input_tokens)
    return (input_tokens * max(band.input, band.cache_write) + max_tokens * band.output) / 1_000_000


@dataclass
class Meter:
    """Spending of one run against the caps. `branch_before` and `day_before` are what was spent
    before this run (the fix branch's ledger, the day's); the attempt's count starts at each
    `start_attempt`. `warn` is told once about a model with no known price. `blocked`: a cap
    that stands before any call (a mark in the ledgers, an unreadable day ledger): every call is
    refused with it."""

    pricing: Pricing = field(default_factory=Pricing.from_config)
    caps: Caps = field(default_factory=Caps)
    branch_before: float = 0.0
    day_before: float = 0.0
    warn: Callable[[str], None] = lambda _: None
    run_cost: float = 0.0  # this run's calls
    attempt_cost: float = 0.0
    attempt: int = 0
    attempt_costs: dict[int, float] = field(default_factory=dict)  # attempt number -> USD
    attempt_usage: dict[int, Usage] = field(default_factory=dict)
    attempt_calls: dict[int, int] = field(default_factory=dict)
    blocked: CapReached | None = None
    _warned: set[str] = field(default_factory=set)

    def start_attempt(self, number: int) -> None:
        self.attempt, self.attempt_cost = number, 0.0

    def spent(self) -> dict[str, float]:
        return {ATTEMPT: self.attempt_cost, BRANCH: self.branch_before + self.run_cost,
                DAY: self.day_before + self.run_cost}

    def limits(self) -> dict[str, float]:
        return {ATTEMPT: self.caps.attempt, BRANCH: self.caps.branch, DAY: self.caps.day}

    def rates(self, model: str) -> Rates:
        note = self.pricing.unknown_note(model)
        if note and model not in self._warned:
            self._warned.add(model)
            self.warn(note)
        return self.pricing.rates(model)

    def check(self, estimate: float) -> None:
        """Raise `CapReached` for the first cap (attempt, fix branch, day) `estimate` would pass."""
        if self.blocked is not None:
            raise self.blocked
        spent, limits = self.spent(), self.limits()
        for cap in (ATTEMPT, BRANCH, DAY):
            if limits[cap] > 0 and spent[cap] + estimate > limits[cap]:
                raise CapReached(cap, spent[cap], limits[cap], estimate)

    def add(self, cost: float, usage: Usage = _NO_USAGE) -> None:
        self.run_cost += cost
        self.attempt_cost += cost
        self.attempt_costs[self.attempt] = self.attempt_costs.get(self.attempt, 0.0) + cost
        self.attempt_usage[self.attempt] = self.attempt_usage.get(self.attempt, Usage()) + usage
        self.attempt_calls[self.attempt] = self.attempt_calls.get(self.attempt, 0) + 1

    def client(self, make: Callable[[], ModelClient]) -> MeteredClient:
        return MeteredClient(make, self)


class MeteredClient:
    """A `ModelClient` that asks `meter` before each call and tells it the cost after. The inner
    client is made (`make`) only once a call passed the caps: a capped run needs no API key."""

    def __init__(self, make: Callable[[], ModelClient], meter: Meter) -> None:
        self.make, self.meter = make, meter
        self.inner: ModelClient | None = None
        self._last_bytes = self._last_messages = 0
        self._last_prompt = 0  # the previous response's input + cache tokens (0: no call yet)
        self.usage = Usage()

    def estimate(self, request: dict[str, Any]) -> float:
        """The worst-case USD of sending `request` (the module docstring's rule)."""
        size = request_bytes(request)
        if self._last_prompt and _messages(request) > self._last_messages and size >= self._last_bytes:
            tokens = self._last_prompt + math.ceil(max(0, size - self._last_bytes) / 2)
        else:
            tokens = math.ceil(size / 2)
        max_tokens = request.get("max_tokens")
        out = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 0
        return worst_case(self.meter.rates(str(request.get("model", ""))), tokens, out)

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        self.meter.check(self.estimate(request))
        size = request_bytes(request)
        if self.inner is None:
            self.inner = self.make()
        response = self.inner.create(request)
        usage = Usage.from_api(response.get("usage"))
        self.usage += usage
        self.meter.add(self.meter.pricing.cost_usd(str(request.get("model", "")), usage), usage)
        self._last_bytes, self._last_messages = size, _messages(request)
        self._last_prompt = (usage.input_tokens + usage.cache_creation_input_tokens
                             + usage.cache_read_input_tokens)
        return response


def _messages(request: dict[str, Any]) -> int:
    messages = request.get("messages")
    return len(messages) if isinstance(messages, list) else 0
