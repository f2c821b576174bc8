"""Find the unified diff in a model's answer and fit it to the repository's files.

`extract_diff` takes a tool-call field or free text (fenced ```diff blocks, or a bare diff
among prose). `fit_to_repo` repairs what models get wrong and git does not forgive, using the
file as git stores it as the truth: CRLF vs LF line endings, a missing "\\ No newline at end
of file", hunks without context or line numbers, context lines that lost trailing whitespace.
Counts and a/ b/ prefixes are handled by the parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from ci_agent.patch.diff import UNKNOWN_START, FilePatch, Hunk, Patch

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([\w+.-]*)[^`]*$")
_DIFF_INFO = {"diff", "patch", "udiff", "git"}
_DIFF_START = re.compile(r"^(diff --git |--- \S|@@ )", re.M)
NO_EOL = "\\ No newline at end of file"


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced code block in Markdown text."""
    blocks: list[tuple[str, str]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i].rstrip("\r"))
        if not match:
            i += 1
            continue
        indent, fence, info = len(match[1]), match[2], match[3].lower()
        body: list[str] = []
        i += 1
        while i < len(lines):
            line = lines[i]
            # a fence indented inside a list item indents its body too
            line = line[indent:] if line[:indent].isspace() else line
            # The closing fence must start at the opening fence's column: a diff context line
            # " ```" (a Markdown file's own fence, one space in) must not end the block.
            closing = line.rstrip("\r").rstrip()
            if closing.startswith(fence) and not closing.strip(fence[0]):
                break
            body.append(line)
            i += 1
        blocks.append((info, "\n".join(body)))
        i += 1
    return blocks


def extract_diff(answer: str) -> str:
    """The diff text in `answer`: its diff-looking fenced blocks joined, else the answer itself.

    Prose around a bare diff is left for the parser, which skips anything that is not part of a
    file patch. A patch sent entirely with CRLF line breaks (pasted from Windows) is turned to
    LF here; `fit_to_repo` puts CR back for files that have CRLF endings on disk.
    """
    text = answer.lstrip("\ufeff")
    blocks = _fenced_blocks(text)
    chosen = [body for info, body in blocks if info in _DIFF_INFO or _DIFF_START.search(body)]
    if chosen:
        text = "\n".join(body.rstrip("\n") for body in chosen)
    lines = text.split("\n")
    if len(lines) > 1 and all(line.endswith("\r") for line in lines[:-1] if line):
        text = "\n".join(line[:-1] if line.endswith("\r") else line for line in lines)
    return text if text.endswith("\n") else text + "\n"


# ---- fitting to the files on disk ---------------------------------------------------------------


def _eol_style(data: bytes) -> str:
    """'crlf' when every line break is CRLF, 'lf' when none is, 'mixed' otherwise."""
    crlf = data.count(b"\r\n")
    if crlf == 0:
        return "lf"
    return "crlf" if crlf == data.count(b"\n") else "mixed"


def _fit_eol(hunk: Hunk, style: str) -> Hunk:
    if style == "mixed":
        return hunk
    lines = []
    for k, line in enumerate(hunk.lines):
        if line[:1] in (" ", "+", "-"):
            unterminated = k + 1 < len(hunk.lines) and hunk.lines[k + 1].startswith("\\")
            eol = "\r" if style == "crlf" and not unterminated else ""
            line = line[0] + line[1:].removesuffix("\r") + eol
        lines.append(line)
    return replace(hunk, lines=tuple(lines))


def _old_side(hunk: Hunk) -> list[str]:
    return [line[1:] for line in hunk.lines if line[:1] in (" ", "-")]


def _locate(hunk: Hunk, disk_lines: list[str]) -> Hunk:
    """Give a bare `@@` hunk the line number where its old side occurs in the file."""
    if hunk.old_start != UNKNOWN_START:
        return hunk
    found = _occurrences(_old_side(hunk), disk_lines)
    start = found[0] + 1 if found else 1
    return replace(hunk, old_start=start, new_start=start)


# Searching is quadratic in the worst case; past this many old-side lines leave it to git.
_MAX_SEARCH_LINES = 2000


def _occurrences(needle: list[str], haystack: list[str]) -> list[int]:
    """Every index where `needle` occurs as a run of lines in `haystack`."""
    if not needle or len(needle) > _MAX_SEARCH_LINES:
        return []
    first, size = needle[0], len(needle)
    return [k for k in range(len(haystack) - size + 1)
            if haystack[k] == first and haystack[k : k + size] == needle]


def _fit_trailing_whitespace(hunk: Hunk, disk_lines: list[str]) -> Hunk:
    """Take context and removed lines from disk when they differ only in trailing whitespace.

    Models (and chat front-ends) drop the indentation of blank lines and trailing spaces, and
    git then refuses the hunk. Only when the hunk's old side fits nowhere exactly but fits
    modulo trailing whitespace; added lines are never touched.
    """
    old = _old_side(hunk)
    if not old or _occurrences(old, disk_lines):
        return hunk
    found = _occurrences([line.rstrip() for line in old], [line.rstrip() for line in disk_lines])
    if not found:
        return hunk
    at = min(found, key=lambda k: abs(k + 1 - hunk.old_start)) if hunk.old_start > 0 else found[0]
    exact = iter(disk_lines[at : at + len(old)])
    lines = [line[0] + next(exact) if line[:1] in (" ", "-") else line for line in hunk.lines]
    return replace(hunk, lines=tuple(lines))


def _context_runs(hunk: Hunk) -> tuple[int, int]:
    """How many context lines the hunk has before its first and after its last change."""
    body = [line for line in hunk.lines if not line.startswith("\\")]
    lead = next((k for k, line in enumerate(body) if line[0] != " "), len(body))
    trail = next((k for k, line in enumerate(reversed(body)) if line[0] != " "), len(body))
    return lead, trail


def _add_context(hunk: Hunk, disk_lines: list[str], width: int = 3) -> Hunk:
    """Give a hunk without leading or trailing context (`diff -U0` style) context from disk.

    git treats a hunk without trailing context as "must match at the end of the file", so a
    model's zero-context hunk in the middle of a file would be refused. The hunk is placed
    where its old side occurs in the file (the occurrence nearest its stated line), so the
    added context pins it to exactly that place.
    """
    lead, trail = _context_runs(hunk)
    if lead and trail:
        return hunk
    old = [line.removesuffix("\r") for line in _old_side(hunk)]
    bare = [line.removesuffix("\r") for line in disk_lines]
    if old:
        found = _occurrences(old, bare)
        if not found:
            return hunk  # does not fit anywhere: git's check will say so
        at = min(found, key=lambda k: abs(k + 1 - hunk.old_start))
    else:
        at = min(max(hunk.old_start, 0), len(bare))  # an insertion goes after line old_start
    before = disk_lines[max(at - width, 0) : at] if not lead else []
    end = at + len(old)
    after = disk_lines[end : end + width] if not trail else []
    if after and end + len(after) == len(disk_lines) and hunk.lines[-1].startswith("\\"):
        after = []  # the hunk already ends the file
    lines = [" " + line for line in before] + list(hunk.lines) + [" " + line for line in after]
    start = at - len(before) + 1 if (old or before or after) else at
    return replace(hunk, old_start=start, new_start=start + hunk.new_start - hunk.old_start,
                   lines=tuple(lines))


def _fit_no_final_newline(hunk: Hunk, disk_lines: list[str]) -> Hunk:
    """Add the missing "No newline at end of file" markers to a hunk that ends the file.

    Only for a file without a final newline, and only when the hunk's old side is exactly the
    file's tail. The file keeps having no final newline (the minimal change). A line marked as
    unterminated loses the CR that `_fit_eol` gave it: it has no line break at all.
    """
    lines = list(hunk.lines)
    old = [line.removesuffix("\r") for line in _old_side(hunk)]
    tail = [line.removesuffix("\r") for line in disk_lines[-len(old) :]] if old else []
    if any(line.startswith("\\") for line in lines) or not old or tail != old:
        return hunk
    last_old = max(k for k, line in enumerate(lines) if line[:1] in (" ", "-"))
    trailing_added = [k for k in range(last_old + 1, len(lines)) if lines[k][:1] == "+"]
    kind, body = lines[last_old][0], lines[last_old][1:].removesuffix("\r")
    if kind == " " and trailing_added:
        # " L" then "+N": L gains a line break, so in git's terms it is removed and re-added
        eol = "\r" if lines[trailing_added[0]].endswith("\r") else ""
        lines[last_old : last_old + 1] = ["-" + body, NO_EOL, "+" + body + eol]
        lines[-1] = lines[-1].removesuffix("\r")
        lines.append(NO_EOL)
    elif kind == " ":
        lines[last_old : last_old + 1] = [" " + body, NO_EOL]
    else:
        lines[last_old : last_old + 1] = ["-" + body, NO_EOL]
        last_new = max((k for k, line in enumerate(lines) if line[:1] in (" ", "+")), default=-1)
        if last_new > last_old and lines[last_new][0] == "+":
            lines[last_new : last_new + 1] = [lines[last_new].removesuffix("\r"), NO_EOL]
    return replace(hunk, lines=tuple(lines))


def fit_file(fp: FilePatch, data: bytes | None) -> FilePatch:
    """Fit one file patch to the current bytes of its old file (None: no such file)."""
    if data is None or not fp.hunks or fp.binary:
        return fp
    style = _eol_style(data)
    text = data.decode("utf-8", errors="surrogateescape")
    ends_without_newline = bool(text) and not text.endswith("\n")
    disk_lines = text.split("\n")
    if not ends_without_newline:
        disk_lines = disk_lines[:-1]
    hunks = [_add_context(_fit_trailing_whitespace(_locate(_fit_eol(h, style), disk_lines), disk_lines),
                          disk_lines) for h in fp.hunks]
    if ends_without_newline:
        hunks[-1] = _fit_no_final_newline(hunks[-1], disk_lines)
    return replace(fp, hunks=tuple(hunks))


def fit_to_repo(patch: Patch, read_old: Callable[[str], bytes | None]) -> Patch:
    """Fit every file patch to its old file's content as `read_old(path)` gives it.

    The engine passes the index's copy: `git apply --index` patches what git stores, which is
    not the bytes on disk when core.autocrlf or a `text eol=crlf` attribute converts line
    endings on checkout. Paths were policed before anything is read.
    """
    return Patch(tuple(
        fit_file(fp, read_old(fp.old_path) if fp.old_path is not None else None) for fp in patch.files
    ))
