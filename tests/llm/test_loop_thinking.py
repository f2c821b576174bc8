"""tool_choice auto and extended thinking in the tool-use loop (issue 15, defect 7), through the
real SDK against the strict fake, which refuses what the API refuses: forced tool use with
thinking, and a tool-use cycle whose thinking blocks do not come back unchanged."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_agent.config import PatchSettings
from ci_agent.config.load import settings_from_layers
from ci_agent.engine.seams import model_settings
from ci_agent.llm import GiveUp, ModelSettings, PatchProposal, RepoTools, ask_for_patch, first_request
from ci_agent.llm.anthropic_client import AnthropicClient
from ci_agent.patch.engine import review
from tests.fakes.anthropic_fake import AnthropicFake, message, redacted_thinking, text, thinking, tool_use

DIFF = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
        "-    return a - b\n+    return a + b\n")
REASONING = "The user's log shows add() subtracting; the token ghp_abc might be in the env."
THINKING = ModelSettings("claude-test", max_tokens=4096, thinking_tokens=2048)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
                       cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


def _ask(fake: AnthropicFake, repo: Path, settings: ModelSettings) -> Any:
    client = AnthropicClient("sk-ant-test", base_url=fake.base_url, timeout_s=10, sleep=lambda s: None)

    def check(diff: str) -> list[str]:
        return [r.message for r in review(diff, repo, PatchSettings()).rejections]

    return ask_for_patch(client, settings, "calc.py: test_add failed", RepoTools(repo), check,
                         ("calc.py",), lambda t: t)


def _submit() -> dict[str, Any]:
    return tool_use("submit_patch", {"diff": DIFF, "summary": "add() adds.", "root_cause": "calc.py used -.",
                                     "confidence": 0.9, "assumptions": [], "open_questions": []})


def test_thinking_is_asked_for_and_its_blocks_go_back_unchanged(
        anthropic_fake: AnthropicFake, repo: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    first_turn = [thinking(REASONING), redacted_thinking(), text("Reading calc.py."),
                  tool_use("read_file", {"path": "calc.py"})]
    anthropic_fake.reply(message(*first_turn), message(thinking("Now the patch."), _submit()))
    result = _ask(anthropic_fake, repo, THINKING)
    assert isinstance(result.answer, PatchProposal) and result.turns == 2
    sent = anthropic_fake.message_requests
    for request in sent:
        assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert request["tool_choice"] == {"type": "auto"}
    # the calling turn goes back as the API sent it: thinking first, signature and data intact
    # (the fake refuses the second request otherwise, as the API does)
    assert [{k: v for k, v in b.items() if k != "cache_control"} for b in sent[1]["messages"][1]["content"]] \
        == first_turn
    # thinking is model output that may echo a secret: it goes back to the API and nowhere else
    assert REASONING not in repr(result) and REASONING not in caplog.text


def test_without_thinking_the_request_has_none(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(message(_submit()))
    _ask(anthropic_fake, repo, ModelSettings("claude-test"))
    (request,) = anthropic_fake.message_requests
    assert "thinking" not in request and request["tool_choice"] == {"type": "auto"}


def test_text_only_replies_cost_turns_and_stop_at_max_turns(anthropic_fake: AnthropicFake,
                                                            repo: Path) -> None:
    """With tool_choice auto the model may answer in text alone: it is nudged, the reply counts
    as a turn, and the conversation ends at max_turns instead of looping."""
    anthropic_fake.reply_always(lambda body: message(thinking("Hmm."), text("I believe add() is wrong.")))
    result = _ask(anthropic_fake, repo, ModelSettings("claude-test", max_tokens=4096, thinking_tokens=1024,
                                                      max_turns=3))
    assert result.answer == GiveUp("Stopped after 3 model turns (max_turns 3) without an accepted patch.",
                                   by_model=False)
    assert result.turns == 3 and len(anthropic_fake.message_requests) == 3
    nudge, last = (b["text"] for b in anthropic_fake.message_requests[2]["messages"][-1]["content"])
    assert "without a tool call" in nudge and "last turn" in last


def test_the_setting_reaches_the_request_from_the_config_file() -> None:
    settings = settings_from_layers({"model": {"max_tokens": 16000, "thinking_tokens": 8000}})
    request = first_request(model_settings(settings, "claude-x"), "report", lambda t: t)
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert request["max_tokens"] == 16000


@pytest.mark.parametrize(("thinking_tokens", "max_tokens"), [(1000, 8192), (8192, 8192), (-1, 8192)])
def test_model_settings_refuse_a_budget_the_api_refuses(thinking_tokens: int, max_tokens: int) -> None:
    with pytest.raises(ValueError, match="thinking_tokens"):
        ModelSettings("m", max_tokens=max_tokens, thinking_tokens=thinking_tokens)


def test_adaptive_thinking_and_effort_reach_the_api_and_the_cycle_keeps_its_blocks(
        anthropic_fake: AnthropicFake, repo: Path) -> None:
    """The newest models refuse a fixed budget and take only adaptive thinking: the same loop,
    `thinking: {type: adaptive}` and `output_config.effort`, blocks sent back unchanged (the fake
    refuses the second request otherwise, as the API does)."""
    first_turn = [thinking(REASONING), tool_use("read_file", {"path": "calc.py"})]
    anthropic_fake.reply(message(*first_turn), message(_submit()))
    result = _ask(anthropic_fake, repo, ModelSettings("claude-test", thinking="adaptive", effort="medium"))
    assert isinstance(result.answer, PatchProposal) and result.turns == 2
    for request in anthropic_fake.message_requests:
        assert request["thinking"] == {"type": "adaptive"}
        assert request["output_config"] == {"effort": "medium"}
        assert request["tool_choice"] == {"type": "auto"}
    assert [{k: v for k, v in b.items() if k != "cache_control"}
            for b in anthropic_fake.message_requests[1]["messages"][1]["content"]] == first_turn


def test_adaptive_thinking_and_effort_from_the_config_file() -> None:
    settings = settings_from_layers({"model": {"thinking": "adaptive", "effort": "high"}})
    request = first_request(model_settings(settings, "claude-x"), "report", lambda t: t)
    assert request["thinking"] == {"type": "adaptive"} and request["output_config"] == {"effort": "high"}
    plain = first_request(model_settings(settings_from_layers({}), "claude-x"), "report", lambda t: t)
    assert "thinking" not in plain and "output_config" not in plain  # the defaults send neither


@pytest.mark.parametrize(("fields", "needle"), [
    ({"thinking": "adaptive", "thinking_tokens": 2048, "max_tokens": 4096}, "thinking_tokens must be 0"),
    ({"thinking": "on"}, "thinking must be one of off, adaptive"),
    ({"effort": "extreme"}, "effort must be one of low, medium, high, xhigh, max"),
])
def test_model_settings_refuse_a_thinking_mode_the_api_refuses(fields: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        ModelSettings("m", **fields)
