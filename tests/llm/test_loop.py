"""ask_for_patch through the real AnthropicClient and SDK against the strict loopback fake.

The fake rejects any request the real API would reject (roles, tool_result ids, cache
breakpoints), so every conversation here also proves the requests we build are well formed.
`check` is the real patch engine's `review` on a real git repository.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ci_agent.config import PatchSettings
from ci_agent.llm import (
    GiveUp,
    ModelSettings,
    PatchProposal,
    RepoTools,
    Usage,
    ask_for_patch,
    first_request,
    initial_request,
    system_blocks,
)
from ci_agent.llm.anthropic_client import AnthropicClient
from ci_agent.llm.loop import confidence_cap, report_file_gate, unverified_count
from ci_agent.patch.engine import review
from tests.fakes.anthropic_fake import MAX_CACHE_BREAKPOINTS, AnthropicFake, message, text, tool_use

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
GOOD_DIFF = ("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
             "-    return a - b\n+    return a + b\n")
STALE_DIFF = ("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(x, y):\n"
              "-    return x - y\n+    return x + y\n")
SECRET = "s3cr3t-value-123456"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "src" / "calc.py").write_text(BUGGY)
    (root / "tests" / "test_calc.py").write_text("from src.calc import add\n\n\ndef test_add():\n"
                                                 "    assert add(1, 2) == 3\n")
    (root / "src" / "config.py").write_text(f"API_TOKEN = '{SECRET}'\n")
    (root / "README.md").write_text("# calc\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    (tmp_path / "outside.txt").write_text("outside secret\n")
    os.symlink(tmp_path / "outside.txt", root / "escape")
    return root


def _check(repo: Path) -> Callable[[str], list[str]]:
    def check(diff: str) -> list[str]:
        verdict = review(diff, repo, PatchSettings())
        return [f"[{r.rule}] {r.message}" for r in verdict.rejections]
    return check


def _redact(value: str) -> str:
    return value.replace(SECRET, "[REDACTED:API_TOKEN]")


def _ask(fake: AnthropicFake, repo: Path, settings: ModelSettings | None = None,
         report_files: tuple[str, ...] = ("src/calc.py", "tests/test_calc.py")) -> Any:
    client = AnthropicClient("sk-ant-test", base_url=fake.base_url, timeout_s=10, sleep=lambda s: None)
    return ask_for_patch(client, settings or ModelSettings("claude-test"), "## Failure report\n"
                         "tests/test_calc.py::test_add failed: assert -1 == 3", RepoTools(repo, ("*.env",)),
                         _check(repo), report_files, _redact)


def _submit(diff: str = GOOD_DIFF, **extra: Any) -> dict[str, Any]:
    fields = {"diff": diff, "summary": "add() subtracted; make it add.",
              "root_cause": "src/calc.py add() used `-`.", "confidence": 0.9,
              "assumptions": [], "open_questions": []}
    return message(tool_use("submit_patch", {**fields, **extra}))


def _tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in request["messages"][-1]["content"] if b["type"] == "tool_result"]


def _result_text(block: dict[str, Any]) -> str:
    return "".join(part["text"] for part in block["content"])


def _breakpoints(node: Any) -> int:
    return len(json.dumps(node).split('"cache_control"')) - 1


def test_tool_round_trips_then_an_accepted_patch(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(
        message(text("Let me look."), tool_use("list_files", {"dir": "src"}),
                tool_use("search_code", {"pattern": "def add"}),
                usage={"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 900}),
        message(tool_use("read_file", {"path": "src/calc.py"}),
                usage={"input_tokens": 50, "output_tokens": 10, "cache_read_input_tokens": 900,
                       "cache_creation_input_tokens": 80}),
        _submit(),
    )
    result = _ask(anthropic_fake, repo)
    assert isinstance(result.answer, PatchProposal)
    assert result.answer.diff == GOOD_DIFF and result.answer.confidence == 0.9
    assert result.turns == 3 and result.rejections == ()
    assert result.usage == Usage(160, 35, 980, 900)  # + the fake's default 10/5 for the 3rd reply
    sent = anthropic_fake.message_requests
    assert len(sent) == 3
    listing, hits = (_result_text(b) for b in _tool_results(sent[1]))
    assert listing == "src/calc.py\nsrc/config.py\n"
    assert hits == "src/calc.py:1: def add(a, b):\n"
    assert _result_text(_tool_results(sent[2])[0]).startswith("src/calc.py (lines 1-6 of 6)\n     1\tdef add")
    # the assistant turns are sent back exactly, text included
    assert sent[1]["messages"][1]["content"][0] == {"type": "text", "text": "Let me look."}


def _marked(request: dict[str, Any]) -> list[int]:
    return [i for i, m in enumerate(request["messages"]) if _breakpoints(m)]


def test_every_request_has_at_most_four_breakpoints_and_caches_system(
        anthropic_fake: AnthropicFake, repo: Path) -> None:
    """Issue 15: the newest user turn is marked while a later request can read it; the turn the
    previous request wrote stays marked (that entry is this request's read); the last turn
    `max_turns` allows writes nothing."""
    anthropic_fake.reply(*[message(tool_use("list_files", {})) for _ in range(5)], _submit())
    _ask(anthropic_fake, repo, ModelSettings("claude-test", max_turns=6))
    sent = anthropic_fake.message_requests
    assert len(sent) == 6
    for request in sent:
        assert _breakpoints(request) <= 3 < MAX_CACHE_BREAKPOINTS
        assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert request["tool_choice"] == {"type": "auto"}  # issue 15: reasoning text may lead a call
    assert [_marked(r) for r in sent] == [[0], [0, 2], [2, 4], [4, 6], [6, 8], [8]]


def test_tools_stay_inside_the_repo_and_redact(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(
        message(tool_use("read_file", {"path": "escape"}), tool_use("read_file", {"path": ".git/config"}),
                tool_use("read_file", {"path": "../outside.txt"}),
                tool_use("read_file", {"path": "src/config.py"}), tool_use("write_file", {"path": "x"})),
        message(tool_use("give_up", {"reason": "nothing to fix"})),
    )
    result = _ask(anthropic_fake, repo)
    assert result.answer == GiveUp("nothing to fix")
    escape, git, outside, config, write = _tool_results(anthropic_fake.message_requests[1])
    assert escape["is_error"] and "symlink that points outside" in _result_text(escape)
    assert git["is_error"] and "does not exist" in _result_text(git)
    assert outside["is_error"] and "outside the repository" in _result_text(outside)
    assert "is_error" not in config and "[REDACTED:API_TOKEN]" in _result_text(config)
    assert write["is_error"] and "no tool named 'write_file'" in _result_text(write)
    assert SECRET not in json.dumps(anthropic_fake.message_requests)
    assert "outside secret" not in json.dumps(anthropic_fake.message_requests)


def test_a_rejected_patch_goes_back_as_a_tool_error_then_a_fix_is_accepted(
        anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(_submit(STALE_DIFF), _submit())
    result = _ask(anthropic_fake, repo)
    assert isinstance(result.answer, PatchProposal) and result.answer.diff == GOOD_DIFF
    assert result.turns == 2
    assert len(result.rejections) == 1 and "src/calc.py" in result.rejections[0]
    (rejection,) = _tool_results(anthropic_fake.message_requests[1])
    assert rejection["is_error"] is True
    body = _result_text(rejection)
    assert body.startswith("The patch was rejected and nothing was applied:\n- ")
    assert result.rejections[0] in body


def test_a_policy_rejection_is_sent_back_too(anthropic_fake: AnthropicFake, repo: Path) -> None:
    skip = ("--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -1,5 +1,7 @@\n from src.calc import add\n"
            "+import pytest\n \n \n+@pytest.mark.skip\n def test_add():\n     assert add(1, 2) == 3\n")
    anthropic_fake.reply(_submit(skip), message(tool_use("give_up", {"reason": "cannot"})))
    result = _ask(anthropic_fake, repo)
    assert isinstance(result.answer, GiveUp) and result.answer.by_model
    assert any("skip" in r.lower() for r in result.rejections)


def test_give_up(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(message(tool_use("give_up", {"reason": "The failure is a network outage."})))
    result = _ask(anthropic_fake, repo)
    assert result.answer == GiveUp("The failure is a network outage.", by_model=True)
    assert result.turns == 1 and result.usage == Usage(10, 5, 0, 0)


def test_turn_cap(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply_always(lambda body: message(tool_use("list_files", {})))
    result = _ask(anthropic_fake, repo, ModelSettings("claude-test", max_turns=3))
    assert result.answer == GiveUp("Stopped after 3 model turns (max_turns 3) without an accepted "
                                   "patch.", by_model=False)
    assert result.turns == 3 and len(anthropic_fake.message_requests) == 3
    last = anthropic_fake.message_requests[2]["messages"][-1]["content"][-1]
    assert last["type"] == "text" and "last turn" in last["text"]


def test_token_cap(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply_always(lambda body: message(tool_use("list_files", {}),
                                                     usage={"input_tokens": 400, "output_tokens": 100}))
    result = _ask(anthropic_fake, repo, ModelSettings("claude-test", max_total_tokens=1000))
    assert result.answer == GiveUp("Stopped after 1000 tokens (max_total_tokens 1000) without an "
                                   "accepted patch.", by_model=False)
    assert result.turns == 2


def test_text_only_and_cut_off_replies_are_nudged(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(message(text("I think add is wrong.")),
                         message(tool_use("submit_patch", {"diff": "--- a/x"}), stop_reason="max_tokens"),
                         _submit())
    result = _ask(anthropic_fake, repo)
    assert isinstance(result.answer, PatchProposal)
    first, second = anthropic_fake.message_requests[1:3]
    assert "without a tool call" in first["messages"][-1]["content"][0]["text"]
    (cut,) = _tool_results(second)
    assert cut["is_error"] and "cut off at max_tokens" in _result_text(cut)


def test_confidence_cap_formula() -> None:
    assert confidence_cap(0, 0) == 1.0
    assert confidence_cap(2, 1) == 0.79  # 1.0 - 0.16 - 0.05
    assert confidence_cap(20, 0) == 0.0
    assert unverified_count(["unverified: the API is stable", "Checked the caller",
                             "- Unverified - tests run on Linux", "verified: x", "an unverified y"]) == 2


def test_confidence_is_capped_with_a_note(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(_submit(confidence=0.95, open_questions=["Is sub() also wrong?", " "],
                                 assumptions=["unverified: callers expect ints", "read add()"]))
    answer = _ask(anthropic_fake, repo).answer
    assert isinstance(answer, PatchProposal)
    assert answer.raw_confidence == 0.95 and answer.confidence == 0.87  # 1 - 0.08 - 0.05
    assert answer.unverified_assumptions == 1 and answer.open_questions == ("Is sub() also wrong?",)
    assert answer.gate_notes == ("Confidence capped from 0.95 to 0.87: 1 open question(s), "
                                 "1 unverified assumption(s).",)


README_DIFF = "--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n # calc\n+Adds numbers.\n"


def test_a_patch_touching_no_reported_file_needs_a_reason(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(
        _submit(README_DIFF, summary="Document it.", root_cause="Docs were missing."),
        _submit(README_DIFF, summary="Document add() in README.md.",
                root_cause="The test expects documented behaviour."),
    )
    result = _ask(anthropic_fake, repo)
    assert isinstance(result.answer, PatchProposal)
    assert result.answer.gate_notes == ("The patch touches no file named in the report "
                                        "(src/calc.py, tests/test_calc.py); the stated reason names "
                                        "README.md.",)
    (rejection,) = _tool_results(anthropic_fake.message_requests[1])
    body = _result_text(rejection)
    # the gate note leads the rejection the model reads next
    assert body.splitlines()[1].startswith("- [gate.report_files] The patch changes README.md")
    assert result.rejections == (body.splitlines()[1][2:],)


def test_report_file_gate_passes_reported_and_unparsable_diffs() -> None:
    assert report_file_gate(GOOD_DIFF, "s", "r", ["./src/calc.py"]) == ([], [])
    assert report_file_gate(README_DIFF, "s", "r", []) == ([], [])
    assert report_file_gate("not a diff", "s", "r", ["src/calc.py"]) == ([], [])


def test_a_malformed_submission_is_a_tool_error(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(_submit(confidence="high"), _submit())
    result = _ask(anthropic_fake, repo)
    assert isinstance(result.answer, PatchProposal)
    assert result.rejections == ("submit_patch needs 'confidence' as a number between 0 and 1.",)


def test_the_user_text_is_redacted(anthropic_fake: AnthropicFake, repo: Path) -> None:
    anthropic_fake.reply(_submit())
    client = AnthropicClient("k", base_url=anthropic_fake.base_url, sleep=lambda s: None)
    ask_for_patch(client, ModelSettings("m"), f"log: token={SECRET}", RepoTools(repo), _check(repo),
                  (), _redact)
    assert SECRET not in json.dumps(anthropic_fake.message_requests)


def test_the_first_request_sent_is_exactly_initial_request(anthropic_fake: AnthropicFake, repo: Path) -> None:
    """What `--dry-run` prints (initial_request) is byte for byte what the loop sends first."""
    anthropic_fake.reply(message(tool_use("give_up", {"reason": "r"})))
    settings = ModelSettings("claude-test", notes=("note",), language="es")
    client = AnthropicClient("k", base_url=anthropic_fake.base_url, sleep=lambda s: None)
    ask_for_patch(client, settings, "report", RepoTools(repo), _check(repo), (), _redact)
    expected = first_request(settings, "report", _redact)
    assert anthropic_fake.message_requests == [json.loads(json.dumps(expected))]
    assert expected["messages"][0]["content"][0]["text"] == initial_request(
        settings, system_blocks(settings), "report")["messages"][0]["content"][0]["text"]
