"""The request we build: one cached system block, valid tools, the SDK kept at one import site."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from ci_agent.llm import ModelSettings, initial_request, system_blocks, tool_definitions, user_text
from ci_agent.llm.prompt import AttemptNote, compose_user_text, language_rule
from ci_agent.redact import FENCE_TAG, fence
from ci_agent.report import Outcome, Report, ReportFailure, TestCounts
from tests.fakes.anthropic_fake import validate
from tests.llm.golden import assert_golden

PACKAGE = Path(__file__).resolve().parents[2] / "ci_agent"


def test_one_stable_system_block_with_notes_and_language() -> None:
    notes = ("CS1591 is noise", "nullable warnings\nare real defects")
    settings = ModelSettings("m", language="es", notes=notes)
    (block,) = system_blocks(settings)  # no guidance: one block; caching.py sets the breakpoint
    assert "cache_control" not in block
    assert "- CS1591 is noise\n- nullable warnings are real defects\n" in block["text"]
    assert "in Spanish." in block["text"]
    assert system_blocks(settings) == [block]  # byte-identical every time, or the cache misses


def test_no_team_notes_section_without_notes() -> None:
    assert "Team notes" not in system_blocks(ModelSettings("m"))[0]["text"]


def test_language_rules() -> None:
    assert "in English." in language_rule("en")
    assert "in the language the repository's own comments" in language_rule("match")
    assert "in Klingon." in language_rule("Klingon")


def test_tools_are_the_five_of_the_design() -> None:
    tools = {t["name"]: t for t in tool_definitions()}
    assert list(tools) == ["read_file", "search_code", "list_files", "submit_patch", "give_up"]
    assert tools["submit_patch"]["input_schema"]["required"] == [
        "diff", "summary", "root_cause", "confidence", "assumptions", "open_questions"]
    assert tools["give_up"]["input_schema"]["required"] == ["reason"]


def test_initial_request_is_valid_for_the_strict_fake() -> None:
    settings = ModelSettings("claude-test", max_tokens=1234)
    request = initial_request(settings, system_blocks(settings), user_text("R", "C"))
    assert validate(json.loads(json.dumps(request))) is None
    assert request["max_tokens"] == 1234 and request["model"] == "claude-test"
    assert request["messages"] == [{"role": "user", "content": [{"type": "text", "text":
                                    "## Failure report\nR\n\n## Context\nC\n\nFind the root cause and "
                                    "answer with `submit_patch` (or `give_up`).\n"}]}]


def test_previous_attempts_lead_the_user_text() -> None:
    assert user_text("R", previous_attempts="Attempt 1 changed x").startswith(
        "## Previous attempts\nAttempt 1 changed x\n\n## Failure report\nR\n")


def test_only_anthropic_client_imports_the_sdk() -> None:
    importers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                       if re.search(r"^\s*(import anthropic|from anthropic\b)", p.read_text(), re.M))
    assert importers == ["llm/anthropic_client.py"]
    code = "import ci_agent.llm, ci_agent.llm.loop, sys; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _report(message: str) -> Report:
    failure = ReportFailure("tests/test_a.py::test_one", Outcome.FAILED, message, (), None, None)
    return Report((), (), TestCounts(4, 2, 2, 0), (failure,), (), 0, 0, None)


def test_the_user_turns_of_later_attempts_are_the_golden_ones() -> None:
    """Every paragraph of attempts.md.j2 in one user turn (a reviewer's instructions, the attempt
    number, no progress, one attempt of this run and one recorded by an earlier run), and an
    explain-only turn: the first requests of the dry runs never show them."""
    this_run = AttemptNote(1, "Guard the empty case.", ("src/a.py",),
                           "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n", "pytest -q", "",
                           _report("assert 1 == 3"))
    earlier_run = AttemptNote(2, "Recorded in an earlier run.", after_fingerprint="abc")
    context = "## Source excerpts\n\n(some)\n"
    later = compose_user_text(_report("assert 1 == 2"), context, [this_run, earlier_run], 3, 3, True,
                              lambda t: t.replace("SECRET", "[REDACTED]"),
                              instructions="Keep SECRET out; fix only src/a.py")
    explain = compose_user_text(_report("assert 1 == 2"), "", [], 1, 3, False, str, explain=True)
    assert_golden("later_attempts.md", f"{later}\n=====\n{explain}")


# --------------------------------------------------------------------------- issue 15: what it is told


def test_the_system_prompt_names_the_fence_tag_the_data_comes_in() -> None:
    text = system_blocks(ModelSettings("m"))[0]["text"]
    fenced = fence("build.log", "error CS0103")
    opening = fenced.split("source=", 1)[0]
    assert opening == f"<{FENCE_TAG} " and f"`{opening}source=\"...\">`" in text


def test_the_system_prompt_states_the_turn_budget_and_asks_for_batched_reads() -> None:
    text = system_blocks(ModelSettings("m", max_turns=5))[0]["text"]
    assert "at most 5 turns" in text
    assert "make all those tool calls in one\n  reply" in text
    # per repository, like the notes: every attempt of one repository sends the same block
    assert system_blocks(ModelSettings("m", max_turns=5)) == system_blocks(ModelSettings("m", max_turns=5))


def test_the_system_prompt_says_what_to_do_when_report_and_code_disagree() -> None:
    text = system_blocks(ModelSettings("m"))[0]["text"]
    section = text.split("## When the report and the code disagree\n", 1)[1].split("\n## ", 1)[0]
    assert "Trust the code you read over the report" in section
    assert "Find the root cause first" in section
    assert "the `give_up` reason, or in the\n  patch's `root_cause` or `open_questions`" in section


def test_open_questions_are_asked_for_honestly_not_priced() -> None:
    """Telling the model each open question lowers its confidence cap rewards hiding them: the
    prompt asks for them, and the cap stays arithmetic in the loop (`loop.confidence_cap`)."""
    text = system_blocks(ModelSettings("m"))[0]["text"]
    schema = json.dumps(tool_definitions())
    for told in (text, schema):
        assert not re.search(r"\bcap(ped|s)?\b", told, re.IGNORECASE)
    assert '"unverified:"' in text and "`open_questions` everything you could not decide" in text


def test_tool_choice_is_auto_and_thinking_is_off_by_default() -> None:
    settings = ModelSettings("m")
    request = initial_request(settings, system_blocks(settings), "u")
    assert request["tool_choice"] == {"type": "auto"} and "thinking" not in request


def test_thinking_tokens_turn_on_extended_thinking_with_that_budget() -> None:
    settings = ModelSettings("m", max_tokens=16000, thinking_tokens=4096)
    request = initial_request(settings, system_blocks(settings), "u")
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert validate(json.loads(json.dumps(request))) is None  # auto is allowed with thinking
    assert "forces tool use" in str(validate({**request, "tool_choice": {"type": "any"}}))
