"""What a comment asks of ci-agent: which comment to act on (from the event) and the command found
in it (from its body). Values only."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandRequest:
    """Which comment to act on. Only ids come from the event: the body and author are read back
    from the forge."""

    number: int  # the change request the comment is on
    comment_id: int
    action: str = "created"  # created | edited (edits never run a command)
    association: str = ""  # GitHub's author_association, a pre-filter only
    review: bool = False  # a GitHub review (diff) comment


@dataclass(frozen=True)
class SlashCommand:
    """A command found in a comment. `unknown` holds the word given when it is not a command
    (untrusted, capped; `name` is then `help`)."""

    name: str
    args: str
    unknown: str = ""
