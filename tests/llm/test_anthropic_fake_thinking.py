"""The fake enforces extended thinking's rules as the real API does (issue 15, defect 7), or the
loop's thinking tests prove nothing: budget, tool_choice, thinking blocks sent back unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from ci_agent.llm.anthropic_client import AnthropicClient
from tests.fakes.anthropic_fake import (
    AnthropicFake,
    message,
    redacted_thinking,
    text,
    thinking,
    tool_use,
    validate,
)

TOOL = {"name": "read_file", "description": "read", "input_schema": {"type": "object"}}
ON = {"type": "enabled", "budget_tokens": 1024}


def _body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 4096, "tools": [TOOL], "thinking": ON,
            "messages": list(messages), **extra}


def _user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


def _assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content)}


def _result(tid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": "x"}


def _cycle(*assistant: dict[str, Any]) -> dict[str, Any]:
    """A tool-use cycle in progress: the assistant's call and the user's tool_result."""
    return _body(_user(text("hi")), _assistant(*assistant, tool_use("read_file", {}, id="t1")),
                 _user(_result("t1")))


def test_a_cycle_with_its_thinking_blocks_sent_back_is_valid() -> None:
    assert validate(_cycle(thinking("Read the file first."), redacted_thinking())) is None
    assert validate(_cycle(redacted_thinking("opaque"))) is None
    assert validate(_body(_user(text("hi")), thinking={"type": "disabled"})) is None


@pytest.mark.parametrize(("change", "needle"), [
    ({"thinking": {"type": "enabled", "budget_tokens": 1023}}, "greater than or equal to 1024"),
    ({"thinking": {"type": "enabled", "budget_tokens": 4096}}, "`max_tokens` must be greater than"),
    ({"thinking": {"type": "enabled"}}, "budget_tokens: Field required"),
    ({"thinking": {"type": "on"}}, "thinking.type"),
    ({"tool_choice": {"type": "any"}}, "Thinking may not be enabled when tool_choice forces tool use"),
    ({"tool_choice": {"type": "tool", "name": "read_file"}}, "forces tool use"),
    ({"temperature": 0.2}, "temperature` may only be set to 1"),
    ({"thinking": {"type": "adaptive", "budget_tokens": 2048}}, "adaptive.budget_tokens: Extra inputs"),
    ({"thinking": {"type": "adaptive"}, "tool_choice": {"type": "any"}}, "forces tool use"),
    ({"thinking": {"type": "adaptive"}, "temperature": 0.5}, "temperature` may only be set to 1"),
    ({"output_config": {"effort": "extreme"}}, "output_config.effort: Input should be 'low'"),
    ({"output_config": {"speed": "fast"}}, "output_config: Extra inputs"),
])
def test_the_thinking_settings_follow_the_api(change: dict[str, Any], needle: str) -> None:
    assert needle in str(validate({**_body(_user(text("hi"))), **change}))


def test_auto_and_none_tool_choice_are_allowed_with_thinking() -> None:
    for choice in ("auto", "none"):
        assert validate(_body(_user(text("hi")), tool_choice={"type": choice})) is None


def test_the_calling_turn_must_start_with_its_thinking() -> None:
    problem = str(validate(_cycle()))
    assert problem.startswith("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, "
                              "but found `tool_use`.")
    assert "but found `text`" in str(validate(_cycle(text("Let me look."), thinking("t"))))
    # without thinking, or once the cycle is over, the blocks are not required
    assert validate({**_cycle(), "thinking": {"type": "disabled"}}) is None
    body = _cycle(thinking("t"))
    body["messages"] += [_assistant(text("done")), _user(text("thanks"))]
    assert validate(body) is None


def test_a_thinking_block_must_come_back_unchanged() -> None:
    edited = {**thinking("Read the file first."), "thinking": "Read the file first!"}
    assert "Invalid `signature` in `thinking` block" in str(validate(_cycle(edited)))
    unsigned = {"type": "thinking", "thinking": "t"}
    assert "need `thinking` and `signature`" in str(validate(_cycle(unsigned)))
    tampered = {"type": "redacted_thinking", "data": redacted_thinking()["data"] + "x"}
    assert "Invalid `data` in `redacted_thinking` block" in str(validate(_cycle(tampered)))


def test_thinking_blocks_only_in_assistant_turns() -> None:
    body = _body(_user(thinking("mine"), text("hi")))
    assert "only allowed in assistant messages" in str(validate(body))


def _client(fake: AnthropicFake) -> AnthropicClient:
    return AnthropicClient("sk-ant-test", base_url=fake.base_url, timeout_s=10, sleep=lambda s: None)


def test_answers_with_thinking_blocks_the_sdk_reads(anthropic_fake: AnthropicFake) -> None:
    blocks = [thinking("Look at calc.py."), redacted_thinking(), tool_use("read_file", {}, id="t9")]
    anthropic_fake.reply(message(*blocks))
    answer = _client(anthropic_fake).create(_body(_user(text("hi"))))
    assert answer["content"] == blocks  # through the SDK's types and back, field for field


def test_a_thinking_reply_to_a_request_without_thinking_is_a_failure() -> None:
    body = _body(_user(text("hi")))
    del body["thinking"]
    with AnthropicFake() as fake:
        fake.reply(message(thinking("t"), text("x")))
        _client(fake).create(body)
    assert fake.failures == ["a reply with thinking blocks was scripted for a request without "
                             "thinking enabled"]
