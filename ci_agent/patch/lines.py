"""A file diff's added and removed lines with their line numbers, for rules that must say where.

Added lines are numbered as in the new file, removed lines as in the old one; a run of
consecutive added lines is also given joined (`blocks`), for constructs written over several
lines (`[Fact(\n    Skip = "...")]`, `catch\n{\n}`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ci_agent.patch.diff import FilePatch


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    text: str


def added(fp: FilePatch) -> list[Line]:
    """The added lines, numbered as in the new file."""
    return _one_side(fp, "+")


def removed(fp: FilePatch) -> list[Line]:
    """The removed lines, numbered as in the old file."""
    return _one_side(fp, "-")


def _one_side(fp: FilePatch, mark: str) -> list[Line]:
    out: list[Line] = []
    for hunk in fp.hunks:
        number = hunk.new_start if mark == "+" else hunk.old_start
        for line in hunk.lines:
            if line[:1] == mark:
                out.append(Line(number, line[1:].rstrip("\r")))
            if line[:1] in (mark, " "):
                number += 1
    return out


def message(fp: FilePatch, line: Line, what: str, how: str) -> str:
    """A gate's rejection text: where (file and line), what the line does, how to comply."""
    return f"`{fp.path}` line {line.number}: {what} (`{line.text.strip()[:80]}`). {how}"


def new_side(fp: FilePatch) -> Iterator[tuple[bool, Line]]:
    """Each hunk's lines as the new file has them (context and added), with `True` for added;
    a `Line(0, "")` separates hunks, since what lies between them is unknown."""
    for hunk in fp.hunks:
        number = hunk.new_start
        for line in hunk.lines:
            if line[:1] in ("+", " "):
                yield line[:1] == "+", Line(number, line[1:].rstrip("\r"))
                number += 1
        yield False, Line(0, "")


def blocks(fp: FilePatch) -> list[Line]:
    """Runs of consecutive added lines, joined with newlines, numbered by their first line."""
    out: list[Line] = []
    current: list[Line] = []
    for is_added, line in new_side(fp):
        if is_added:
            current.append(line)
            continue
        if current:
            out.append(Line(current[0].number, "\n".join(c.text for c in current)))
            current = []
    return out


def first(lines: list[Line], pattern: re.Pattern[str]) -> Line | None:
    """The first line `pattern` finds something in."""
    return next((line for line in lines if pattern.search(line.text)), None)
