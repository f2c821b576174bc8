"""`help_text`: every command once, and an unknown word echoed only in a harmless form."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_agent.slash.table import COMMANDS, help_text


def test_lists_every_command_on_one_line_each() -> None:
    lines = help_text().splitlines()
    for name in COMMANDS:
        assert len([line for line in lines if line.startswith(f"- `/ci-agent {name}")]) == 1
    assert "is not a command" not in help_text()


def test_unknown_word_comes_first() -> None:
    first = help_text("deploy").splitlines()[0]
    assert first == "`/ci-agent deploy` is not a command."


def test_hostile_unknown_word_is_neutralised() -> None:
    text = help_text("`@team<img src=x>[a](http://e)\u202e" + "z" * 100)
    first = text.splitlines()[0]
    assert first.startswith("`/ci-agent ?")
    for bad in ("@team", "<img", "](", "\u202e"):
        assert bad not in text
    assert first.count("`") == 2 and "z" * 41 not in first


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500))
def test_any_unknown_word_stays_inside_its_code_span(word: str) -> None:
    first = help_text(word).splitlines()[0] if word else ""
    if word:
        assert first.count("`") == 2 and first.endswith("` is not a command.")
        assert not set(first[len("`/ci-agent "):-len("` is not a command.")]) - set(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-?")
