"""Gather what the model is shown besides the report: excerpts of the files the report names,
and git facts. Every line read is sanitised then redacted here; `fit` then keeps what fits."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ci_agent.config import ContextSettings
from ci_agent.context.fit import fit
from ci_agent.context.history import Change
from ci_agent.context.history_read import read_history
from ci_agent.context.render import SAY
from ci_agent.context.values import Context, Excerpt, GitContext
from ci_agent.git import GitError, git
from ci_agent.gitfacts import read_status, summarize_status
from ci_agent.patch.policy import glob_match
from ci_agent.paths import RepoPaths, parse_frame
from ci_agent.redact import sanitize_untrusted
from ci_agent.report import Report, Severity

Redact = Callable[[str], str]

_FRAMES_PER_FAILURE = 5
_READ_WHOLE_CAP = 4 << 20  # bigger files are streamed and only the needed windows kept
_LINE_CHARS = 400
_CODE_RE = re.compile(r"[^\w.-]")


@dataclass(slots=True)
class _Target:
    line: int | None
    priority: int
    reason: str
    wants_whole: bool


@dataclass(slots=True)
class _Gathering:
    excerpts: list[Excerpt] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- targets


def _targets(report: Report) -> dict[str, list[_Target]]:
    """Lines worth showing, per repo-relative file, in report order (errors come first)."""
    found: dict[str, list[_Target]] = {}

    def add(path: str, line: int | None, priority: int, reason: str, wants_whole: bool) -> None:
        found.setdefault(path, []).append(_Target(line, priority, reason, wants_whole))

    for diag in report.diagnostics:
        if not (diag.in_repo and diag.file):
            continue
        is_error = diag.severity == Severity.ERROR
        reason = SAY("diagnostic_reason", severity=diag.severity.value, line=diag.line,
                     code=_CODE_RE.sub("", diag.code) if diag.code else None)
        add(diag.file, diag.line, 0 if is_error else 1, reason, is_error)
    no_root = RepoPaths(None)
    for failure in report.failures:
        frames = [f for f in (parse_frame(t, no_root) for t in failure.frames)
                  if f is not None and f.in_repo and f.file and f.line]
        spots = [(f.file, f.line) for f in frames][:_FRAMES_PER_FAILURE]
        if failure.file and (failure.file, failure.line) not in spots:
            spots.insert(0, (failure.file, failure.line))
        for path, line in spots:
            if path is not None:
                add(path, line, 0, SAY("frame_reason", line=line), True)
    return found


def _resolve_suffixes(repo_real: str, targets: dict[str, list[_Target]],
                      notes: list[str]) -> dict[str, list[_Target]]:
    """A path that does not exist at the root but is the tail of exactly one tracked file is that
    file: tools run in a subdirectory (a monorepo's `python/`, a solution folder) print paths
    relative to where they ran."""
    missing = [rel for rel in targets
               if "\0" not in rel and not os.path.lexists(os.path.join(repo_real, rel))]
    if not missing:
        return targets
    listing = git(repo_real, ["ls-files", "-z"])
    tracked = [p for p in listing.stdout.split("\0") if p] if listing.ok else []
    resolved: dict[str, list[_Target]] = {}
    for rel, file_targets in targets.items():
        if rel in missing:
            tails = [p for p in tracked if p.endswith("/" + rel)]
            if len(tails) == 1:
                notes.append(SAY("shown_as", path=rel, tracked=tails[0]))
                rel = tails[0]
            elif len(tails) > 1:
                notes.append(SAY("not_shown", path=rel, why=SAY("several_tails", count=len(tails))))
        resolved.setdefault(rel, []).extend(file_targets)
    return resolved


# --------------------------------------------------------------------------- files


def _refusal(repo_real: str, rel: str, exclude: Iterable[str]) -> str | None:
    """Why `rel` may not be shown, or None when it may."""
    parts = rel.split("/")
    if "\0" in rel or rel.startswith("/") or ".." in parts or any(p.casefold() == ".git" for p in parts):
        return SAY("outside")
    for glob in exclude:
        if glob_match(rel, glob, fold_case=True):
            return SAY("excluded", glob=glob)
    real = os.path.realpath(os.path.join(repo_real, rel))
    if os.path.commonpath([repo_real, real]) != repo_real:
        return SAY("link_out")
    target = os.path.relpath(real, repo_real).replace(os.sep, "/")
    if target != rel:  # a link inside the repository: what it points at must be showable too
        if any(p.casefold() == ".git" for p in target.split("/")):
            return SAY("link_into_git")
        for glob in exclude:
            if glob_match(target, glob, fold_case=True):
                return SAY("link_to_excluded", glob=glob)
    if not os.path.isfile(real):
        return SAY("not_found")
    return None


def _clean(text: str, redact: Redact) -> str:
    return redact(sanitize_untrusted(text))


def _cap(line: str) -> str:
    if len(line) <= _LINE_CHARS:
        return line
    return SAY("long_line", head=line[:_LINE_CHARS], more=len(line) - _LINE_CHARS)


def _read_lines(path: str, size: int, ranges: list[tuple[int, int]], redact: Redact) -> list[str] | None:
    """Lines of the file (index 0 = line 1), cleaned; None for a binary file. A file too big to
    read whole is streamed and only the lines inside `ranges` are kept (others are empty)."""
    if size <= _READ_WHOLE_CAP:
        with open(path, "rb") as fh:
            data = fh.read()
        if b"\0" in data[:8192]:
            return None
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        # Clean line by line would miss a secret spanning lines; clean the whole and re-split
        # (sanitising and redaction keep line structure, except for odd line separators).
        cleaned = _clean("\n".join(line.removesuffix("\r") for line in lines), redact).split("\n")
        if len(cleaned) == len(lines):
            return cleaned
        return [_clean(line, redact).replace("\n", " ") for line in lines]
    last = max(end for _, end in ranges)
    kept: list[str] = []
    with open(path, encoding="utf-8", errors="replace", newline="\n") as fh:
        for number, line in enumerate(fh, 1):
            if number > last:
                break
            if number == 1 and "\0" in line[:8192]:
                return None
            inside = any(start <= number <= end for start, end in ranges)
            text = line.rstrip("\n").removesuffix("\r")
            kept.append(_clean(text, redact).replace("\n", " ") if inside else "")
    return kept


def _windows(targets: list[_Target], around: int, total: int) -> list[tuple[int, int, list[_Target]]]:
    spans = sorted(((max(1, (t.line or 1) - around), min(total, (t.line or 1) + around), t) for t in targets
                    if (t.line or 1) <= total), key=lambda span: (span[0], span[1]))
    merged: list[tuple[int, int, list[_Target]]] = []
    for start, end, target in spans:
        if merged and start <= merged[-1][1] + 1:
            prev = merged[-1]
            merged[-1] = (prev[0], max(prev[1], end), [*prev[2], target])
        else:
            merged.append((start, end, [target]))
    return merged


def _file_excerpts(repo_real: str, rel: str, targets: list[_Target], settings: ContextSettings,
                   redact: Redact, out: _Gathering) -> None:
    why = _refusal(repo_real, rel, settings.exclude_globs)
    if why is not None:
        out.notes.append(SAY("not_shown", path=rel, why=why))
        return
    path = os.path.join(repo_real, rel)
    around = settings.excerpt_lines
    guess = [(max(1, (t.line or 1) - around), (t.line or 1) + around) for t in targets]
    try:
        size = os.path.getsize(path)
        lines = _read_lines(path, size, guess, redact)
    except OSError as exc:
        out.notes.append(SAY("not_shown", path=rel, why=SAY("unreadable", error=exc.strerror or exc)))
        return
    whole = any(t.wants_whole for t in targets) and size <= settings.whole_file_bytes
    if lines is None:
        out.notes.append(SAY("not_shown", path=rel, why=SAY("binary")))
        return
    total = len(lines)
    for t in targets:
        if t.line and t.line > total:
            out.notes.append(SAY("past_the_end", path=rel, line=t.line, total=total))
    spans = [(1, total, targets)] if whole and total else _windows(targets, around, total)
    for start, end, inside in spans:
        out.excerpts.append(Excerpt(
            path=rel, start=start, end=end, lines=tuple(_cap(x) for x in lines[start - 1:end]),
            reasons=tuple(dict.fromkeys(t.reason for t in inside)),
            priority=min(t.priority for t in inside), whole_file=whole,
        ))


# --------------------------------------------------------------------------- git


def _git_context(repo: Path, settings: ContextSettings, redact: Redact, revision: str, base_ref: str | None,
                 report: Report, named: Collection[str]) -> tuple[GitContext | None, Change | None,
                                                                  list[str]]:
    """(summary-only GitContext, the change under test ranked for `report`, notes)."""
    try:
        summary = _clean(summarize_status(read_status(repo)), redact)
    except GitError as exc:
        return None, None, [SAY("git_unavailable", error=_clean(str(exc), redact))]
    if settings.diff_bytes == 0:
        return GitContext(summary), None, []
    change, notes = read_history(repo, report, settings, lambda text: _clean(text, redact), revision,
                                 base_ref or settings.base_ref, named)
    return GitContext(summary), change, notes


# --------------------------------------------------------------------------- gather


def gather_context(repo: Path, report: Report, settings: ContextSettings, redactor: Redact, *,
                   revision: str = "HEAD", base_ref: str | None = None) -> Context:
    """Excerpts and git facts for `report`, read from the work tree at `repo`, within
    `settings.max_bytes` once rendered. `redactor` is a `Redactor` (or any str -> str)."""
    repo_real = os.path.realpath(repo)
    got = _Gathering()
    targets = _resolve_suffixes(repo_real, _targets(report), got.notes)
    for rel, file_targets in targets.items():
        _file_excerpts(repo_real, rel, file_targets, settings, redactor, got)
    git_ctx, change, git_notes = _git_context(Path(repo_real), settings, redactor, revision, base_ref,
                                              report, set(targets))
    got.notes.extend(git_notes)
    return fit(got.excerpts, got.notes, git_ctx, change, settings)
