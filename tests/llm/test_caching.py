"""Prompt-cache breakpoints only where they can pay off (issue 15, defect 8), and the usage the
strict fake reports for them as the API's cache would (tests/fakes/prompt_cache.py)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ci_agent.config import GuidanceFile
from ci_agent.llm import ModelSettings, RepoTools, Usage, ask_for_patch, first_request
from ci_agent.llm.anthropic_client import AnthropicClient
from ci_agent.llm.caching import (
    breakpoint_count,
    estimate_tokens,
    min_cacheable_tokens,
    model_version,
    place_breakpoints,
)
from ci_agent.llm.prompt import system_blocks, tool_definitions
from tests.fakes.anthropic_fake import AnthropicFake, message, tool_use
from tests.fakes.prompt_cache import PromptCache

BIG_REPORT = "## Failure report\n" + "tests/test_calc.py::test_add failed: assert -1 == 3\n" * 400


def _same(text: str) -> str:
    return text


def _marks(request: dict[str, Any]) -> tuple[bool, list[int]]:
    """(the last system block is marked, indices of the marked messages)."""
    return (bool(request["system"][-1].get("cache_control")),
            [i for i, m in enumerate(request["messages"]) if breakpoint_count(m)])


@pytest.mark.parametrize(("model", "minimum"), [
    ("claude-sonnet-4-5-20250929", 1024),
    ("claude-sonnet-4-6", 1024),
    ("claude-sonnet-5-5", 1024),
    ("claude-opus-4-20250514", 1024),
    ("claude-opus-4-1-20250805", 1024),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-5-20251101", 4096),
    ("claude-opus-4-7", 2048),
    ("claude-opus-4-8", 1024),
    ("claude-haiku-4-5", 4096),
    ("claude-haiku-4-5-20251001", 4096),
    ("claude-3-5-haiku-20241022", 2048),
    ("claude-3-haiku-20240307", 2048),
    ("claude-3-7-sonnet-20250219", 1024),
    ("anthropic.claude-haiku-4-5-20251001-v1:0", 4096),  # Bedrock
    ("claude-opus-4-6@20260101", 4096),  # Vertex
    ("my-proxy-model", 1024),  # unknown: the most common minimum
])
def test_minimum_cacheable_length_by_model(model: str, minimum: int) -> None:
    assert min_cacheable_tokens(model) == minimum


def test_a_date_is_no_minor_version() -> None:
    assert model_version("claude-opus-4-20250514") == ("opus", 4, 0)
    assert model_version("claude-3-5-haiku-latest") == ("haiku", 3, 5)


def test_the_estimate_is_json_bytes_over_four() -> None:
    assert estimate_tokens("a" * 398) == 100  # 400 bytes with the quotes
    assert estimate_tokens("é" * 199) == 100  # two bytes each: multibyte text counts its bytes
    assert estimate_tokens({"a": 1}, [2]) == (7 + 3) // 4


def _request(model: str, user: str, guidance: tuple[GuidanceFile, ...] = (), max_turns: int = 8,
             max_total_tokens: int = 400_000) -> dict[str, Any]:
    settings = ModelSettings(model, max_turns=max_turns, guidance=guidance, max_total_tokens=max_total_tokens)
    return first_request(settings, user, _same)


def test_the_stable_prefix_is_marked_only_when_it_meets_the_models_minimum() -> None:
    stable = estimate_tokens(tool_definitions(), system_blocks(ModelSettings("m")))
    assert 1024 <= stable < 2048, "the premise: today's tools + rules are ~1.2k tokens"
    assert _marks(_request("claude-sonnet-4-5", BIG_REPORT)) == (True, [0])
    # Haiku 4.5 caches nothing under 4096 tokens: no breakpoint on the stable prefix alone ...
    assert _marks(_request("claude-haiku-4-5", BIG_REPORT)) == (False, [0])
    # ... until the repository guidance makes it long enough (the reason it sits in the prefix)
    guidance = (GuidanceFile("AGENTS.md", "Build with `make`; tests live in tests/.\n" * 300, 12_300),)
    assert _marks(_request("claude-haiku-4-5", BIG_REPORT, guidance)) == (True, [0])


def test_a_short_first_turn_under_the_minimum_is_not_marked() -> None:
    assert _marks(_request("claude-haiku-4-5", "## Failure report\nshort\n")) == (False, [])


def test_no_moving_breakpoint_when_no_later_request_can_read_it() -> None:
    """`max_turns` 1: the conversation ends with this request, a write would only cost 1.25x."""
    assert _marks(_request("claude-sonnet-4-5", BIG_REPORT, max_turns=1)) == (True, [])


def test_no_moving_breakpoint_when_the_token_cap_leaves_no_later_request() -> None:
    request = _request("claude-sonnet-4-5", BIG_REPORT, max_turns=1)  # no breakpoint in messages
    size = estimate_tokens(request["tools"], [{"type": "text", "text": b["text"]} for b in request["system"]],
                           request["messages"])
    assert _marks(_request("claude-sonnet-4-5", BIG_REPORT, max_total_tokens=size + 1)) == (True, [0])
    assert _marks(_request("claude-sonnet-4-5", BIG_REPORT, max_total_tokens=size)) == (True, [])


def _conversation(turns: int, calls: int = 1) -> dict[str, Any]:
    """A first request followed by `turns` turns of `calls` parallel tool calls each."""
    request = _request("claude-sonnet-4-5", BIG_REPORT)
    for n in range(turns):
        ids = [f"toolu_{n}_{c}" for c in range(calls)]
        request["messages"] += [
            {"role": "assistant", "content": [tool_use("list_files", {}, id=i) for i in ids]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i,
                                          "content": [{"type": "text", "text": "x"}]} for i in ids]}]
    return request


@pytest.mark.parametrize("calls", [1, 12])
def test_the_previous_breakpoint_stays_and_the_last_turn_writes_nothing(calls: int) -> None:
    """12 parallel calls add 24 blocks in one turn, more than the API's 20-block lookback: the
    previous request's entry is still read, because its breakpoint stays where it was."""
    request = _conversation(3, calls)
    place_breakpoints(request, later_request=True)
    assert _marks(request) == (True, [4, 6])
    assert breakpoint_count(request) == 3
    place_breakpoints(request, later_request=False)
    assert _marks(request) == (True, [4])
    again = copy.deepcopy(request)
    place_breakpoints(again, later_request=False)
    assert again == request, "placing is idempotent: the same request, byte for byte"


# --------------------------------------------------------------------------- through the fake


def _ask(fake: AnthropicFake, repo: Path, model: str, user: str, max_turns: int = 8) -> Usage:
    client = AnthropicClient("sk-ant-test", base_url=fake.base_url, timeout_s=10, sleep=lambda s: None)
    result = ask_for_patch(client, ModelSettings(model, max_turns=max_turns), user, RepoTools(repo),
                           lambda diff: [], (), _same)
    return result.usage


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("x = 1\n")
    return tmp_path


def _three_turns(fake: AnthropicFake) -> None:
    fake.reply(message(tool_use("list_files", {})), message(tool_use("read_file", {"path": "a.py"})),
               message(tool_use("give_up", {"reason": "nothing to fix"})))


def test_turns_read_what_the_turn_before_wrote(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.prompt_cache = cache = PromptCache(min_cacheable_tokens)
    _three_turns(anthropic_fake)
    usage = _ask(anthropic_fake, repo, "claude-sonnet-4-5", BIG_REPORT, max_turns=3)
    first, second, third = ((a["cache_read_input_tokens"], a["cache_creation_input_tokens"])
                            for a in cache.answered)
    assert first[0] == 0 and first[1] > 3000, "turn 1 writes the tools, the rules and the report"
    assert second[0] == first[1], "turn 2 reads all of it and writes its own turn"
    assert third == (second[0] + second[1], 0), "the last turn max_turns allows writes nothing"
    assert usage.cache_read_input_tokens == second[0] + third[0]
    assert usage.cache_creation_input_tokens == first[1] + second[1]


def test_a_second_conversation_reads_the_stable_prefix(anthropic_fake: AnthropicFake, repo: Path) -> None:
    """A later attempt on the same repository sends another report: the tools and rules are read."""
    anthropic_fake.prompt_cache = PromptCache(min_cacheable_tokens)
    anthropic_fake.reply(*[message(tool_use("give_up", {"reason": "r"})) for _ in range(2)])
    one = _ask(anthropic_fake, repo, "claude-sonnet-4-5", BIG_REPORT)
    two = _ask(anthropic_fake, repo, "claude-sonnet-4-5", BIG_REPORT.replace("-1", "-2"))
    assert one.cache_read_input_tokens == 0
    stable = anthropic_fake.message_requests[1]
    assert two.cache_read_input_tokens > estimate_tokens(stable["tools"], stable["system"])


def test_nothing_is_cached_under_the_minimum(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.prompt_cache = PromptCache(min_cacheable_tokens)
    _three_turns(anthropic_fake)
    usage = _ask(anthropic_fake, repo, "claude-haiku-4-5", "## Failure report\nshort\n")
    assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0
    assert [breakpoint_count(r) for r in anthropic_fake.message_requests] == [0, 0, 0]


def _body(model: str, texts: list[str], marks: set[int]) -> dict[str, Any]:
    blocks = [{"type": "text", "text": t, **({"cache_control": {"type": "ephemeral"}} if i in marks else {})}
              for i, t in enumerate(texts)]
    return {"model": model, "messages": [{"role": "user", "content": blocks}]}


def test_the_fakes_cache_reads_only_what_was_written_for_that_model_and_minimum() -> None:
    cache = PromptCache(lambda model: 1000)
    long = ["x" * 3000]  # 1001 tokens by the fake's count: just over the minimum
    assert cache.usage(_body("a", long, {0}))["cache_creation_input_tokens"] > 1000
    assert cache.usage(_body("a", long, {0}))["cache_read_input_tokens"] > 1000
    assert cache.usage(_body("b", long, {0}))["cache_read_input_tokens"] == 0, "another model"
    assert cache.usage(_body("a", long, set()))["cache_read_input_tokens"] == 0, "no breakpoint"
    short = PromptCache(lambda model: 1000)
    assert short.usage(_body("a", ["x" * 2000], {0})) == {
        "input_tokens": 680, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    assert short.entries == {}, "under the minimum nothing is written"


def test_the_fakes_cache_looks_back_twenty_blocks() -> None:
    first = ["x" * 30]
    for later, read in ((19, True), (20, False)):
        cache = PromptCache(lambda model: 1)
        cache.usage(_body("a", first, {0}))
        usage = cache.usage(_body("a", first + ["y"] * later, {later}))
        assert (usage["cache_read_input_tokens"] > 0) is read, later
