"""The answer to `/ci-agent help` and to an unknown command. Pure."""

from __future__ import annotations

import re

from ci_agent.slash.parse import COMMANDS

COMMAND_HELP = {
    "fix": ("fix [instructions]", "run a fix attempt now, following your instructions "
            "(same budget and patch policy)."),
    "explain": ("explain", "post a root-cause analysis of the latest failure, without a patch."),
    "retry": ("retry", "start a new count of attempts after an escalation, and run again."),
    "stop": ("stop", "pause automatic attempts on this branch (label `ci-agent:paused`)."),
    "resume": ("resume", "resume automatic attempts on this branch."),
    "status": ("status", "show the attempts made, the budget left and the tokens spent."),
    "apply": ("apply", "apply exactly the patch ci-agent last proposed in a comment."),
    "help": ("help", "show this list."),
}

_SHOWN_UNKNOWN = 40
# What may be echoed of the untrusted word: no mentions, HTML, Markdown, backticks or links.
_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_.-]")


def help_text(unknown: str = "") -> str:
    """Markdown listing every command, one line each; first, when given, that `unknown` is not a
    command (shown reduced to safe characters)."""
    lines: list[str] = []
    if unknown:
        lines += [f"`/ci-agent {_shown(unknown)}` is not a command.", ""]
    lines.append("Commands (at the start of a line of a comment; people with write access only):")
    lines += [f"- `/ci-agent {COMMAND_HELP[name][0]}`: {COMMAND_HELP[name][1]}" for name in COMMANDS]
    return "\n".join(lines) + "\n"


def _shown(word: str) -> str:
    safe = _UNSAFE_RE.sub("?", word)
    return safe if len(safe) <= _SHOWN_UNKNOWN else safe[:_SHOWN_UNKNOWN] + "..."
