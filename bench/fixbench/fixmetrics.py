"""What a request shows of the true fix: context recall, and which fix files it shows at all.

Pure functions over text (no git, no ci-agent), so the suite can check them on hand-made input.

**Targets.** The true fix's changed lines, in the broken tree: every line fix.diff removes, and
for an insertion that removes nothing (a run of `+` lines between context lines) the line it is
inserted after (the nearest non-blank one above it; the file's first line for an insertion at
the top). Blank lines are never targets. A file the fix creates has no targets (nothing of it
exists in the broken tree to show).

**Passages.** The request's text (system prompt, every text block and tool result of its
messages) is cut into passages, each attributed to one repository file: a line that names a
tracked path (`inventory/reports.py`, `a/src/x.c`, `src/x.c:10:`) starts a passage of that
file, unless the line is itself a line of the file already being shown (so `#include "x.h"`
inside an excerpt of main.c does not switch to x.h). A passage that opens with `diff --git` is a
diff passage; its removed lines (`-`) are not the broken file's text and are skipped.

**Shown.** A request line shows a file line when it ends with that line's exact text
(indentation included, trailing blanks ignored) after a gutter of at most 24 characters that
does not run into the text (`" 10 | "`, `"+"`, `">   "`): so any excerpt line format that keeps
the file's text verbatim at the end of the line counts. A target is shown if a line of a
passage of its file shows it and, when its text is not unique in the file (`}`, `return 0;`),
an adjacent request line shows the adjacent file line too. Tracebacks quoted in the report
count as passages of their file: the model sees them.

**Recall** = shown targets / targets (per case, and summed over cases for a total).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

GUTTER_MAX = 24
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Target:
    path: str
    line: int  # 1-based, in the broken tree
    text: str
    kind: str  # "removed" or "anchor" (the line a pure insertion follows)


@dataclass
class FixShape:
    files: list[str] = field(default_factory=list)  # every file the fix touches (broken-tree names)
    created: list[str] = field(default_factory=list)  # files the fix creates (no targets)
    targets: list[Target] = field(default_factory=list)


def _diff_path(header: str) -> str | None:
    name = header[4:].split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def _anchor(lines: Sequence[str], after: int) -> int:
    """The line an insertion after line `after` (0 = top of file) is anchored to."""
    line = after
    while line >= 1 and not lines[line - 1].strip():
        line -= 1
    if line >= 1:
        return line
    return next((n for n, text in enumerate(lines, 1) if text.strip()), 1)


def _hunk_targets(path: str, body: list[str], old_start: int, lines: Sequence[str]) -> list[int]:
    """Line numbers (broken tree) of one hunk's targets."""
    found: list[int] = []
    old = old_start
    block_removed = False  # the current run of changed lines removed something
    pending_insert_after: int | None = None
    for raw in body:
        if raw.startswith("\\"):
            continue
        tag = raw[:1]
        if tag == "-":
            found.append(old)
            block_removed = True
            pending_insert_after = None
            old += 1
        elif tag == "+":
            if not block_removed and pending_insert_after is None:
                pending_insert_after = old - 1
        else:  # context line ends the change block
            if pending_insert_after is not None and not block_removed:
                found.append(_anchor(lines, pending_insert_after))
            block_removed, pending_insert_after = False, None
            old += 1
    if pending_insert_after is not None and not block_removed:
        found.append(_anchor(lines, pending_insert_after))
    return found


def fix_shape(fix_diff: str, broken_files: Mapping[str, Sequence[str]]) -> FixShape:
    """The files and target lines of `fix_diff`, read against the broken tree's file lines."""
    shape = FixShape()
    old_path: str | None = None
    current: str | None = None
    hunk: list[str] = []
    old_start = 0
    seen: set[tuple[str, int]] = set()

    def flush() -> None:
        if current is None or not hunk:
            return
        lines = broken_files.get(current, ())
        for number in _hunk_targets(current, hunk, old_start, lines):
            if (current, number) in seen or not 1 <= number <= len(lines) or not lines[number - 1].strip():
                continue
            seen.add((current, number))
            kind = "removed" if _is_removed(hunk, old_start, number) else "anchor"
            shape.targets.append(Target(current, number, lines[number - 1], kind))
        hunk.clear()

    for raw in fix_diff.splitlines():
        if raw.startswith("--- "):
            flush()
            old_path = _diff_path(raw)
        elif raw.startswith("+++ "):
            new_path = _diff_path(raw)
            current = old_path
            name = old_path or new_path
            if name is not None and name not in shape.files:
                shape.files.append(name)
            if old_path is None and new_path is not None:
                shape.created.append(new_path)
        elif (match := _HUNK.match(raw)) is not None:
            flush()
            old_start = int(match.group(1)) if match.group(2) != "0" else int(match.group(1)) + 1
        elif raw.startswith("diff --git "):
            flush()
            current = None
        elif current is not None and raw[:1] in {" ", "-", "+", "\\", ""}:
            hunk.append(raw if raw else " ")
    flush()
    return shape


def _is_removed(hunk: list[str], old_start: int, number: int) -> bool:
    old = old_start
    for raw in hunk:
        if raw.startswith(("\\", "+")):
            continue
        if old == number:
            return raw.startswith("-")
        old += 1
    return False


# ------------------------------------------------------------------ what the request shows


def request_text(request: Mapping[str, Any]) -> str:
    """Everything the model reads in a Messages API request body, tools' schemas aside."""
    parts: list[str] = []
    system = request.get("system")
    parts.extend(_texts(system))
    for message in request.get("messages") or []:
        if isinstance(message, Mapping):
            parts.extend(_texts(message.get("content")))
    return "\n".join(parts)


def _texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if isinstance(block.get("text"), str):
                yield block["text"]
            elif block.get("type") == "tool_result":
                yield from _texts(block.get("content"))


def shows(request_line: str, file_line: str) -> bool:
    """`request_line` is `file_line` behind a short gutter (see the module docstring)."""
    wanted = file_line.rstrip()
    line = request_line.rstrip()
    if not wanted.strip():
        return len(line) <= GUTTER_MAX and not any(ch.isalpha() for ch in line)
    if not line.endswith(wanted):
        return False
    gutter = line[: len(line) - len(wanted)]
    if len(gutter) > GUTTER_MAX:
        return False
    return not (gutter and _word(gutter[-1]) and _word(wanted[0]))


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@dataclass(frozen=True)
class Passage:
    path: str
    in_diff: bool
    lines: tuple[str, ...]


def _path_pattern(paths: Iterable[str]) -> re.Pattern[str] | None:
    names = sorted(set(paths), key=len, reverse=True)
    if not names:
        return None
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"(?<![\w./-])(?:[ab]/)?({alternatives})(?![\w/-]|\.\w)")


def passages(text: str, files: Mapping[str, Sequence[str]]) -> list[Passage]:
    """The request text cut into passages of repository files (see the module docstring)."""
    pattern = _path_pattern(files)
    found: list[Passage] = []
    path: str | None = None
    in_diff = False
    lines: list[str] = []

    def close() -> None:
        if path is not None and lines:
            found.append(Passage(path, in_diff, tuple(lines)))

    for line in text.splitlines():
        own = files.get(path, ()) if path is not None else ()
        if path is not None and any(shows(line, candidate) for candidate in own if candidate.strip()):
            if not (in_diff and line.startswith("-") and not line.startswith("---")):
                lines.append(line)
            continue
        names = [m.group(1) for m in pattern.finditer(line)] if pattern is not None else []
        # a diff's own `--- a/x` / `+++ b/x` lines continue the passage `diff --git` opened
        if names and not (in_diff and names[-1] == path and line.startswith(("--- ", "+++ "))):
            close()
            path, in_diff, lines = names[-1], line.startswith("diff --git "), []
            continue
        if path is not None and not (in_diff and line.startswith("-") and not line.startswith("---")):
            lines.append(line)
    close()
    return found


def _shown_in(passage: Passage, file_lines: Sequence[str], target: Target, unique: bool) -> bool:
    index = target.line - 1
    for i, line in enumerate(passage.lines):
        if not shows(line, target.text):
            continue
        if unique:
            return True
        above = i > 0 and index > 0 and shows(passage.lines[i - 1], file_lines[index - 1])
        below = (i + 1 < len(passage.lines) and index + 1 < len(file_lines)
                 and shows(passage.lines[i + 1], file_lines[index + 1]))
        if above or below:
            return True
    return False


def shown_targets(targets: Sequence[Target], found: Sequence[Passage],
                  files: Mapping[str, Sequence[str]]) -> list[bool]:
    """For each target, whether a passage of its file shows it."""
    result: list[bool] = []
    for target in targets:
        file_lines = files.get(target.path, ())
        unique = sum(1 for line in file_lines if line.strip() == target.text.strip()) == 1
        result.append(any(_shown_in(p, file_lines, target, unique) for p in found if p.path == target.path))
    return result


def files_shown(paths: Iterable[str], found: Sequence[Passage], files: Mapping[str, Sequence[str]],
                *, outside_diff: bool) -> dict[str, bool]:
    """For each path: does some passage of it show at least one non-blank line of the file
    (only passages outside git diffs when `outside_diff`: an excerpt, a read, a quoted frame)."""
    result: dict[str, bool] = {}
    for path in paths:
        wanted = [line for line in files.get(path, ()) if line.strip()]
        result[path] = any(
            shows(line, candidate)
            for passage in found if passage.path == path and not (outside_diff and passage.in_diff)
            for line in passage.lines for candidate in wanted)
    return result


def estimate_tokens(size_bytes: int) -> int:
    """Offline token estimate: UTF-8 bytes / 4, rounded up (no tokenizer is used; with --live the
    API's own usage counts are reported instead)."""
    return -(-size_bytes // 4)
