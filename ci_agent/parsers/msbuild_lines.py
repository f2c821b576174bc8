"""The grammar of one MSBuild diagnostic line (shared/reference/msbuild-format.md §1).

    <origin><pos>: [<subcategory> ]<error|warning> [<code>]: <text>[ [<project>]]

Pure functions over one clean line. Plain string operations plus small regexes whose
quantifiers are never nested, so no input can make them backtrack: the work per line is linear
in its length, and only the first few category candidates of a line are tried.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ci_agent.report import Severity

# The category word, preceded by start/whitespace, then an optional code, then a colon.
# `[^\s:]+` and ` +` / ` *` are disjoint classes: no backtracking blow-up is possible.
_CATEGORY_RE = re.compile(r"(?<!\S)(error|warning)(?: +([^\s:]+))? *:")
_CODE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_SUBCATEGORY_RE = re.compile(r"\w[\w .\-]{0,63}")
_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
NODE_PREFIX_RE = re.compile(r"\d{1,6}(?::\d{1,6})?>")  # `2>` (node), `3:6>` (node:project instance)
_PROJECT_EXT_RE = re.compile(r"\.(?:\w*proj|slnx?|slnf|build|targets|props|msbuild)$", re.IGNORECASE)

# The real category is the first candidate outside the origin; a hostile line of ten thousand
# "error " words must stay cheap.
_MAX_CANDIDATES = 4
_MAX_ORIGIN_CHARS = 8192


class Header(NamedTuple):
    """One physical diagnostic line, split into its parts (a tuple: built once per header line)."""

    prefix: str  # everything up to and including the colon after the code: equal on continuations
    severity: Severity
    file: str | None
    origin: str | None
    line: int | None
    column: int | None
    end_line: int | None
    end_column: int | None
    subcategory: str | None
    code: str | None
    text: str  # after the one separator space; may start with more whitespace (continuations)
    indent: int  # leading whitespace of the physical line (terminal logger nesting)

    @property
    def continues(self) -> bool:
        """Text indented beyond the separator space: a continuation line of a multi-line event."""
        return self.text[:1].isspace()


def parse_header(line: str) -> Header | None:
    """Split one clean log line into a diagnostic header, or None when it is not one."""
    if "error" not in line and "warning" not in line:
        return None
    body = line.lstrip()
    indent = len(line) - len(body)
    node = NODE_PREFIX_RE.match(body)
    if node:
        body = body[node.end() :].lstrip()
    for count, match in enumerate(_CATEGORY_RE.finditer(body)):
        if count >= _MAX_CANDIDATES or match.start() > _MAX_ORIGIN_CHARS:
            return None
        header = _header_at(body, match, indent)
        if header is not None:
            return header
    return None


def _header_at(body: str, match: re.Match[str], indent: int) -> Header | None:
    code = match.group(2)
    if code is not None and not _CODE_RE.fullmatch(code):
        return None
    origin = _split_origin(body[: match.start()], has_code=code is not None)
    if origin is None:
        return None
    file, tool, pos, subcategory = origin
    text = body[match.end() :]
    if text.startswith(" "):
        text = text[1:]
    line, column, end_line, end_column = pos
    return Header(
        prefix=body[: match.end()],
        severity=Severity.ERROR if match.group(1) == "error" else Severity.WARNING,
        file=file,
        origin=tool,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        subcategory=subcategory,
        code=code,
        text=text,
        indent=indent,
    )


_Position = tuple[int | None, int | None, int | None, int | None]
_NO_POSITION: _Position = (None, None, None, None)


def _split_origin(
    before: str, has_code: bool
) -> tuple[str | None, str | None, _Position, str | None] | None:
    """(file, tool origin, position, subcategory) from the text left of the category word."""
    colon = before.rfind(":")
    if colon == -1:
        # No origin: `error CS0006: ...` or the terminal logger's engine line
        # `MSB0001 error EvaluationError: ...`. Demand a code so prose like "error: x" is no match.
        subcategory = before.strip()
        if not has_code or (subcategory and not _TOKEN_RE.fullmatch(subcategory)):
            return None
        return None, None, _NO_POSITION, subcategory or None
    if not before[colon + 1 : colon + 2].isspace():
        return None  # a drive letter or a URL, not the origin's colon
    subcategory = before[colon + 1 :].strip()
    if subcategory and not _SUBCATEGORY_RE.fullmatch(subcategory):
        return None
    head = before[:colon]
    located = head.rstrip()  # MSBuild writes `file(1,2):`; cl.exe and the docs also `file(12) :`
    if located.endswith(")"):
        paren = located.rfind("(")
        pos = _parse_position(located[paren + 1 : -1]) if paren > 0 else None
        file = located[:paren].strip() if paren > 0 else ""
        if pos is not None and file:
            return file, None, pos, subcategory or None
        if located == head:
            return None
    if head.endswith(" "):
        # `file : ` (an event with a file but no line) or a tool origin `MSBUILD : `, `CSC : `.
        name = head.strip()
        if not name:
            return None
        if "/" in name or "\\" in name or "." in name:
            return name, None, _NO_POSITION, subcategory or None
        if " " in name:
            return None
        return None, name, _NO_POSITION, subcategory or None
    return None  # `foo.c:12:5: error: ...` (gcc/clang style) is not MSBuild's grammar


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def _span(text: str) -> tuple[int, int | None] | None:
    """`12` or `12-14` -> (start, end)."""
    start, dash, end = text.partition("-")
    first = _number(start)
    if first is None:
        return None
    if not dash:
        return first, None
    last = _number(end)
    return None if last is None else (first, last)


def _parse_position(pos: str) -> _Position | None:
    """MSBuild's position forms: (l) (l-el) (l,c) (l,c-ec) (l-el,c) (l,c,el,ec)."""
    parts = pos.split(",")
    spans = [_span(p) for p in parts]
    if any(s is None for s in spans) or not spans:
        return None
    checked = [s for s in spans if s is not None]
    if len(checked) == 1:
        return checked[0][0], None, checked[0][1], None
    if len(checked) == 2:
        (line, end_line), (column, end_column) = checked
        return line, column, end_line, end_column
    if all(s[1] is None for s in checked):
        if len(checked) == 4:
            return checked[0][0], checked[1][0], checked[2][0], checked[3][0]
        if len(checked) == 3:  # devenv's (line,col,len): CanonicalError accepts it
            return checked[0][0], checked[1][0], None, None
    return None


def split_markers(text: str) -> tuple[str, str | None]:
    """Remove the trailing ` [project]` marker(s) (at most two); return (text, first marker).

    Only a last bracket group that looks like a project file counts, so `this[int]` or
    `"[MSBuild]::GetDirectoryNameOfFileAbove(...)"` inside a message stay.
    """
    text = text.rstrip()
    markers: list[str] = []
    for _ in range(2):
        if not text.endswith("]"):
            break
        bracket = text.rfind("[")
        if bracket < 0 or (bracket > 0 and not text[bracket - 1].isspace()):
            break
        content = text[bracket + 1 : -1]
        if not _looks_like_project(content):
            break
        markers.insert(0, content)
        text = text[:bracket].rstrip()
    if not markers:
        return text, None
    # `[proj.csproj::TargetFramework=net8.0]` names the project plus its global properties.
    return text, markers[0].split("::", 1)[0].strip()


def _looks_like_project(content: str) -> bool:
    if not content or "]" in content or len(content) > 4096:
        return False
    project = content.split("::", 1)[0].split(" > ", 1)[0].strip()
    return "\\" in project or "/" in project or bool(_PROJECT_EXT_RE.search(project))
