"""Gather what the model is shown besides the report: excerpts of the files the report names,
and git facts. File lines are redacted and shown exactly, specials marked (`ci_agent.exact`); git
facts are sanitised then redacted. `fit` then keeps what fits."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ci_agent import exact
from ci_agent.config import ContextSettings
from ci_agent.context.fit import fit
from ci_agent.context.history import Change
from ci_agent.context.history_read import read_history
from ci_agent.context.render import SAY
from ci_agent.context.values import Context, Excerpt, GitContext
from ci_agent.git import GitError, git
from ci_agent.gitfacts import read_status, summarize_status
from ci_agent.patch.policy import glob_match
from ci_agent.paths import RepoPaths, is_absolute, parse_frame
from ci_agent.redact import sanitize_untrusted
from ci_agent.report import Report, ReportDiagnostic, Severity

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


def _spot(diag: ReportDiagnostic) -> tuple[str, int | None, bool] | None:
    """(repo-relative file, line, whether it is the project file) a diagnostic points at. A
    diagnostic located only by its `[Project.csproj]` marker (NETSDK, NU, MSB codes raised in
    an SDK .targets file or by restore) points at its project file, if that is in the repo."""
    if diag.in_repo and diag.file:
        return diag.file, diag.line, False
    if diag.project and not is_absolute(diag.project):
        return diag.project, None, True
    return None


def _reason(diag: ReportDiagnostic, line: int | None, of_project: bool) -> str:
    code = _CODE_RE.sub("", diag.code) if diag.code else None
    if of_project:
        return SAY("project_reason", severity=diag.severity.value, code=code)
    return SAY("diagnostic_reason", severity=diag.severity.value, line=line, code=code)


def _near(targets: list[_Target], line: int | None, around: int) -> bool:
    """Whether `line` lies within the excerpt window of one of the (error) `targets`."""
    return any(t.priority == 0 and abs((t.line or 1) - (line or 1)) <= around for t in targets)


def _targets(report: Report, around: int) -> dict[str, list[_Target]]:
    """Lines worth showing, per repo-relative file: errors and failing test frames in report
    order, then warnings, but only those that are the failure (no error, no failed test) or
    sit within the window of an error in the same file: others cost bytes and tell little."""
    found: dict[str, list[_Target]] = {}

    def add(path: str, line: int | None, priority: int, reason: str, wants_whole: bool) -> None:
        found.setdefault(path, []).append(_Target(line, priority, reason, wants_whole))

    errors = [d for d in report.diagnostics if d.severity == Severity.ERROR]
    for diag in errors:
        if (spot := _spot(diag)) is not None:
            add(spot[0], spot[1], 0, _reason(diag, *spot[1:]), True)
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
    warnings_are_the_failure = not errors and not report.failures
    for diag in report.diagnostics:
        spot = _spot(diag) if diag.severity != Severity.ERROR else None
        if spot is not None and (warnings_are_the_failure or _near(found.get(spot[0], []), spot[1], around)):
            add(spot[0], spot[1], 1, _reason(diag, *spot[1:]), False)
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
    head = line[:_LINE_CHARS]
    if head.rfind(exact.OPEN) > head.rfind(exact.CLOSE):  # never half a marker
        head = head[:head.rfind(exact.OPEN)]
    return SAY("long_line", head=head, more=len(line) - len(head))


@dataclass(frozen=True, slots=True)
class _Read:
    lines: list[str]  # as shown (`exact`), index 0 = line 1
    redacted: set[int]  # numbers of the lines a secret was cut from


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _read_lines(path: str, size: int, ranges: list[tuple[int, int]], redact: Redact) -> _Read | None:
    """The file's lines as the model is shown them (`ci_agent.exact`); None for a binary file.
    A file too big to read whole is streamed and only the lines inside `ranges` are kept
    (others are empty)."""
    if size <= _READ_WHOLE_CAP:
        with open(path, "rb") as fh:
            data = fh.read()
        if b"\0" in data[:8192]:
            return None
        shown = exact.show_file(data.decode("utf-8", errors="replace"), redact)
        return _Read(list(shown.lines), set(shown.redacted))
    last = max(end for _, end in ranges)
    kept: list[str] = []
    all_crlf = True
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for number, line in enumerate(fh, 1):
            if number > last:
                break
            if number == 1 and "\0" in line[:8192]:
                return None
            if line.endswith("\n"):  # (a last line without a break has no line ending to judge)
                all_crlf = all_crlf and line.endswith("\r\n")
            inside = any(start <= number <= end for start, end in ranges)
            kept.append(line.removesuffix("\n") if inside else "")
    if all_crlf:  # as far as read: as `exact.split_lines` decides for a whole file
        kept = [line.removesuffix("\r") for line in kept]
    redacted: set[int] = set()
    for start, end in _merged(ranges):  # each line shown once: marking is not idempotent
        marked, cut = exact.show_lines(kept[start - 1:end], redact, start)
        kept[start - 1:start - 1 + len(marked)] = marked
        redacted |= cut
    return _Read(kept, redacted)


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
        read = _read_lines(path, size, guess, redact)
    except OSError as exc:
        out.notes.append(SAY("not_shown", path=rel, why=SAY("unreadable", error=exc.strerror or exc)))
        return
    whole = any(t.wants_whole for t in targets) and size <= settings.whole_file_bytes
    if read is None:
        out.notes.append(SAY("not_shown", path=rel, why=SAY("binary")))
        return
    lines = read.lines
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
            redacted=tuple(sorted(n for n in read.redacted if start <= n <= end)),
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
    change, notes = read_history(repo, report, settings, redact, revision, base_ref or settings.base_ref,
                                 named)
    return GitContext(summary), change, notes


# --------------------------------------------------------------------------- gather


def gather_context(repo: Path, report: Report, settings: ContextSettings, redactor: Redact, *,
                   revision: str = "HEAD", base_ref: str | None = None) -> Context:
    """Excerpts and git facts for `report`, read from the work tree at `repo`, within
    `settings.max_bytes` once rendered. `redactor` is a `Redactor` (or any str -> str)."""
    repo_real = os.path.realpath(repo)
    got = _Gathering()
    targets = _resolve_suffixes(repo_real, _targets(report, settings.excerpt_lines), got.notes)
    for rel, file_targets in targets.items():
        _file_excerpts(repo_real, rel, file_targets, settings, redactor, got)
    git_ctx, change, git_notes = _git_context(Path(repo_real), settings, redactor, revision, base_ref,
                                              report, set(targets))
    got.notes.extend(git_notes)
    return fit(got.excerpts, got.notes, git_ctx, change, settings)
