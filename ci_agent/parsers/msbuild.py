"""MSBuild / dotnet console logs: classic console logger and terminal logger (`-tl`) output.

Reads what `dotnet build|restore|publish|test` and `msbuild.exe` print; the grammar is
MSBuild's `EventArgsFormatting.FormatEventMessage` (see shared/reference/msbuild-format.md):

    <origin><pos>: [<subcategory> ]<error|warning> [<code>]: <text>[ [<project>]]

One physical header line is one printed diagnostic; one MSBuild event is one `Diagnostic`.
The classic logger repeats the full prefix on every line of a multi-line message (MSB3277,
NU1605), the terminal logger indents the continuation lines instead; both become `detail`.
The parser does not dedupe (distill does, by `Diagnostic.key()`), so the classic summary
repeats come out as repeated diagnostics, and `printed_diagnostics` counts header lines.

Line matching is done with plain string operations plus small regexes whose quantifiers are
never nested, so no input can make them backtrack: work per line is linear in its length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ci_agent.model import Diagnostic, ParseResult, RunError, Severity

NAME = "msbuild"

# The category word, preceded by start/whitespace, then an optional code, then a colon.
# `[^\s:]+` and ` +` / ` *` are disjoint classes: no backtracking blow-up is possible.
_CATEGORY_RE = re.compile(r"(?<!\S)(error|warning)(?: +([^\s:]+))? *:")
_CODE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_SUBCATEGORY_RE = re.compile(r"\w[\w .\-]{0,63}")
_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_NODE_PREFIX_RE = re.compile(r"\d{1,6}(?::\d{1,6})?>")
_PROJECT_EXT_RE = re.compile(r"\.(?:\w*proj|slnx?|slnf|build|targets|props|msbuild)$", re.IGNORECASE)
_SUMMARY_COUNT_RE = re.compile(r"(\d{1,9}) (Warning|Error)\(s\)")
_TL_BUILD_RESULT_RE = re.compile(r"(?:Build|Restore) failed with (\d{1,9}) error")
_DOTNET_CODE_RE = re.compile(
    r"(?:CS|MSB|NU|NETSDK|FS|BC|IL|CA|IDE|WMC|MIDL|SYSLIB|RZ|BL|XA|XC|LNK|C|D|TESTERROR|VSTEST|"
    r"EvaluationError|WHITESPACE|STYLE)\d*$"
)

# Only the first few category candidates of a line are tried: the real one is the first one
# outside the origin, and a hostile line of ten thousand "error " words must stay cheap.
_MAX_CANDIDATES = 4
_MAX_ORIGIN_CHARS = 8192
_MAX_DETAIL_LINES = 200
_MAX_DETAIL_CHARS = 16 * 1024

_LANDMARKS = (
    "Build started",
    "Build FAILED.",
    "Build succeeded",
    "Build failed",
    "Determining projects to restore",
    "All projects are up-to-date for restore",
    "Restore complete",
    "Restore failed",
    "MSBuild version",
    "Microsoft (R) Build Engine",
    "Time Elapsed ",
    "Done Building Project",
)


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
    node = _NODE_PREFIX_RE.match(body)
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
    if head.endswith(")"):
        paren = head.rfind("(")
        pos = _parse_position(head[paren + 1 : -1]) if paren > 0 else None
        file = head[:paren].strip() if paren > 0 else ""
        if pos is None or not file:
            return None
        return file, None, pos, subcategory or None
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


@dataclass(slots=True)
class _Event:
    """A diagnostic being assembled from its header and continuation lines."""

    header: Header
    message: str
    project: str | None
    tl_indent: int | None = None  # set when continuation lines are indented (terminal logger)
    tl_base: int | None = None  # indentation of the first such continuation line
    detail: list[str] = field(default_factory=list)
    detail_chars: int = 0
    omitted: int = 0

    @property
    def header_only(self) -> bool:
        return not self.detail and not self.omitted

    def add(self, text: str) -> None:
        if not self.message and not self.detail:
            self.message = text.strip()
            return
        if len(self.detail) >= _MAX_DETAIL_LINES or self.detail_chars + len(text) > _MAX_DETAIL_CHARS:
            self.omitted += 1
            return
        self.detail.append(text)
        self.detail_chars += len(text) + 1

    def diagnostic(self) -> Diagnostic:
        h = self.header
        lines = list(self.detail)
        while lines and not lines[-1].strip():
            lines.pop()
        if self.omitted:
            lines.append(f"... ({self.omitted} more line(s) not kept)")
        return Diagnostic(
            severity=h.severity,
            message=self.message,
            file=h.file,
            line=h.line,
            column=h.column,
            code=h.code,
            project=self.project,
            origin=h.origin,
            subcategory=h.subcategory,
            detail="\n".join(lines) or None,
            end_line=h.end_line,
            end_column=h.end_column,
        )


def _new_event(header: Header) -> _Event:
    message, project = split_markers(header.text.strip())
    event = _Event(header, message, project)
    if not message:
        # The terminal logger ends the header after `CODE: ` and indents the text below it.
        event.tl_indent = header.indent
    return event


class MsbuildConsumer:
    """Per-input state: the event being assembled, run-level facts, counts."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.result = ParseResult(format=NAME)
        self._event: _Event | None = None
        # A non-indented line with the same prefix right after a one-line event: the second line
        # of an MSB3277-style message, or the next event at the same place (MSB3026 retries).
        # Decided by the line after it.
        self._held: Header | None = None
        self._errors = 0
        self._build_failed: str | None = None
        self._failed_project: str | None = None
        self._summary: dict[str, int] = {}
        self._tl_failed_errors: int | None = None
        self._tl_result: str | None = None

    def feed(self, line: str) -> None:
        # The hot path: most lines of a big log mention neither category word and no event is open.
        if "error" in line or "warning" in line:
            header = parse_header(line)
            if header is not None:
                self.result.printed_diagnostics += 1
                self._take(header)
                return
        if self._event is not None or self._held is not None:
            if self._held is not None:
                self._release(self._held)
            event = self._event
            if event is not None and event.tl_indent is not None and self._continue_indented(event, line):
                return
            self._emit()
        if "ailed" in line or "FAILED" in line or "(s)" in line:
            self._note_run_fact(line)

    def _continue_indented(self, event: _Event, line: str) -> bool:
        """Terminal-logger continuation: a line indented deeper than its header."""
        assert event.tl_indent is not None
        body = line.lstrip()
        indent = len(line) - len(body)
        if indent <= event.tl_indent:
            return False
        if event.tl_base is None:
            event.tl_base = indent
        event.add(line[min(indent, event.tl_base) :].rstrip())
        return True

    def _take(self, header: Header) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            if self._event is not None and header.prefix == held.prefix and header.continues:
                self._event.add(split_markers(held.text)[0])
                self._event.add(split_markers(header.text)[0])
                return
            self._release(held)
        event = self._event
        if event is not None and header.prefix == event.header.prefix:
            if not event.message and event.header_only:
                # The first line was empty: the text comes with the repeated prefix instead.
                event.tl_indent = None
                event.add(split_markers(header.text)[0])
                return
            if event.tl_indent is None:
                if header.continues:
                    event.add(split_markers(header.text)[0])
                    return
                if event.header_only and header.text.strip():
                    self._held = header
                    return
        self._emit()
        self._event = _new_event(header)

    def _release(self, held: Header) -> None:
        """The held line was not a continuation: it starts the next event."""
        self._held = None
        self._emit()
        self._event = _new_event(held)

    def _emit(self) -> None:
        if self._event is not None:
            diagnostic = self._event.diagnostic()
            if diagnostic.severity is Severity.ERROR:
                self._errors += 1
            self.result.diagnostics.append(diagnostic)
            self._event = None

    def _note_run_fact(self, line: str) -> None:
        """Remember what the log says about the build result (for a failure with no diagnostic)."""
        body = line.strip()
        node = _NODE_PREFIX_RE.match(body)
        if node:
            body = body[node.end() :].strip()
        if body == "Build FAILED." or body.startswith(("Build failed", "Restore failed")):
            self._build_failed = self._build_failed or body
            tl = _TL_BUILD_RESULT_RE.match(body)
            if tl:
                self._tl_failed_errors = int(tl.group(1))
                self._tl_result = body
        elif body.startswith("Done Building Project") and body.endswith("-- FAILED."):
            self._failed_project = self._failed_project or body
        else:
            count = _SUMMARY_COUNT_RE.fullmatch(body)
            if count:
                self._summary[count.group(2) + "(s)"] = int(count.group(1))

    def finish(self) -> ParseResult:
        if self._held is not None:
            self._release(self._held)
        self._emit()
        result = self.result
        if self._summary:
            counts = ", ".join(f"{n} {kind}" for kind, n in sorted(self._summary.items(), reverse=True))
            result.notes.append(f"{self.source}: MSBuild's summary says {counts} (events, not unique)")
        if self._tl_result:
            result.notes.append(f"{self.source}: the terminal logger's summary says: {self._tl_result}")
        if self._errors == 0:
            run_error = self._silent_failure()
            if run_error:
                result.run_errors.append(RunError(self.source, run_error))
        return result

    def _silent_failure(self) -> str | None:
        counted = self._summary.get("Error(s)") or self._tl_failed_errors or 0
        if self._build_failed is None and self._failed_project is None and not counted:
            return None
        said = self._failed_project or self._build_failed or ""
        if counted:
            return (f"MSBuild counted {counted} error(s) but no error line in a format we read was "
                    f"found in the log{': ' + said if said else ''}")
        return f"the build failed without printing any error diagnostic; the log says: {said}"


class MsbuildParser:
    name = NAME
    description = "MSBuild / dotnet build, restore, publish and test console output (classic and -tl)"

    def sniff(self, head: Sequence[str]) -> bool:
        return any(_is_msbuild_evidence(line) for line in head)

    def consumer(self, source: str) -> MsbuildConsumer:
        return MsbuildConsumer(source)


def _is_msbuild_evidence(line: str) -> bool:
    """A line only MSBuild writes: a landmark, or a diagnostic with an MSBuild-specific trait."""
    body = line.strip()
    if body.startswith(_LANDMARKS) or _SUMMARY_COUNT_RE.fullmatch(body):
        return True
    header = parse_header(line)
    if header is None:
        return False
    # tsc and other tools share the canonical grammar; ask for something MSBuild-only.
    if header.origin or header.subcategory or split_markers(header.text)[1]:
        return True
    return bool(header.code and _DOTNET_CODE_RE.match(header.code))


PARSER = MsbuildParser()
