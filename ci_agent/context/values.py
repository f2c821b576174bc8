"""The context as values: what `gather` found, `fit` kept and `render` writes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Excerpt:
    path: str
    start: int  # first line shown, 1-based
    end: int  # last line shown
    lines: tuple[str, ...]  # the file's text, redacted, specials marked (`ci_agent.exact`)
    reasons: tuple[str, ...]
    priority: int  # 0: errors and failing tests; 1: warnings and infos
    whole_file: bool = False
    redacted: tuple[int, ...] = ()  # lines a secret was cut from: not the file's text


@dataclass(frozen=True, slots=True)
class GitContext:
    summary: str  # sanitised and redacted
    diff_title: str | None = None  # the history section: the change under test (`history`)
    diff: str | None = None  # the hunks kept, best-ranked files first
    diff_note: str | None = None  # what was cut, or why the diff is only listed
    messages: str = ""  # its commit messages, bounded
    listing: str = ""  # its changed files, one a line, best rank first
    skipped: str = ""  # the files left out by name, with the reason, one line


@dataclass(frozen=True, slots=True)
class Context:
    excerpts: tuple[Excerpt, ...] = ()
    git: GitContext | None = None
    omitted: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
