from __future__ import annotations

import re
from dataclasses import dataclass

TICKET = re.compile(r"\b([A-Z][A-Z0-9]+-\d+)\b")
KIND = re.compile(r"^(feat|fix|docs|chore|refactor)(\([\w-]+\))?!?:\s*")


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


def ticket_of(commit: Commit) -> str | None:
    """The first ticket id the subject mentions ("fix: crash on empty cart (SHOP-142)")."""
    found = TICKET.findall(commit.subject)
    return found[0] if found else None


def kind_of(commit: Commit) -> str:
    match = KIND.match(commit.subject)
    return match.group(1) if match else "other"


def title_of(commit: Commit) -> str:
    return KIND.sub("", commit.subject, count=1).strip()
