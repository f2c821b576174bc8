"""The price table (issue 16): model ids matched to their rates, costs from the API's usage
fields, the config's `prices:` over the table, and unknown models priced at the dearest rates.
Expected amounts are worked out by hand from Anthropic's published rates, not by our code."""

from __future__ import annotations

import math

import pytest

from ci_agent.config import ModelPrice
from ci_agent.config.load import parse_settings, settings_from_layers
from ci_agent.errors import ConfigError
from ci_agent.llm.pricing import PRICES, Pricing, cost_usd, lookup, usd
from ci_agent.llm.types import Usage

MILLION = Usage(input_tokens=1_000_000)


@pytest.mark.parametrize(("model", "input_usd"), [
    ("claude-sonnet-4-5", 3.0),
    ("claude-sonnet-4-5-20250929", 3.0),  # a dated id continues its alias
    ("anthropic.claude-sonnet-4-5-20250929-v1:0", 3.0),  # Bedrock's wrapping
    ("claude-sonnet-4-5@20250929", 3.0),  # Vertex's
    ("claude-opus-4-5-20251101", 5.0),  # never the older, dearer Opus 4 it starts like
    ("claude-opus-4-20250514", 15.0),
    ("claude-opus-4-1-20250805", 15.0),
    ("claude-haiku-4-5-20251001", 1.0),
    ("claude-3-5-haiku-20241022", 0.80),
    ("claude-sonnet-5-5", 2.0),
    ("claude-opus-5-5", 4.0),
    ("CLAUDE-FABLE-5-1", 10.0),
])
def test_model_ids_find_their_rates(model: str, input_usd: float) -> None:
    assert Pricing.from_config().known(model)
    assert cost_usd(model, MILLION) == pytest.approx(input_usd)


def test_each_kind_of_token_has_its_rate() -> None:
    # Sonnet 4.5: $3 input, $3.75 5-minute cache write, $0.30 cache read, $15 output per MTok
    usage = Usage(input_tokens=2000, output_tokens=500, cache_creation_input_tokens=10_000,
                  cache_read_input_tokens=40_000)
    expected = (2000 * 3 + 500 * 15 + 10_000 * 3.75 + 40_000 * 0.30) / 1_000_000  # 0.063
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(expected)
    assert expected == pytest.approx(0.063)


def test_haiku_5_5_long_prompts_pay_the_upper_band_on_every_token() -> None:
    short = Usage(input_tokens=100_000, output_tokens=1000)
    long = Usage(input_tokens=60_000, cache_read_input_tokens=40_001, output_tokens=1000)
    assert cost_usd("claude-haiku-5-5", short) == pytest.approx((100_000 * 0.10 + 1000 * 0.50) / 1e6)
    assert cost_usd("claude-haiku-5-5", long) == pytest.approx(
        (60_000 * 0.50 + 40_001 * 0.05 + 1000 * 2.50) / 1e6)


def test_an_unknown_model_pays_the_dearest_rates_and_says_so() -> None:
    pricing = Pricing.from_config()
    assert not pricing.known("claude-test")
    rates = pricing.rates("claude-test")
    # Opus 4's $15 input, $18.75 cache write, $1.50 cache read and $75 output are the dearest
    assert (rates.input, rates.cache_write, rates.cache_read, rates.output) == (15, 18.75, 1.50, 75)
    note = pricing.unknown_note("claude-test")
    assert "'claude-test'" in note and "most expensive" in note and "prices:" in note
    assert pricing.unknown_note("claude-sonnet-4-5") == ""


def test_configured_prices_win_over_the_table_and_price_unknown_models() -> None:
    pricing = Pricing.from_config((ModelPrice("claude-sonnet-4-5", 1, 2, 0.5, 4),
                                   ModelPrice("claude-test", 0.5, 0.5, 0.5, 0.5)))
    usage = Usage(input_tokens=1000, output_tokens=1000)
    assert pricing.cost_usd("claude-sonnet-4-5-20250929", usage) == pytest.approx(0.005)
    assert pricing.cost_usd("claude-test", usage) == pytest.approx(0.001)
    assert pricing.unknown_note("claude-test") == ""


def test_every_table_rate_is_finite_and_its_alias_matches_itself() -> None:
    for key, rates in PRICES.items():
        assert lookup(key, PRICES) is rates
        assert all(math.isfinite(x) and x >= 0 for x in (rates.input, rates.cache_write,
                                                         rates.cache_read, rates.output))


def test_amounts_read_as_people_write_them() -> None:
    assert usd(0.01234) == "$0.0123"
    assert usd(12.5) == "$12.50"
    assert usd(0) == "$0.0000"


# --- the config's `prices:` ------------------------------------------------------------------

def test_prices_are_read_from_the_file() -> None:
    settings = parse_settings("prices:\n  claude-sonnet-4-5:\n    input: 2\n    cache_write: 2.5\n"
                              "    cache_read: 0.2\n    output: 10\n")
    assert settings.prices == (ModelPrice("claude-sonnet-4-5", 2.0, 2.5, 0.2, 10.0),)


def test_prices_from_the_environment_are_yaml() -> None:
    env = {"CI_AGENT_PRICES": "{my-model: {input: 1, cache_write: 1, cache_read: 0, output: 2}}"}
    assert settings_from_layers(None, env).prices == (ModelPrice("my-model", 1.0, 1.0, 0.0, 2.0),)


@pytest.mark.parametrize(("prices", "named"), [
    ({"m": {"input": 1, "cache_write": 1, "cache_read": 1, "output": 1, "outptu": 1}}, "'outptu'"),
    ({"m": {"input": 1, "cache_write": 1, "cache_read": 1}}, "prices.m.output is missing"),
    ({"m": {"input": float("inf"), "cache_write": 1, "cache_read": 1, "output": 1}}, "prices.m.input"),
    ({"m": {"input": float("nan"), "cache_write": 1, "cache_read": 1, "output": 1}}, "prices.m.input"),
    ({"m": {"input": 1, "cache_write": -0.5, "cache_read": 1, "output": 1}}, "prices.m.cache_write"),
    ({"m": {"input": 1, "cache_write": 1, "cache_read": True, "output": 1}}, "prices.m.cache_read"),
    ({"m": {"input": 1, "cache_write": 1, "cache_read": 1, "output": "5"}}, "prices.m.output"),
    ({"m": 3}, "prices.m must be a mapping"),
    (["m"], "prices must be a mapping"),
])
def test_bad_prices_are_config_errors_naming_the_key(prices: object, named: str) -> None:
    with pytest.raises(ConfigError, match="prices") as caught:
        settings_from_layers({"prices": prices})
    assert named in str(caught.value)
