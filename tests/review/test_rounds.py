"""`AskResult.resume`: a patch the caller turned down goes back into the fixer's own conversation
(ci_agent/llm/loop.py), every call of the held turn answered, under the same caps."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ci_agent.config import PatchSettings
from ci_agent.llm import AskResult, GiveUp, ModelSettings, PatchProposal, RepoTools, ask_for_patch
from ci_agent.llm.anthropic_client import AnthropicClient
from ci_agent.patch.engine import review
from tests.fakes.anthropic_fake import AnthropicFake, message, tool_use

DIFF = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
        "-    return a - b\n+    return a + b\n")


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "README").write_text("r\n")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init"],
                   cwd=tmp_path, check=True)
    return tmp_path


def _submit(summary: str = "add adds") -> dict[str, object]:
    return tool_use("submit_patch", {"diff": DIFF, "summary": summary, "root_cause": "calc.py add subtracted",
                                     "confidence": 0.9, "assumptions": [], "open_questions": []})


def _ask(fake: AnthropicFake, repo: Path, max_turns: int = 8) -> AskResult:
    client = AnthropicClient("k", base_url=fake.base_url, timeout_s=10, sleep=lambda s: None)
    return ask_for_patch(client, ModelSettings("m", max_turns=max_turns), "report", RepoTools(repo, ()),
                         lambda d: [r.message for r in review(d, repo, PatchSettings()).rejections],
                         ("calc.py",), lambda s: s)


def test_a_turned_down_patch_is_answered_in_the_same_conversation(anthropic_fake: AnthropicFake,
                                                                   tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    # the held turn also asks to read a file after its submit_patch: that call is answered "not run"
    anthropic_fake.reply(message(_submit("first"), tool_use("read_file", {"path": "calc.py"})),
                         message(_submit("second")))
    first = _ask(anthropic_fake, repo)
    assert isinstance(first.answer, PatchProposal) and first.resume is not None
    second = first.resume("REVIEW FINDINGS")
    assert isinstance(second.answer, PatchProposal) and second.answer.summary == "second"
    assert second.turns == 2 and second.usage.total == 2 * first.usage.total
    sent = anthropic_fake.message_requests[-1]
    assert len(sent["messages"]) == 3, "one conversation: user, assistant, user"
    submitted, read = sent["messages"][-1]["content"]
    assert submitted["is_error"] and "REVIEW FINDINGS" in submitted["content"][0]["text"]
    assert read["is_error"] and read["content"][0]["text"].startswith("Not run")
    assert anthropic_fake.failures == []


def test_a_resumed_conversation_keeps_its_turn_cap(anthropic_fake: AnthropicFake, tmp_path: Path) -> None:
    anthropic_fake.reply(message(_submit()))
    first = _ask(anthropic_fake, _repo(tmp_path), max_turns=1)
    assert first.resume is not None
    second = first.resume("revise")
    assert isinstance(second.answer, GiveUp) and not second.answer.by_model and second.resume is None
    assert len(anthropic_fake.message_requests) == 1
