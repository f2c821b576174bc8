from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from changelog.commits import Commit, kind_of, ticket_of, title_of

SECTIONS = {"feat": "Features", "fix": "Fixes"}


def render(commits: Iterable[Commit]) -> str:
    grouped: dict[str, list[str]] = defaultdict(list)
    for commit in commits:
        kind = kind_of(commit)
        if kind not in SECTIONS:
            continue
        ticket = ticket_of(commit)
        suffix = f" [{ticket}]" if ticket else ""
        grouped[kind].append(f"- {title_of(commit)}{suffix}")
    parts = []
    for kind, heading in SECTIONS.items():
        if grouped[kind]:
            parts.append(f"## {heading}\n" + "\n".join(grouped[kind]))
    return "\n\n".join(parts) + "\n"
