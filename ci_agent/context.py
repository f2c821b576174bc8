"""What the model is shown besides the report: source excerpts and git facts, bounded and clean.

- Excerpts: ±`excerpt_lines` around each in-repo diagnostic and each project stack frame of a
  failed test (at most `_FRAMES_PER_FAILURE` per test), merged per file when they overlap or
  touch. A file named by an error or a failing frame that is at most `whole_file_bytes` is shown
  whole. Only regular files inside the repository (real paths checked, so a symlink out of it is
  refused), never `.git/`, never a file matching the exclude globs (`ContextSettings.exclude_globs`,
  which always include the secret-file globs). A path printed relative to a subdirectory the tool
  ran in is matched to the one tracked file it is the tail of (noted), or not shown when several.
- Git: a summary of `git status --porcelain=v2 --branch` and the failing commit's diff against
  its parent (or the merge base with `base_ref`), bounded by `diff_bytes`, exclude globs honoured.
- Everything that came from the repository or a log is sanitised (`sanitize_untrusted`) then
  redacted, and rendered inside `fence` blocks. The whole rendering stays within `max_bytes`:
  errors and failing frames first, then the diff, then warnings; what does not fit is named in
  an "omitted" note so the model knows to ask for it with its read-only tools.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ci_agent.config import ContextSettings
from ci_agent.git import GitError, git
from ci_agent.gitfacts import commit_diff, read_status, split_file_diffs, summarize_status
from ci_agent.patch.policy import glob_match
from ci_agent.paths import RepoPaths, parse_frame
from ci_agent.redact import fence, sanitize_untrusted
from ci_agent.report import Report, Severity

Redact = Callable[[str], str]

_FRAMES_PER_FAILURE = 5
_READ_WHOLE_CAP = 4 << 20  # bigger files are streamed and only the needed windows kept
_LINE_CHARS = 400
_NOTES_RESERVE = 700  # bytes kept free for the headings and the omitted/notes section
_MAX_NOTES = 8
_MIN_DIFF_BYTES = 256
_CODE_RE = re.compile(r"[^\w.-]")


@dataclass(frozen=True, slots=True)
class Excerpt:
    path: str
    start: int  # first line shown, 1-based
    end: int  # last line shown
    lines: tuple[str, ...]  # sanitised and redacted
    reasons: tuple[str, ...]
    priority: int  # 0: errors and failing tests; 1: warnings and infos
    whole_file: bool = False


@dataclass(frozen=True, slots=True)
class GitContext:
    summary: str  # sanitised and redacted
    diff_title: str | None = None
    diff: str | None = None
    diff_note: str | None = None


@dataclass(frozen=True, slots=True)
class Context:
    excerpts: tuple[Excerpt, ...] = ()
    git: GitContext | None = None
    omitted: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Target:
    line: int | None
    priority: int
    reason: str
    wants_whole: bool


@dataclass(slots=True)
class _Gathering:
    excerpts: list[Excerpt] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
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
        code = f" ({_CODE_RE.sub('', diag.code)})" if diag.code else ""
        where = f" at line {diag.line}" if diag.line else ""
        add(diag.file, diag.line, 0 if is_error else 1, f"{diag.severity.value}{code}{where}", is_error)
    no_root = RepoPaths(None)
    for failure in report.failures:
        frames = [f for f in (parse_frame(t, no_root) for t in failure.frames)
                  if f is not None and f.in_repo and f.file and f.line]
        spots = [(f.file, f.line) for f in frames][:_FRAMES_PER_FAILURE]
        if failure.file and (failure.file, failure.line) not in spots:
            spots.insert(0, (failure.file, failure.line))
        for path, line in spots:
            if path is not None:
                add(path, line, 0, f"failing test frame at line {line}" if line else "failing test", True)
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
                notes.append(f"{rel}: shown as {tails[0]} (the only tracked file ending so)")
                rel = tails[0]
            elif len(tails) > 1:
                notes.append(f"{rel}: not shown ({len(tails)} tracked files end with this path)")
        resolved.setdefault(rel, []).extend(file_targets)
    return resolved


# --------------------------------------------------------------------------- files


def _refusal(repo_real: str, rel: str, exclude: Iterable[str]) -> str | None:
    """Why `rel` may not be shown, or None when it may."""
    parts = rel.split("/")
    if "\0" in rel or rel.startswith("/") or ".." in parts or any(p.casefold() == ".git" for p in parts):
        return "outside the repository"
    for glob in exclude:
        if glob_match(rel, glob, fold_case=True):
            return f"excluded by {glob!r}"
    real = os.path.realpath(os.path.join(repo_real, rel))
    if os.path.commonpath([repo_real, real]) != repo_real:
        return "a link out of the repository"
    target = os.path.relpath(real, repo_real).replace(os.sep, "/")
    if target != rel:  # a link inside the repository: what it points at must be showable too
        if any(p.casefold() == ".git" for p in target.split("/")):
            return "a link into .git"
        for glob in exclude:
            if glob_match(target, glob, fold_case=True):
                return f"a link to a file excluded by {glob!r}"
    if not os.path.isfile(real):
        return "not found in the repository"
    return None


def _clean(text: str, redact: Redact) -> str:
    return redact(sanitize_untrusted(text))


def _cap(line: str) -> str:
    if len(line) <= _LINE_CHARS:
        return line
    return f"{line[:_LINE_CHARS]}… [{len(line) - _LINE_CHARS} more characters]"


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
        out.notes.append(f"{rel}: not shown ({why})")
        return
    path = os.path.join(repo_real, rel)
    around = settings.excerpt_lines
    guess = [(max(1, (t.line or 1) - around), (t.line or 1) + around) for t in targets]
    try:
        size = os.path.getsize(path)
        lines = _read_lines(path, size, guess, redact)
    except OSError as exc:
        out.notes.append(f"{rel}: not shown (cannot be read: {exc.strerror or exc})")
        return
    whole = any(t.wants_whole for t in targets) and size <= settings.whole_file_bytes
    if lines is None:
        out.notes.append(f"{rel}: not shown (binary file)")
        return
    total = len(lines)
    for t in targets:
        if t.line and t.line > total:
            out.notes.append(f"{rel}: line {t.line} is past the end of the file ({total} lines)")
    spans = [(1, total, targets)] if whole and total else _windows(targets, around, total)
    for start, end, inside in spans:
        out.excerpts.append(Excerpt(
            path=rel, start=start, end=end, lines=tuple(_cap(x) for x in lines[start - 1:end]),
            reasons=tuple(dict.fromkeys(t.reason for t in inside)),
            priority=min(t.priority for t in inside), whole_file=whole,
        ))


# --------------------------------------------------------------------------- git


def _git_context(repo: Path, settings: ContextSettings, redact: Redact, revision: str,
                 base_ref: str | None) -> tuple[GitContext | None, str | None, list[str]]:
    """(summary-only GitContext, the full cleaned diff text, notes)."""
    try:
        summary = _clean(summarize_status(read_status(repo)), redact)
    except GitError as exc:
        return None, None, [f"git facts unavailable: {_clean(str(exc), redact)}"]
    diff, note = commit_diff(repo, revision, base_ref or settings.base_ref, settings.exclude_globs)
    notes = [_clean(note, redact)] if note else []
    if diff is None or settings.diff_bytes == 0:
        return GitContext(summary), None, notes
    title = _clean(f"Diff of the failing commit {diff.revision[:12]} against {diff.against} "
                   f"({diff.base[:12]})", redact)
    if not diff.text.strip():
        return GitContext(summary, title, "", "the diff is empty"), None, notes
    return GitContext(summary, title), _clean(diff.text, redact), notes


def bound_diff(text: str, limit: int, first: Collection[str] = ()) -> tuple[str, str | None]:
    """The diff cut to at most `limit` bytes at a line boundary, and a note naming what was cut.
    Files in `first` (those the report names) go first, so the bound cuts the others."""
    if len(text.encode()) <= limit:
        return text, None
    sections = split_file_diffs(text) or [("", text)]
    sections.sort(key=lambda item: item[0] not in first)  # stable: git's order otherwise
    shown: list[str] = []
    used = 0
    cut: list[str] = []
    for path, section in sections:
        size = len(section.encode())
        if not cut and used + size <= limit:
            shown.append(section)
            used += size
            continue
        if not cut and limit - used >= _MIN_DIFF_BYTES:
            head = section.encode()[: limit - used].decode("utf-8", errors="ignore")
            shown.append(head[: head.rfind("\n") + 1])
            used = limit
        cut.append(path)
    names = ", ".join(cut[:5]) + (f" and {len(cut) - 5} more" if len(cut) > 5 else "")
    return "".join(shown), f"diff cut at {limit} bytes; not shown in full: {names}"


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
    git_ctx, diff_text, git_notes = _git_context(Path(repo_real), settings, redactor, revision, base_ref)
    got.notes.extend(git_notes)
    return _fit(got, git_ctx, diff_text, settings, set(targets))


def _fit(got: _Gathering, git_ctx: GitContext | None, diff_text: str | None,
         settings: ContextSettings, named: Collection[str]) -> Context:
    """Keep what fits in `max_bytes`: errors/failing frames, then the diff, then warnings."""
    limit = settings.max_bytes
    budget = limit - _NOTES_RESERVE - len(render_context(Context(git=git_ctx)).encode())
    kept: list[Excerpt] = []
    omitted: list[str] = []
    ordered = sorted(got.excerpts, key=lambda e: e.priority)

    def take(ex: Excerpt) -> None:
        nonlocal budget
        size = len(_render_excerpt(ex).encode())
        if size <= budget:
            kept.append(ex)
            budget -= size
        else:
            omitted.append(f"{ex.path}:{ex.start}-{ex.end}")

    for ex in (e for e in ordered if e.priority == 0):
        take(ex)
    if git_ctx is not None and diff_text is not None:
        room = min(settings.diff_bytes, budget - 200)
        if room >= _MIN_DIFF_BYTES:
            shown, note = bound_diff(diff_text, room, named)
            git_ctx = replace(git_ctx, diff=shown, diff_note=note)
            budget -= len(_render_diff(git_ctx).encode())
        else:
            omitted.append("the failing commit's diff")
    for ex in (e for e in ordered if e.priority > 0):
        take(ex)
    context = Context(tuple(_in_report_order(kept, got.excerpts)), git_ctx, _summarise(omitted, limit),
                      _capped_notes(got.notes))
    return _shrink(context, omitted, limit)


def _shrink(context: Context, omitted: list[str], limit: int) -> Context:
    """Last resort when the estimate was off: drop the least important excerpt, then the diff,
    then notes, until the rendering fits."""
    while len(render_context(context).encode()) > limit:
        if context.excerpts:
            worst = max(range(len(context.excerpts)), key=lambda i: (context.excerpts[i].priority, i))
            gone = context.excerpts[worst]
            omitted.append(f"{gone.path}:{gone.start}-{gone.end}")
            excerpts = context.excerpts[:worst] + context.excerpts[worst + 1:]
            context = replace(context, excerpts=excerpts, omitted=_summarise(omitted, limit))
        elif context.git is not None and context.git.diff:
            omitted.append("the failing commit's diff")
            git_ctx = replace(context.git, diff_title=None, diff=None, diff_note=None)
            context = replace(context, git=git_ctx, omitted=_summarise(omitted, limit))
        elif context.notes:
            context = replace(context, notes=context.notes[:-1])
        else:
            break
    return context


def _in_report_order(kept: list[Excerpt], everything: list[Excerpt]) -> list[Excerpt]:
    chosen = {id(e) for e in kept}
    return [e for e in everything if id(e) in chosen]


def _summarise(omitted: list[str], limit: int) -> tuple[str, ...]:
    if not omitted:
        return ()
    names = ", ".join(omitted[:5]) + (f" and {len(omitted) - 5} more" if len(omitted) > 5 else "")
    return (f"{len(omitted)} more item(s) omitted to stay within {limit} bytes: {names}. "
            "Use the read_file tool to see them.",)


def _capped_notes(notes: list[str]) -> tuple[str, ...]:
    unique = list(dict.fromkeys(notes))
    if len(unique) <= _MAX_NOTES:
        return tuple(unique)
    return (*unique[:_MAX_NOTES], f"{len(unique) - _MAX_NOTES} more note(s) omitted")


# --------------------------------------------------------------------------- render


def _plain(text: str) -> str:
    """Text from the repository put outside a fence (headings): one line, tame characters."""
    return re.sub(r"[^\w .,:;/@+()#'=*?!-]", "_", sanitize_untrusted(text).replace("\n", " "))[:300]


def _render_excerpt(ex: Excerpt) -> str:
    width = len(str(ex.end))
    body = "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(ex.lines, ex.start))
    span = "whole file" if ex.whole_file else f"lines {ex.start}-{ex.end}"
    heading = f"### {_plain(ex.path)} ({span}): {_plain('; '.join(ex.reasons))}"
    return f"{heading}\n{fence(f'{ex.path}:{ex.start}-{ex.end}', body)}\n\n"


def _render_diff(git_ctx: GitContext) -> str:
    if git_ctx.diff_title is None or git_ctx.diff is None:
        return ""
    note = f"\n({_plain(git_ctx.diff_note)})" if git_ctx.diff_note else ""
    body = fence("git diff", git_ctx.diff) if git_ctx.diff else "(empty)"
    return f"### {_plain(git_ctx.diff_title)}\n{body}{note}\n\n"


def render_context(ctx: Context) -> str:
    """The context as Markdown for the user turn; repository text only inside fences."""
    parts: list[str] = []
    if ctx.excerpts:
        parts.append("## Source excerpts\n\nLine numbers are shown left of `|`; they are not part "
                     "of the file.\n\n")
        parts.extend(_render_excerpt(ex) for ex in ctx.excerpts)
    if ctx.git is not None:
        parts.append(f"## Git\n\n{fence('git status', ctx.git.summary)}\n\n")
        parts.append(_render_diff(ctx.git))
    if ctx.omitted or ctx.notes:
        parts.append("## Omitted and notes\n\n")
        parts.extend(f"- {_plain(line)}\n" for line in (*ctx.omitted, *ctx.notes))
    return "".join(parts).rstrip("\n") + "\n" if parts else ""
