"""Whether a comment's command runs: decided in code, before any model call. Pure: the one
question that needs the forge (the author's permission) is a callable, asked last and at most
once, so comments that are ignored or pre-filtered never cost an API call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from ci_agent.engine.forge import Permission
from ci_agent.slash.parse import parse_command
from ci_agent.slash.request import SlashCommand

# GitHub author_association values that can never hold write access: refused without asking.
NO_WRITE_ASSOCIATIONS = frozenset({"NONE", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN"})
# GitLab project and group access tokens act as `project_<id>_bot...` / `group_<id>_bot...` users.
_GITLAB_BOT_RE = re.compile(r"(?:project|group)_\d+_bot", re.IGNORECASE)


@dataclass(frozen=True)
class CommentFacts:
    """What the gate needs to know about a comment (from the event or the forge)."""

    id: int
    author: str
    author_is_bot: bool
    body: str
    action: str  # "created" | "edited" | ...
    association: str = ""  # GitHub's author_association; "" on GitLab (unknown: ask the forge)


@dataclass(frozen=True)
class Decision:
    """`run` or not, and why (a sentence for the status comment or the log). `command` is None
    when the comment is ignored silently, set when it runs or is refused (the caller answers)."""

    run: bool
    reason: str
    command: SlashCommand | None


def decide(
    facts: CommentFacts,
    *,
    commands: Mapping[str, Permission],
    own_login: str,
    permission: Callable[[str], Permission],
    handled: Collection[int],
    recent: Sequence[float],
    now: float,
    rate_limit: int = 5,
    window_s: float = 3600,
) -> Decision:
    """The gate, in order: ignore what is not a new command from a person; refuse who may not
    write, without asking the forge when the association already says so; then the rate limit
    (`recent`: times of the commands run on this change request). `commands`: the handler table's
    names, each with the least permission that may run it (`ci_agent.slash.table.MAY_RUN`)."""
    if facts.action != "created":
        return _ignore("Edited comments never run a command.")
    if facts.author.casefold() == own_login.casefold():
        return _ignore("The comment is ci-agent's own.")
    if is_bot(facts.author, facts.author_is_bot):
        return _ignore("Comments by bots never run a command.")
    command = parse_command(facts.body, commands)
    if command is None:
        return _ignore("The comment holds no /ci-agent command.")
    if facts.id in handled:
        return _ignore("This comment was already handled.")
    needed = commands[command.name]
    if needed >= Permission.WRITE and facts.association.strip().upper() in NO_WRITE_ASSOCIATIONS:
        return _refuse(command, "The author needs write access to run ci-agent commands.")
    if permission(facts.author) < needed:
        return _refuse(command, f"The author needs {needed.name.lower()} access to run ci-agent commands.")
    if len([t for t in recent if now - t < window_s]) >= rate_limit:
        return _refuse(command, f"At most {rate_limit} commands per {_window(window_s)} "
                                "on one change request; try again later.")
    return Decision(True, f"/ci-agent {command.name} accepted.", command)


def is_bot(author: str, flagged: bool) -> bool:
    """A bot by the forge's flag, GitHub's `[bot]` login suffix or GitLab's token-user names."""
    return (flagged or author.casefold().endswith("[bot]")
            or _GITLAB_BOT_RE.match(author) is not None)


def _ignore(reason: str) -> Decision:
    return Decision(False, reason, None)


def _refuse(command: SlashCommand, reason: str) -> Decision:
    return Decision(False, reason, command)


def _window(window_s: float) -> str:
    if window_s == 3600:
        return "hour"
    if window_s % 60 == 0:
        return f"{int(window_s // 60)} minutes"
    return f"{window_s:g} seconds"
