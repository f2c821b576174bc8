"""The metered model client (issue 16): the worst-case estimate before each call, the refusal
naming the cap, and the real cost added after. Boundaries are exact: a call that could end at
the cap is made, one a millionth of a cent over it is not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ci_agent.config import ModelPrice
from ci_agent.llm.metered import BRANCH, DAY, CapReached, Caps, Meter, MeteredClient
from ci_agent.llm.pricing import Pricing

# Sonnet 4.5: $3 input, $3.75 cache write, $0.30 cache read, $15 output per million tokens
MODEL = "claude-sonnet-4-5"


class ScriptedModel:
    """Answers each call with the next usage; records what was sent."""

    def __init__(self, *usages: dict[str, int]) -> None:
        self.usages = list(usages)
        self.sent: list[int] = []

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(len(request["messages"]))
        return {"content": [], "usage": self.usages.pop(0), "stop_reason": "end_turn"}


def request(text: str, max_tokens: int = 1000, turns: int = 1) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": text}] * turns}


def size(body: dict[str, Any]) -> int:
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8"))


def test_the_first_call_is_estimated_at_two_bytes_a_token_and_max_tokens_out() -> None:
    body = request("x" * 1000)
    tokens = -(-size(body) // 2)
    expected = tokens * 3.75 / 1e6 + 1000 * 15 / 1e6  # cache-write rate: the dearer input rate
    assert MeteredClient(ScriptedModel, Meter()).estimate(body) == pytest.approx(expected)


def test_a_call_that_could_end_exactly_at_the_cap_is_made_one_over_is_not() -> None:
    body = request("y" * 500)
    estimate = MeteredClient(ScriptedModel, Meter()).estimate(body)
    model = ScriptedModel({"input_tokens": 10, "output_tokens": 1})
    MeteredClient(lambda: model, Meter(caps=Caps(attempt=estimate))).create(body)
    assert model.sent == [1]
    refused = ScriptedModel()
    with pytest.raises(CapReached) as caught:
        MeteredClient(lambda: refused, Meter(caps=Caps(attempt=estimate - 1e-9))).create(body)
    assert refused.sent == []  # nothing was sent
    assert caught.value.cap == "attempt"
    assert "attempt cost cap" in str(caught.value) and "budget.max_cost_per_attempt_usd" in str(caught.value)


def test_later_calls_start_from_what_the_model_was_last_shown() -> None:
    model = ScriptedModel({"input_tokens": 1000, "cache_creation_input_tokens": 200,
                           "cache_read_input_tokens": 500, "output_tokens": 300},
                          {"input_tokens": 1, "output_tokens": 1})
    client = MeteredClient(lambda: model, Meter())
    first = request("z" * 100)
    client.create(first)
    second = request("z" * 100, turns=3)
    added = size(second) - size(first)
    expected = (1700 + -(-added // 2)) * 3.75 / 1e6 + 1000 * 15 / 1e6
    assert client.estimate(second) == pytest.approx(expected)
    # a new conversation (the reviewer's, the next attempt's) is a first call again
    assert client.estimate(request("q")) == pytest.approx(-(-size(request("q")) // 2) * 3.75 / 1e6 + 0.015)


def test_the_real_cost_is_added_after_each_call_per_attempt() -> None:
    usage = {"input_tokens": 2000, "output_tokens": 500, "cache_creation_input_tokens": 10_000,
             "cache_read_input_tokens": 40_000}
    meter = Meter()
    client = meter.client(lambda: ScriptedModel(usage, usage))
    meter.start_attempt(1)
    client.create(request("a"))
    meter.start_attempt(2)
    client.create(request("b"))
    # 2000*3 + 500*15 + 10000*3.75 + 40000*0.30 = 63000 micro-dollars per call
    assert meter.attempt_costs == {1: pytest.approx(0.063), 2: pytest.approx(0.063)}
    assert meter.run_cost == pytest.approx(0.126)
    assert meter.attempt_cost == pytest.approx(0.063)


@pytest.mark.parametrize(("caps", "cap"), [(Caps(branch=1.0), BRANCH), (Caps(day=1.0), DAY)])
def test_spending_before_this_run_counts_against_branch_and_day(caps: Caps, cap: str) -> None:
    body = request("c")
    estimate = MeteredClient(ScriptedModel, Meter()).estimate(body)
    meter = Meter(caps=caps, branch_before=1.0 - estimate, day_before=1.0 - estimate)
    MeteredClient(lambda: ScriptedModel({"input_tokens": 0}), meter).create(body)  # exactly at the cap: made
    meter.run_cost = 1e-9
    with pytest.raises(CapReached) as caught:
        meter.client(ScriptedModel).create(body)
    assert caught.value.cap == cap
    assert caught.value.limit == 1.0


def test_a_cap_already_reached_refuses_even_a_free_call_and_zero_is_no_cap() -> None:
    with pytest.raises(CapReached):
        Meter(caps=Caps(branch=5), branch_before=5.0 + 1e-9).check(0.0)
    Meter(caps=Caps(branch=5), branch_before=5.0).check(0.0)  # exactly at the cap: nothing more
    Meter(caps=Caps(), branch_before=500, day_before=500).check(100.0)  # 0: no cap


def test_an_unknown_model_is_priced_dear_and_said_once() -> None:
    said: list[str] = []
    meter = Meter(warn=said.append)
    client = meter.client(lambda: ScriptedModel({"output_tokens": 1000}, {"output_tokens": 1000}))
    body = {**request("d"), "model": "claude-test"}
    client.create(body)
    client.create(body)
    assert len(said) == 1 and "claude-test" in said[0]
    assert meter.run_cost == pytest.approx(2 * 1000 * 75 / 1e6)  # Opus 4's $75 output rate


def test_configured_prices_are_used() -> None:
    meter = Meter(Pricing.from_config((ModelPrice("claude-test", 1, 1, 1, 2),)))
    client = meter.client(lambda: ScriptedModel({"output_tokens": 1_000_000}))
    client.create({**request("e"), "model": "claude-test"})
    assert meter.run_cost == pytest.approx(2.0)
