"""The handler table is the one list of commands: every row has its help line, `/ci-agent help`
is written from the rows in their order, and the words the parser takes for commands are exactly
the table's names (any other word is help with the word)."""

from __future__ import annotations

import dataclasses

import pytest

from ci_agent.cli.main import build_parser
from ci_agent.engine.forge import Permission
from ci_agent.slash.parse import holds_command, parse_command
from ci_agent.slash.request import SlashCommand
from ci_agent.slash.table import BY_NAME, COMMANDS, HANDLERS, MAY_RUN, Handler, help_text


def test_every_command_has_a_name_usage_and_help_line() -> None:
    for handler in HANDLERS:
        assert handler.name and handler.name == handler.name.lower()
        assert handler.usage.split()[0] == handler.name
        assert handler.help.strip() and handler.help.endswith(".")
    assert len(set(COMMANDS)) == len(HANDLERS) == len(BY_NAME)


def test_the_help_answer_is_generated_from_the_table() -> None:
    listed = help_text().splitlines()[1:]
    assert listed == [f"- `/ci-agent {h.usage}`: {h.help}" for h in HANDLERS]
    assert help_text().endswith("\n")


def test_the_table_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        HANDLERS[0].help = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        BY_NAME["deploy"] = HANDLERS[0]  # type: ignore[index]


@pytest.mark.parametrize("name", COMMANDS)
def test_the_parser_takes_every_name_of_the_table(name: str) -> None:
    assert parse_command(f"/ci-agent {name.upper()} now", COMMANDS) == SlashCommand(name, "now")
    assert holds_command(f"/ci-agent {name}")


@pytest.mark.parametrize("word", ["deploy", "fixit", "stat", "helpme", "abort", "rebase"])
def test_the_parser_takes_no_other_word_for_a_command(word: str) -> None:
    assert parse_command(f"/ci-agent {word}", COMMANDS) == SlashCommand("help", "", unknown=word)
    assert holds_command(f"/ci-agent {word}"), "an unknown word is answered with help: a job starts"


def test_only_commands_that_need_the_code_are_refused_on_forks() -> None:
    """fix, explain, retry and apply run or push the repository's code; the others only talk."""
    assert {h.name for h in HANDLERS if h.needs_checkout} == {"fix", "explain", "retry", "apply"}


def test_every_command_needs_write_access() -> None:
    assert set(MAY_RUN) == set(COMMANDS)
    assert set(MAY_RUN.values()) == {Permission.WRITE}, "help says: people with write access only"


def test_the_cli_verb_lists_the_table_s_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ci-agent --help` names the commands of the `command` verb in the table's order (the CLI
    writes them out: it must start without loading the handlers)."""
    monkeypatch.setenv("COLUMNS", "400")  # one line per verb
    (line,) = [line for line in build_parser().format_help().splitlines() if line.split()[:1] == ["command"]]
    assert line.endswith(f"({', '.join(COMMANDS)})")


def test_handler_rows_are_typed_values() -> None:
    assert all(isinstance(h, Handler) and callable(h.run) for h in HANDLERS)
