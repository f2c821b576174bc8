"""`decide`: every branch, in the contract's order, and the forge asked only when needed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ci_agent.engine.forge import Permission
from ci_agent.slash.gate import CommentFacts, Decision, decide, is_bot
from ci_agent.slash.request import SlashCommand
from ci_agent.slash.table import MAY_RUN

NOW = 1_800_000_000.0
WRITER = CommentFacts(id=42, author="alice", author_is_bot=False, body="/ci-agent fix the test",
                      action="created", association="MEMBER")
FIX = SlashCommand("fix", "the test")


class Permissions:
    """A permission lookup that records who it was asked about."""

    def __init__(self, level: Permission = Permission.WRITE) -> None:
        self.level = level
        self.asked: list[str] = []

    def __call__(self, user: str) -> Permission:
        self.asked.append(user)
        return self.level


def run(facts: CommentFacts = WRITER, perms: Permissions | None = None, *,
        handled: tuple[int, ...] = (), recent: tuple[float, ...] = (), rate_limit: int = 5,
        window_s: float = 3600) -> Decision:
    return decide(facts, commands=MAY_RUN, own_login="ci-agent-bot", permission=perms or Permissions(),
                  handled=handled, recent=recent, now=NOW, rate_limit=rate_limit, window_s=window_s)


def test_a_writer_runs_the_command() -> None:
    perms = Permissions(Permission.WRITE)
    decision = run(perms=perms)
    assert decision.run and decision.command == FIX
    assert perms.asked == ["alice"]


@pytest.mark.parametrize("level", [Permission.MAINTAIN, Permission.ADMIN])
def test_above_write_runs(level: Permission) -> None:
    assert run(perms=Permissions(level)).run


# Every way a comment is ignored or refused before the permission API, with its reason.
PRE_FILTERED = {
    "edited": (replace(WRITER, action="edited"), "Edited comments never run a command."),
    "deleted": (replace(WRITER, action="deleted"), "Edited comments never run a command."),
    "ours": (replace(WRITER, author="ci-agent-bot"), "The comment is ci-agent's own."),
    "ours, other case": (replace(WRITER, author="CI-Agent-Bot"), "The comment is ci-agent's own."),
    "bot flag": (replace(WRITER, author_is_bot=True), "Comments by bots never run a command."),
    "[bot] login": (replace(WRITER, author="dependabot[bot]"), "Comments by bots never run a command."),
    "gitlab project bot": (replace(WRITER, author="project_278964_bot_0a1b2c"),
                           "Comments by bots never run a command."),
    "gitlab group bot": (replace(WRITER, author="group_9_bot"), "Comments by bots never run a command."),
    "no command": (replace(WRITER, body="LGTM, thanks"), "The comment holds no /ci-agent command."),
    "quoted command": (replace(WRITER, body="> /ci-agent fix"), "The comment holds no /ci-agent command."),
    "handled": (WRITER, "This comment was already handled."),
}


@pytest.mark.parametrize("case", PRE_FILTERED)
def test_ignored_comments_never_ask_the_forge(case: str) -> None:
    facts, reason = PRE_FILTERED[case]
    perms = Permissions(Permission.ADMIN)
    decision = run(facts, perms, handled=(42, 7))
    assert decision == Decision(False, reason, None)
    assert perms.asked == []


@pytest.mark.parametrize("association", ["NONE", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN",
                                         "none", " first_timer "])
def test_association_pre_filter_refuses_without_asking(association: str) -> None:
    perms = Permissions(Permission.ADMIN)
    decision = run(replace(WRITER, association=association), perms)
    assert not decision.run and decision.command == FIX
    assert "needs write access" in decision.reason
    assert perms.asked == []


@pytest.mark.parametrize("association", ["", "CONTRIBUTOR", "COLLABORATOR", "MEMBER", "OWNER"])
def test_other_associations_ask_the_forge_once(association: str) -> None:
    perms = Permissions(Permission.WRITE)
    assert run(replace(WRITER, association=association), perms).run
    assert perms.asked == ["alice"]


@pytest.mark.parametrize("level", [Permission.NONE, Permission.READ, Permission.TRIAGE])
def test_below_write_is_refused(level: Permission) -> None:
    perms = Permissions(level)
    decision = run(perms=perms)
    assert decision == Decision(False, "The author needs write access to run ci-agent commands.", FIX)
    assert perms.asked == ["alice"]


def test_a_human_login_that_merely_mentions_bot_is_a_person() -> None:
    assert not is_bot("robot-fan", False)
    assert not is_bot("my_project_1_bot", False)
    assert is_bot("Renovate[BOT]", False)


def test_rate_limit_counts_only_the_window() -> None:
    old = (NOW - 3600, NOW - 7200, NOW - 5000)
    four = (NOW - 10, NOW - 100, NOW - 1000, NOW - 3599)
    assert run(recent=old + four).run


def test_rate_limit_refuses_the_sixth_command_in_an_hour() -> None:
    perms = Permissions()
    decision = run(perms=perms, recent=(NOW - 1, NOW - 2, NOW - 3, NOW - 4, NOW - 5))
    assert decision == Decision(
        False, "At most 5 commands per hour on one change request; try again later.", FIX)
    assert perms.asked == ["alice"]  # the permission comes first: outsiders learn nothing of it


def test_rate_limit_and_window_are_parameters() -> None:
    recent = (NOW - 30, NOW - 200)
    assert run(recent=recent, rate_limit=3, window_s=600).run
    decision = run(recent=recent, rate_limit=2, window_s=600)
    assert not decision.run and decision.reason.startswith("At most 2 commands per 10 minutes")
    assert run(recent=recent, rate_limit=2, window_s=100).run


def test_refusal_for_a_non_writer_comes_before_the_rate_limit() -> None:
    decision = run(perms=Permissions(Permission.READ), recent=(NOW,) * 10)
    assert "needs write access" in decision.reason


def test_unknown_command_from_a_writer_runs_help() -> None:
    decision = run(replace(WRITER, body="/ci-agent deploy"))
    assert decision.run and decision.command == SlashCommand("help", "", unknown="deploy")
