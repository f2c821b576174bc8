"""The history section's edge: read the change under test from git (`ci_agent.gitfacts`),
clean every piece, and let `history` filter and rank it: messages and names are sanitised and
redacted; the diff's lines are redacted and shown exactly, specials marked (`ci_agent.exact`, as
excerpts are), so a context line copied from a hunk applies. Files skipped by
name or size are never read; an initial import is never read either, only listed."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

from ci_agent import exact
from ci_agent.config import ContextSettings
from ci_agent.context.history import (
    Change,
    FileChange,
    is_import,
    marked_generated,
    rank_files,
    report_paths,
    report_symbols,
    skip_reason,
    split_section,
)
from ci_agent.context.render import SAY
from ci_agent.git import GitError
from ci_agent.gitfacts import (
    ChangedFile,
    ChangeRange,
    change_range,
    changed_files,
    commit_messages,
    file_patches,
)
from ci_agent.redact import sanitize_untrusted
from ci_agent.report import Report

Clean = Callable[[str], str]


def shown_path(path: str, clean: Clean) -> str:
    """A path for the model: as is when it is plain, JSON-quoted when it holds control or odd
    characters (a newline in a file name must not start a line of ours)."""
    plain = path.isprintable() and sanitize_untrusted(path) == path
    return clean(path if plain else json.dumps(path, ensure_ascii=True))


def _exact(text: str, redact: Clean) -> str:
    """Patch text as the model is shown it: redacted, specials marked; the CRs of a CRLF file
    dropped when every line of its hunk has one (as for an excerpt), a lone CR marked."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    content = [k for k, line in enumerate(lines) if line[:1] in (" ", "+", "-") and not line.startswith(
        ("--- ", "+++ "))]
    if content and all(lines[k].endswith("\r") for k in content):
        for k in content:
            lines[k] = lines[k][:-1]
    shown, _ = exact.show_lines(lines, redact)
    return "".join(line + "\n" for line in shown)


def read_change(repo: Path, change: ChangeRange, title: str, exclude: Sequence[str], redact: Clean,
                named: Collection[str], symbols: Sequence[str]) -> Change:
    """The change under test, cleaned, filtered and ranked; git errors propagate (`GitError`)."""

    def clean(text: str) -> str:
        return redact(sanitize_untrusted(text))

    raw, commits = commit_messages(repo, change)
    messages = tuple(clean(f"commit {m.oid[:12]}: {m.text}") for m in raw)
    kept: list[tuple[ChangedFile, FileChange]] = []
    skipped: list[tuple[str, str]] = []
    for entry in changed_files(repo, change, exclude):
        shown = shown_path(entry.path, clean)
        if entry.old_path is not None:
            shown = f"{shown_path(entry.old_path, clean)} -> {shown}"
        lines = (entry.added or 0) + (entry.deleted or 0)
        reason = skip_reason(entry.path, entry.added is None, lines)
        if reason is not None:
            skipped.append((shown, reason))
        else:
            kept.append((entry, FileChange(entry.path, shown, entry.status, entry.added, entry.deleted)))
    why = is_import(change.root, [f for _, f in kept])
    files = [f for _, f in kept]
    if not why:
        sections = file_patches(repo, change, [e for e, _ in kept])
        if sections is None:
            why = "its patch could not be split by file"
        else:
            files = []
            for (_, f), section in zip(kept, sections, strict=True):
                header, hunks = split_section(section)  # split raw: cleaning cannot forge a hunk
                if marked_generated(hunks):
                    skipped.append((f.shown, "generated"))
                else:
                    files.append(replace(f, header=_exact(header, redact),
                                         hunks=tuple(_exact(h, redact) for h in hunks)))
    return Change(title, messages, commits, tuple(rank_files(files, named, symbols)), tuple(skipped),
                  bool(why), why)


def read_history(repo: Path, report: Report, settings: ContextSettings, redact: Clean, revision: str,
                 base_ref: str | None, named: Collection[str]) -> tuple[Change | None, list[str]]:
    """The change under test for `report` (None when git cannot tell), and notes for the model."""

    def clean(text: str) -> str:
        return redact(sanitize_untrusted(text))

    notes: list[str] = []
    try:
        change, note = change_range(repo, revision, base_ref)
        if note:
            notes.append(clean(note))
        if change is None:
            return None, notes
        title = clean(SAY("diff_title", revision=change.revision[:12], against=change.against,
                          base=change.base[:12]))
        return read_change(repo, change, title, settings.exclude_globs, redact,
                           {*named, *report_paths(report)}, report_symbols(report)), notes
    except GitError as exc:
        return None, [*notes, clean(SAY("history_unavailable", error=str(exc)))]
