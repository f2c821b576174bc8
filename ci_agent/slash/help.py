"""How the answer to `/ci-agent help` and to an unknown command is written. Pure: the commands
and their lines come from the handler table (`ci_agent.slash.table.help_text`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_SHOWN_UNKNOWN = 40
# What may be echoed of the untrusted word: no mentions, HTML, Markdown, backticks or links.
_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_.-]")


def render_help(usages: Iterable[tuple[str, str]], unknown: str = "") -> str:
    """Markdown listing every (usage, help) pair, one line each; first, when given, that `unknown`
    is not a command (shown reduced to safe characters)."""
    lines: list[str] = []
    if unknown:
        lines += [f"`/ci-agent {_shown(unknown)}` is not a command.", ""]
    lines.append("Commands (at the start of a line of a comment; people with write access only):")
    lines += [f"- `/ci-agent {usage}`: {text}" for usage, text in usages]
    return "\n".join(lines) + "\n"


def _shown(word: str) -> str:
    safe = _UNSAFE_RE.sub("?", word)
    return safe if len(safe) <= _SHOWN_UNKNOWN else safe[:_SHOWN_UNKNOWN] + "..."
