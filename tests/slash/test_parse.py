"""`parse_command`: only a line the author typed as text counts, the way the comment renders."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_agent.slash.parse import MAX_ARGS, MAX_BODY, MAX_UNKNOWN, parse_command
from ci_agent.slash.request import SlashCommand
from ci_agent.slash.table import COMMANDS


def parse(body: str) -> SlashCommand | None:
    """What the gate asks: the comment's command among the handler table's names."""
    return parse_command(body, COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_is_recognised(name: str) -> None:
    assert parse(f"/ci-agent {name}") == SlashCommand(name, "")


@pytest.mark.parametrize("body", ["/ci-agent FIX", "/ci-agent Fix", "/CI-Agent fix", "/CI-AGENT fIx"])
def test_names_and_prefix_are_case_insensitive(body: str) -> None:
    assert parse(body) == SlashCommand("fix", "")


def test_first_command_of_the_body_wins() -> None:
    body = "Thanks!\n\n/ci-agent explain\n\n/ci-agent fix now"
    assert parse(body) == SlashCommand("explain", "")


@pytest.mark.parametrize("body", ["", "no command here", "see /ci-agent fix in the docs",
                                  "- /ci-agent fix", "`/ci-agent fix`", "/ci-agentx fix",
                                  "/ci-agent-fix", "/ci-agent\u00a0fix", "/ci\u200b-agent fix",
                                  "ci-agent fix", "//ci-agent fix"])
def test_text_that_is_not_a_command_line(body: str) -> None:
    assert parse(body) is None


@pytest.mark.parametrize("indent", ["", " ", "  ", "   "])
def test_up_to_three_spaces_of_indentation(indent: str) -> None:
    assert parse(f"hi\n\n{indent}/ci-agent retry") == SlashCommand("retry", "")


@pytest.mark.parametrize("body", ["    /ci-agent fix", "\t/ci-agent fix", "  \t/ci-agent fix",
                                  "        /ci-agent fix"])
def test_indented_code_never_counts(body: str) -> None:
    assert parse(body) is None


@pytest.mark.parametrize("fence", ["```", "~~~", "````", "~~~~~", "```text", "~~~ sh"])
def test_fenced_code_never_counts(fence: str) -> None:
    closing = fence.split()[0].rstrip("texsh") if fence[0] == "`" else fence.split()[0]
    body = f"{fence}\n/ci-agent fix\n{closing}\n"
    assert parse(body) is None
    assert parse(body + "/ci-agent stop") == SlashCommand("stop", "")


def test_a_fence_closes_only_with_same_character_and_enough_length() -> None:
    body = "````\n```\n/ci-agent fix\n~~~~\n/ci-agent fix\n````\n/ci-agent status"
    assert parse(body) == SlashCommand("status", "")


def test_an_unclosed_fence_hides_the_rest() -> None:
    assert parse("```\n/ci-agent fix\n\nmore\n/ci-agent stop") is None


def test_a_backtick_line_with_backticks_in_its_info_is_not_a_fence() -> None:
    # CommonMark: "``` a ` b" is inline code, not a fence, so the next line is plain text.
    assert parse("``` a ` b\n\n/ci-agent status") == SlashCommand("status", "")


@pytest.mark.parametrize("body", ["> /ci-agent fix", ">/ci-agent fix", "   > /ci-agent fix",
                                  "> > /ci-agent fix", "> quoted\n/ci-agent fix",
                                  "> quoted\nstill quoted\n/ci-agent fix"])
def test_block_quotes_and_their_lazy_lines_never_count(body: str) -> None:
    assert parse(body) is None


def test_a_reply_quoting_a_command_then_giving_one() -> None:
    body = "> /ci-agent fix\n> please\n\n/ci-agent explain"
    assert parse(body) == SlashCommand("explain", "")


def test_an_empty_quote_line_opens_no_paragraph() -> None:
    assert parse(">\n/ci-agent status") == SlashCommand("status", "")


@pytest.mark.parametrize("body", ["<!-- /ci-agent fix -->", "<!--\n/ci-agent fix\n-->",
                                  "text <!-- start\n/ci-agent fix\n-->",
                                  "<!-- a --> <!-- b\n/ci-agent fix\n-->",
                                  "<!-- x -->/ci-agent fix", "<!--\n/ci-agent fix"])
def test_html_comments_never_count(body: str) -> None:
    assert parse(body) is None


def test_a_command_after_a_closed_comment_counts() -> None:
    assert parse("<!-- ci-agent:marker -->\n/ci-agent status") == SlashCommand("status", "")


def test_comment_markers_inside_code_are_literal() -> None:
    assert parse("```\n<!--\n```\n/ci-agent status") == SlashCommand("status", "")


def test_a_status_comment_quoting_a_command_does_not_trigger() -> None:
    # The shape of our own status comment: a marker, prose, the command in code and in quotes.
    body = ("<!-- ci-agent:status {\"attempts\": 1} -->\n### ci-agent\n\n"
            "Reply `/ci-agent fix <instructions>` to try again.\n\n"
            "> /ci-agent fix\n> by @someone\n\n```\n/ci-agent apply\n```\n")
    assert parse(body) is None


@pytest.mark.parametrize("action", ["/assign @me", "/label ~bug", "/unassign", "/approve",
                                    "/ci-agent-old fix", "/cc @x"])
def test_gitlab_quick_actions_never_collide(action: str) -> None:
    assert parse(action) is None
    body = f"{action}\n/ci-agent fix tidy up\n/label ~ci"
    # The quick-action line after it is not a command, so it stays part of the arguments:
    # GitLab itself removes its quick-action lines from the note before anyone reads it.
    assert parse(body) == SlashCommand("fix", "tidy up\n/label ~ci")


def test_no_name_means_help() -> None:
    assert parse("/ci-agent") == SlashCommand("help", "")
    assert parse("/ci-agent   \t") == SlashCommand("help", "")


def test_unknown_name_means_help_with_the_word() -> None:
    assert parse("/ci-agent deploy prod") == SlashCommand("help", "prod", unknown="deploy")


def test_unknown_word_is_capped_and_stripped_of_invisible_characters() -> None:
    cmd = parse("/ci-agent " + "x\u200b" * 500)
    assert cmd is not None and cmd.name == "help"
    assert cmd.unknown == "x" * MAX_UNKNOWN


def test_trailing_punctuation_after_a_name() -> None:
    assert parse("/ci-agent fix: the flaky test") == SlashCommand("fix", "the flaky test")


def test_args_run_to_a_blank_line() -> None:
    body = "/ci-agent fix use the\nnew API\n  and keep tests\n\nThanks, unrelated text"
    assert parse(body) == SlashCommand("fix", "use the\nnew API\n  and keep tests")


def test_args_stop_at_the_next_command_line() -> None:
    body = "/ci-agent fix first\nsecond\n/ci-agent stop"
    assert parse(body) == SlashCommand("fix", "first\nsecond")


def test_args_on_following_lines_only() -> None:
    assert parse("/ci-agent fix\nonly here") == SlashCommand("fix", "only here")


def test_crlf_line_endings() -> None:
    assert parse("hi\r\n\r\n/ci-agent fix a\r\nb\r\n\r\nc") == SlashCommand("fix", "a\nb")


def test_args_are_sanitised() -> None:
    cmd = parse("/ci-agent fix do\u202e this\x07 <!-- hidden --> now\x1b[31m")
    assert cmd == SlashCommand("fix", "do this  now[31m")


def test_args_are_capped() -> None:
    cmd = parse("/ci-agent fix " + "a" * 10_000 + "\n" + "b\n" * 10_000)
    assert cmd is not None and cmd.name == "fix"
    assert len(cmd.args) == MAX_ARGS and cmd.args == "a" * MAX_ARGS


def test_body_is_read_up_to_its_cap_only() -> None:
    padding = "x\n" * (MAX_BODY // 2)
    assert parse(padding + "/ci-agent fix") is None
    assert parse("x\n" * (MAX_BODY // 2 - 10) + "/ci-agent fix") == SlashCommand("fix", "")


# Markdown pieces that change the block state, so hypothesis explores their combinations.
_PIECES = st.sampled_from(["/ci-agent", "/ci-agent fix", "/CI-AGENT help x", "```", "~~~", "````",
                           "<!--", "-->", ">", "> ", "    ", "\t", "\n", "\r\n", "\r", " ", "`",
                           "/assign", "\u200b", "\u202e", "\x00", "\ud800", "fix", "zz", "\u2028"])
_HOSTILE = st.lists(st.one_of(_PIECES, st.text(max_size=20)), max_size=200).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_parses_without_error(body: str) -> None:
    _check_invariants(parse(body))


@settings(max_examples=500, deadline=None)
@given(_HOSTILE)
def test_hostile_markdown_parses_without_error(body: str) -> None:
    cmd = parse(body)
    _check_invariants(cmd)
    if "/ci-agent" not in body.lower():
        assert cmd is None


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["<!--", "```\n", "> a\n", "x" * 1000, "/ci-agent fix " + "y" * 1000 + "\n"]),
       st.integers(min_value=100, max_value=2000))
def test_huge_repetitive_bodies(piece: str, times: int) -> None:
    _check_invariants(parse(piece * times))


def _check_invariants(cmd: SlashCommand | None) -> None:
    if cmd is None:
        return
    assert cmd.name in COMMANDS
    assert len(cmd.args) <= MAX_ARGS and len(cmd.unknown) <= MAX_UNKNOWN
    assert cmd.args == cmd.args.strip()
    assert not any(c in cmd.args for c in "\x00\x1b\u200b\u202e\r")
    assert not cmd.unknown or cmd.name == "help"


def test_a_line_cut_by_the_body_cap_is_dropped() -> None:
    padding = "x" * (MAX_BODY - len("/ci-agent st") - 1)
    assert parse(padding + "\n/ci-agent status") is None
    assert parse(padding[:-4] + "\n/ci-agent status") == SlashCommand("status", "")
    assert parse("/ci-agent fix " + "a" * MAX_BODY) is None
