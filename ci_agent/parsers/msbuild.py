"""MSBuild / dotnet console logs: classic console logger and terminal logger (`-tl`) output.

Reads what `dotnet build|restore|publish|test` and `msbuild.exe` print. One physical header line
(`msbuild_lines.parse_header`) is one printed diagnostic; one MSBuild event is one `Diagnostic`.
The classic logger repeats the full prefix on every line of a multi-line message (MSB3277,
NU1605), the terminal logger indents the continuation lines instead; both become `detail`.
The parser does not dedupe (distill does, by `Diagnostic.key()`): the classic summary repeats
come out as repeated diagnostics, and `printed_diagnostics` counts header lines. Repeated events
share one object, and what is kept is capped, so memory stays flat on any input.

Speed: a classic log prints every diagnostic line verbatim at least twice (in-build, then in the
summary; a 100 MB log holds ~300,000 header lines but only ~7,000 distinct ones). So each consumer
keeps a bounded dict from the exact header line to what it parses to (`_Line`), and a line that
forms a whole event by itself also remembers its finished `Diagnostic`: a repeat costs one dict
lookup instead of the grammar, the event and the 12-field dataclass hash. Keyed by the line
string, never by a dataclass. Which lines hit changes nothing in the result (tested by parsing
with the cache off).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ci_agent.parsers.msbuild_lines import NODE_PREFIX_RE, Header, parse_header, split_markers
from ci_agent.report import Diagnostic, ParseResult, RunError, Severity

__all__ = ["NAME", "PARSER", "Header", "MsbuildConsumer", "MsbuildParser", "parse_header", "split_markers"]

NAME = "msbuild"

_SUMMARY_COUNT_RE = re.compile(r"(\d{1,9}) (Warning|Error)\(s\)")
_TL_BUILD_RESULT_RE = re.compile(r"(?:Build|Restore) failed with (\d{1,9}) error")
_DOTNET_CODE_RE = re.compile(
    r"(?:CS|MSB|NU|NETSDK|FS|BC|IL|CA|IDE|WMC|MIDL|SYSLIB|RZ|BL|XA|XC|LNK|C|D|TESTERROR|VSTEST|"
    r"EvaluationError|WHITESPACE|STYLE)\d*$"
)

_MAX_DETAIL_LINES = 200
_MAX_DETAIL_CHARS = 16 * 1024
_MAX_MESSAGE_CHARS = 8 * 1024
# Memory bounds for hostile logs (a real failed build is orders of magnitude below them).
_MAX_DISTINCT = 100_000  # distinct diagnostics kept
_MAX_KEPT_CHARS = 32 * 1024 * 1024  # text held by distinct diagnostics
_MAX_EVENTS = 1_000_000  # list entries (repeats are references to one object: 8 bytes each)
# The per-consumer line cache. Once full it takes no more lines (the ones already in keep
# hitting: a summary repeats the in-build lines in order). Its cost is estimated per entry from
# the line length: the key, the Header's slices and the marker-free message each hold about
# the line's text again, plus fixed object overhead.
CACHE_ENTRIES = 20_000
_CACHE_BYTES = 24 * 1024 * 1024
_CACHE_ENTRY_OVERHEAD = 600
_CACHE_TEXT_COPIES = 4
_MAX_KEY_PARTS = 64  # texts added to one event beyond which its Diagnostic is not cached

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


class _Line:
    """What one header line parses to; shared by every repeat of the line while it is cached."""

    __slots__ = ("_part", "cached", "continues", "diagnostic", "has_text", "header", "is_error", "made",
                 "message", "prefix", "project", "tl_indent")

    def __init__(self, header: Header) -> None:
        self.header = header
        self.prefix = header.prefix
        self.continues = header.continues
        self.has_text = bool(header.text.strip())
        self.is_error = header.severity is Severity.ERROR
        self.message, self.project = split_markers(header.text.strip())
        # The terminal logger ends the header after `CODE: ` and indents the text below it.
        self.tl_indent = None if self.message else header.indent
        self.cached = False
        # The kept Diagnostic of an event made of this line alone (set when the first one ends),
        # and of events made of this line plus the texts added to it (while the cache has room).
        self.diagnostic: Diagnostic | None = None
        self.made: dict[tuple[str, ...], Diagnostic] | None = None
        self._part: str | None = None

    @property
    def part(self) -> str:
        """The text as a continuation line of an event (markers removed, indentation kept)."""
        if self._part is None:
            self._part = split_markers(self.header.text)[0]
        return self._part


@dataclass(slots=True)
class _Event:
    """A diagnostic being assembled from its header and continuation lines."""

    source: _Line  # the header line it starts with
    message: str
    tl_indent: int | None = None  # set when continuation lines are indented (terminal logger)
    tl_base: int | None = None  # indentation of the first such continuation line
    detail: list[str] = field(default_factory=list)
    detail_chars: int = 0
    omitted: int = 0
    # Every text added, in order: with `source`, all the Diagnostic is made of (its cache key).
    # None once there are too many to be worth a key.
    parts: tuple[str, ...] | None = ()

    @property
    def header_only(self) -> bool:
        return not self.detail and not self.omitted

    def add(self, text: str) -> None:
        parts = self.parts
        if parts is not None:
            self.parts = (*parts, text) if len(parts) < _MAX_KEY_PARTS else None
        if not self.message and not self.detail:
            self.message = text.strip()
            return
        if len(self.detail) >= _MAX_DETAIL_LINES or self.detail_chars + len(text) > _MAX_DETAIL_CHARS:
            self.omitted += 1
            return
        self.detail.append(text)
        self.detail_chars += len(text) + 1

    def diagnostic(self) -> Diagnostic:
        h = self.source.header
        lines = list(self.detail)
        while lines and not lines[-1].strip():
            lines.pop()
        if self.omitted:
            lines.append(f"... ({self.omitted} more line(s) not kept)")
        message = self.message
        if len(message) > _MAX_MESSAGE_CHARS:
            message = message[:_MAX_MESSAGE_CHARS] + " ... (cut)"
        return Diagnostic(
            severity=h.severity,
            message=message,
            file=h.file,
            line=h.line,
            column=h.column,
            code=h.code,
            project=self.source.project,
            origin=h.origin,
            subcategory=h.subcategory,
            detail="\n".join(lines) or None,
            end_line=h.end_line,
            end_column=h.end_column,
        )


class MsbuildConsumer:
    """Per-input state: the event being assembled, run-level facts, counts, the line cache."""

    def __init__(self, source: str, cache_entries: int = CACHE_ENTRIES) -> None:
        """`cache_entries=0` parses every line afresh (the result is the same; tests compare)."""
        self.source = source
        self.result = ParseResult(format=NAME)
        self._event: _Event | None = None
        # A non-indented line with the same prefix right after a one-line event: the second line
        # of an MSB3277-style message, or the next event at the same place (MSB3026 retries).
        # Decided by the line after it.
        self._held: _Line | None = None
        self._errors = 0
        self._build_failed: str | None = None
        self._failed_project: str | None = None
        self._summary: dict[str, int] = {}
        self._tl_failed_errors: int | None = None
        self._tl_result: str | None = None
        # Repeated events (summary copies, per-TFM repeats) share one object: the list stays a
        # list of events, as distill expects, at the cost of one reference per repeat.
        self._distinct: dict[Diagnostic, Diagnostic] = {}
        self._kept_chars = 0
        self._dropped_distinct = 0
        self._dropped_events = 0
        self._lines: dict[str, _Line] = {}
        self._cache_room = cache_entries
        self._cache_bytes = 0

    def feed(self, line: str) -> None:
        # The hot path: most lines of a big log mention neither category word and no event is open.
        if "error" in line or "warning" in line:
            parsed = self._lines.get(line)
            if parsed is None:
                parsed = self._parse(line)
            if parsed is not None:
                self.result.printed_diagnostics += 1
                self._take(parsed)
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

    def _parse(self, line: str) -> _Line | None:
        """A line not in the cache: parse it, and cache it while there is room."""
        header = parse_header(line)
        if header is None:
            return None  # not cached: such lines are rare, and often long (compiler command lines)
        parsed = _Line(header)
        if self._cache_has_room(len(line)):
            self._lines[line] = parsed
            parsed.cached = True
        return parsed

    def _cache_has_room(self, chars: int) -> bool:
        """Count one more cache entry holding about `chars` characters, if the bounds allow it."""
        cost = _CACHE_ENTRY_OVERHEAD + _CACHE_TEXT_COPIES * chars
        if self._cache_room <= 0 or self._cache_bytes + cost > _CACHE_BYTES:
            return False
        self._cache_room -= 1
        self._cache_bytes += cost
        return True

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

    def _take(self, line: _Line) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            if self._event is not None and line.prefix == held.prefix and line.continues:
                self._event.add(held.part)
                self._event.add(line.part)
                return
            self._release(held)
        event = self._event
        if event is not None and line.prefix == event.source.prefix:
            if not event.message and event.header_only:
                # The first line was empty: the text comes with the repeated prefix instead.
                event.tl_indent = None
                event.add(line.part)
                return
            if event.tl_indent is None:
                if line.continues:
                    event.add(line.part)
                    return
                if event.header_only and line.has_text:
                    self._held = line
                    return
        self._emit()
        self._event = _Event(line, line.message, line.tl_indent)

    def _release(self, held: _Line) -> None:
        """The held line was not a continuation: it starts the next event."""
        self._held = None
        self._emit()
        self._event = _Event(held, held.message, held.tl_indent)

    def _emit(self) -> None:
        event = self._event
        if event is None:
            return
        self._event = None
        source = event.source
        if source.is_error:
            self._errors += 1
        parts = event.parts
        if parts is None:
            kept = self._keep(event.diagnostic())
        elif not parts:
            # One line alone: seen before, the Diagnostic it made then (already kept) is this one.
            kept = source.diagnostic
            if kept is None:
                kept = source.diagnostic = self._keep(event.diagnostic())
        else:
            kept = source.made.get(parts) if source.made is not None else None
            if kept is None:
                kept = self._keep(event.diagnostic())
                if kept is not None and source.cached and self._cache_has_room(sum(map(len, parts))):
                    if source.made is None:
                        source.made = {}
                    source.made[parts] = kept
        if kept is None:
            return
        if len(self.result.diagnostics) >= _MAX_EVENTS:
            self._dropped_events += 1
            return
        self.result.diagnostics.append(kept)

    def _keep(self, diagnostic: Diagnostic) -> Diagnostic | None:
        """The one object kept for diagnostics equal to this one; None when over the memory bound."""
        kept = self._distinct.get(diagnostic)
        if kept is None:
            size = 64 + sum(len(t) for t in (diagnostic.message, diagnostic.detail, diagnostic.file,
                                             diagnostic.project) if t)
            if len(self._distinct) >= _MAX_DISTINCT or self._kept_chars + size > _MAX_KEPT_CHARS:
                self._dropped_distinct += 1
                return None
            self._distinct[diagnostic] = kept = diagnostic
            self._kept_chars += size
        return kept

    def _note_run_fact(self, line: str) -> None:
        """Remember what the log says about the build result (for a failure with no diagnostic)."""
        body = line.strip()
        node = NODE_PREFIX_RE.match(body)
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
        if self._dropped_distinct:
            result.notes.append(f"{self.source}: {self._dropped_distinct} diagnostic(s) beyond the first "
                                f"{len(self._distinct)} distinct ones were not kept (memory bound)")
        if self._dropped_events:
            result.notes.append(f"{self.source}: {self._dropped_events} repeated diagnostic(s) after the "
                                f"first {_MAX_EVENTS} were counted but not listed (memory bound)")
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
