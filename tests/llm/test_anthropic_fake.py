"""The fake itself must be as strict as the real API, or the loop tests prove nothing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.fakes.anthropic_fake import AnthropicFake, message, text, tool_use

CC = {"type": "ephemeral"}
TOOL = {"name": "read_file", "description": "read", "input_schema": {"type": "object"}}


def _post(fake: AnthropicFake, body: Any, path: str = "/v1/messages",
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    hdrs = {"content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01"}
    hdrs.update(headers or {})
    req = urllib.request.Request(fake.base_url + path, json.dumps(body).encode(), hdrs, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 10, "messages": messages, **extra}


def _user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


def _assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content)}


def _result(tid: str, content: str = "x") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def _rejected(fake: AnthropicFake, body: Any, **kw: Any) -> str:
    status, payload = _post(fake, body, **kw)
    assert status == 400, payload
    assert payload["error"]["type"] == "invalid_request_error"
    return str(payload["error"]["message"])


def test_a_valid_tool_round_trip_is_answered(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(message(text("done")))
    body = _body([_user(text("hi")), _assistant(tool_use("read_file", {}, id="t1")),
                  _user(_result("t1"), text("more"))], tools=[TOOL])
    status, payload = _post(anthropic_fake, body)
    assert status == 200 and payload["content"] == [text("done")]
    assert anthropic_fake.message_requests == [body]


def test_missing_max_tokens(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi"))])
    del body["max_tokens"]
    assert _rejected(anthropic_fake, body) == "max_tokens: Field required"


def test_missing_model(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi"))])
    del body["model"]
    assert _rejected(anthropic_fake, body) == "model: Field required"


@pytest.mark.parametrize("roles", [["assistant"], ["user", "user"], ["user", "assistant", "assistant"]])
def test_roles_must_alternate_starting_with_user(anthropic_fake: AnthropicFake, roles: list[str]) -> None:
    body = _body([{"role": r, "content": "x"} for r in roles])
    assert "roles must alternate" in _rejected(anthropic_fake, body)


def test_final_assistant_turn_is_refused(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi")), _assistant(text("prefill"))])
    assert "final message must be a user message" in _rejected(anthropic_fake, body)


def test_dangling_tool_result_id(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi")), _assistant(tool_use("read_file", {}, id="t1")),
                  _user(_result("t2"))], tools=[TOOL])
    assert "unexpected `tool_use_id` found in `tool_result` blocks: t2" in _rejected(anthropic_fake, body)


def test_tool_use_left_unanswered(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi")),
                  _assistant(tool_use("read_file", {}, id="t1"), tool_use("read_file", {}, id="t2")),
                  _user(_result("t1"))], tools=[TOOL])
    assert "without `tool_result` blocks immediately after: ['t2']" in _rejected(anthropic_fake, body)


def test_tool_result_must_lead_the_user_turn(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi")), _assistant(tool_use("read_file", {}, id="t1")),
                  _user(text("note"), _result("t1"))], tools=[TOOL])
    assert "tool_result blocks must come first" in _rejected(anthropic_fake, body)


def test_tool_result_answering_an_older_turn(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi")), _assistant(tool_use("read_file", {}, id="t1")),
                  _user(_result("t1")), _assistant(text("thinking")), _user(_result("t1"))],
                 tools=[TOOL])
    assert "unexpected `tool_use_id`" in _rejected(anthropic_fake, body)


def test_tool_use_needs_tool_definitions(anthropic_fake: AnthropicFake) -> None:
    body = _body([_user(text("hi")), _assistant(tool_use("read_file", {}, id="t1")), _user(_result("t1"))])
    assert "must define `tools`" in _rejected(anthropic_fake, body)


def test_empty_text_block(anthropic_fake: AnthropicFake) -> None:
    assert "non-empty" in _rejected(anthropic_fake, _body([_user(text(""))]))


def test_at_most_four_cache_breakpoints(anthropic_fake: AnthropicFake) -> None:
    blocks = [{"type": "text", "text": f"b{i}", "cache_control": CC} for i in range(5)]
    assert "maximum of 4 blocks with cache_control" in _rejected(
        anthropic_fake, _body([_user(*blocks[:3])], system=blocks[3:]))
    anthropic_fake.reply(message(text("ok")))
    status, _ = _post(anthropic_fake, _body([_user(*blocks[:2])], system=blocks[2:4]))
    assert status == 200


def test_tool_definitions_are_checked(anthropic_fake: AnthropicFake) -> None:
    bad = {"name": "read file", "input_schema": {"type": "object"}}
    assert "tools.0.name" in _rejected(anthropic_fake, _body([_user(text("hi"))], tools=[bad]))
    assert "Tool names must be unique" in _rejected(
        anthropic_fake, _body([_user(text("hi"))], tools=[TOOL, TOOL]))


def test_unknown_top_level_field(anthropic_fake: AnthropicFake) -> None:
    assert "Extra inputs are not permitted" in _rejected(
        anthropic_fake, _body([_user(text("hi"))], temprature=0.5))


def test_missing_api_key_is_401(anthropic_fake: AnthropicFake) -> None:
    status, payload = _post(anthropic_fake, _body([_user(text("hi"))]), headers={"x-api-key": ""})
    assert status == 401 and payload["error"]["type"] == "authentication_error"


def test_a_rejected_request_consumes_no_scripted_reply(anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.reply(message(text("first")))
    _rejected(anthropic_fake, _body([_user(text(""))]))
    status, payload = _post(anthropic_fake, _body([_user(text("hi"))]))
    assert status == 200 and payload["content"] == [text("first")]


def test_unknown_route_is_404_and_a_recorded_failure() -> None:
    with AnthropicFake() as fake:
        status, payload = _post(fake, {}, path="/v1/complete")
    assert status == 404 and payload["error"]["type"] == "not_found_error"
    assert fake.failures == ["unexpected request POST /v1/complete"]


def test_an_unscripted_request_is_a_recorded_failure() -> None:
    with AnthropicFake() as fake:
        status, _ = _post(fake, _body([_user(text("hi"))]))
    assert status == 500
    assert fake.failures == ["a request arrived but no reply was scripted"]
