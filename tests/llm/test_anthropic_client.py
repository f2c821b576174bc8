"""AnthropicClient through the real SDK against the loopback fake: retries and error sentences."""

from __future__ import annotations

from typing import Any

import pytest

from ci_agent.errors import ExitCode, ModelServiceError
from ci_agent.llm.anthropic_client import DEFAULT_MODEL, AnthropicClient, retry_after_seconds
from tests.fakes.anthropic_fake import (
    DROP,
    AnthropicFake,
    Fault,
    api_key_of,
    message,
    overloaded,
    rate_limited,
    server_error,
    text,
)


def _request(**extra: Any) -> dict[str, Any]:
    return {"model": DEFAULT_MODEL, "max_tokens": 64,
            "messages": [{"role": "user", "content": "hello"}], **extra}


def _client(fake: AnthropicFake, sleeps: list[float], **kw: Any) -> AnthropicClient:
    return AnthropicClient("sk-ant-test", base_url=fake.base_url, timeout_s=10,
                           sleep=sleeps.append, **kw)


def test_default_model_is_a_sonnet_from_the_sdk_list() -> None:
    assert DEFAULT_MODEL.startswith("claude-sonnet-")


def test_success_returns_the_message_json(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(message(text("hi"), usage={"input_tokens": 7}))
    sleeps: list[float] = []
    answer = _client(anthropic_fake, sleeps).create(_request())
    assert answer["content"] == [{"type": "text", "text": "hi"}]
    assert answer["usage"]["input_tokens"] == 7
    assert answer["model"] == DEFAULT_MODEL
    assert sleeps == []
    sent = anthropic_fake.requests[0]
    assert api_key_of(sent.headers) == "sk-ant-test"
    assert sent.body == _request()


def test_429_honours_retry_after_seconds(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(rate_limited("7"), message(text("ok")))
    sleeps: list[float] = []
    client = _client(anthropic_fake, sleeps)
    assert client.create(_request())["content"][0]["text"] == "ok"
    assert sleeps == [7.0]  # the delay the client chose, not a measured wall time
    assert client.waits == [7.0]
    assert len(anthropic_fake.requests) == 2


def test_retry_after_ms_wins_over_retry_after(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(rate_limited("9", ms="1500"), message(text("ok")))
    sleeps: list[float] = []
    _client(anthropic_fake, sleeps).create(_request())
    assert sleeps == [1.5]


def test_retry_after_as_http_date() -> None:
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"},
                               now=1445412480.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_529_is_retried_with_backoff(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(overloaded(), overloaded(), message(text("ok")))
    sleeps: list[float] = []
    _client(anthropic_fake, sleeps).create(_request())
    assert len(sleeps) == 2
    # backoff 1 s then 2 s, each with up to 25 % jitter taken off
    assert 0.75 <= sleeps[0] <= 1.0 and 1.5 <= sleeps[1] <= 2.0


def test_500_then_success(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(server_error(), message(text("ok")))
    sleeps: list[float] = []
    assert _client(anthropic_fake, sleeps).create(_request())["content"][0]["text"] == "ok"
    assert len(sleeps) == 1 and len(anthropic_fake.requests) == 2


def test_dropped_connection_then_success(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(DROP, message(text("ok")))
    sleeps: list[float] = []
    assert _client(anthropic_fake, sleeps).create(_request())["content"][0]["text"] == "ok"
    assert len(sleeps) == 1 and len(anthropic_fake.requests) == 2


def test_overloaded_after_bounded_attempts(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(*[overloaded()] * 3)
    sleeps: list[float] = []
    with pytest.raises(ModelServiceError) as caught:
        _client(anthropic_fake, sleeps, max_retries=2).create(_request())
    assert str(caught.value) == ("The Anthropic API stayed overloaded (529) after 3 attempts; "
                                 "try later.")
    assert caught.value.exit_code == ExitCode.EXTERNAL_SERVICE
    assert len(anthropic_fake.requests) == 3 and len(sleeps) == 2


def test_retry_after_beyond_the_total_wait_budget_stops_at_once(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(rate_limited("600"))
    sleeps: list[float] = []
    with pytest.raises(ModelServiceError, match=r"rate-limiting us \(429\)"):
        _client(anthropic_fake, sleeps, max_total_wait_s=60).create(_request())
    assert sleeps == [] and len(anthropic_fake.requests) == 1


def _fault_sentence(fake: AnthropicFake, fault: Fault) -> str:
    fake.reply(fault)
    sleeps: list[float] = []
    with pytest.raises(ModelServiceError) as caught:
        _client(fake, sleeps).create(_request())
    assert sleeps == [] and len(fake.requests) == 1  # not retried
    return str(caught.value)


@pytest.mark.parametrize(
    ("fault", "sentence"),
    [
        (Fault(401, "authentication_error", "invalid x-api-key"),
         "The Anthropic API rejected the API key (401); check ANTHROPIC_API_KEY."),
        (Fault(400, "invalid_request_error", "Your credit balance is too low to access the "
               "Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."),
         "The Anthropic account has no credit left; add credits under Plans & Billing in the "
         "Anthropic console."),
        (Fault(404, "not_found_error", f"model: {DEFAULT_MODEL}"),
         f"The Anthropic API does not know model '{DEFAULT_MODEL}' (404); set model.name in "
         ".ci-agent.yml or --model to a current model."),
        (Fault(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."),
         "The request is too large for the Anthropic API (413); lower context.max_bytes in "
         ".ci-agent.yml."),
    ],
    ids=["401-key", "400-credit", "404-model", "413-size"],
)
def test_errors_become_one_sentence(anthropic_fake: AnthropicFake, fault: Fault, sentence: str) -> None:
    assert _fault_sentence(anthropic_fake, fault) == sentence
    assert sentence.count(". ") == 0  # one sentence


def test_refusal_is_an_error(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(message(text("I can't"), stop_reason="refusal"))
    with pytest.raises(ModelServiceError, match=r'declined to answer this request \(stop_reason "refusal"\)'):
        _client(anthropic_fake, []).create(_request())


def test_an_invalid_request_is_not_retried_and_names_the_problem(anthropic_fake: AnthropicFake) -> None:
    body = _request(messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    sleeps: list[float] = []
    with pytest.raises(ModelServiceError, match=r"rejected the request \(400\): messages\.1\.role"):
        _client(anthropic_fake, sleeps).create(body)
    assert sleeps == [] and len(anthropic_fake.requests) == 1


def test_timeout_is_one_sentence(anthropic_fake: AnthropicFake) -> None:
    import time as _time

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        _time.sleep(0.5)
        return message(text("late"))

    anthropic_fake.reply(slow)
    client = AnthropicClient("k", base_url=anthropic_fake.base_url, timeout_s=0.1, sleep=lambda _s: None)
    with pytest.raises(ModelServiceError) as caught:
        client.create(_request())
    assert str(caught.value) == "The Anthropic API did not answer within 0.1 s (timeout_s)."


def test_dropped_every_time_says_where_and_how_often(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(DROP, DROP, DROP)
    sleeps: list[float] = []
    with pytest.raises(ModelServiceError) as caught:
        _client(anthropic_fake, sleeps, max_retries=2).create(_request())
    assert str(caught.value).startswith(f"Could not reach the Anthropic API at {anthropic_fake.base_url}")
    assert str(caught.value).endswith("after 3 attempts (Server disconnected without sending a response).")
    assert len(sleeps) == 2 and len(anthropic_fake.requests) == 3
