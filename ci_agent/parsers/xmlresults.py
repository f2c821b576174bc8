"""What the JUnit, NUnit and xUnit result parsers share: the streaming loop, case bookkeeping,
bounded text and lenient number parsing.

Each parser walks `stream_events` and hands finished leaf cases to a `CaseSink`; the sink
counts them (we never trust a file's own totals), keeps the failing ones and, when asked,
every case. Syntax errors end the walk with a RunError and keep whatever was read before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from lxml import etree

from ci_agent.parsers import caps
from ci_agent.parsers.xmlsafe import (
    SanitizingReader,
    clear_element,
    damage,
    iterparse,
    local_name,
    repair_notes,
    text_of,
)
from ci_agent.report import Outcome, ParseResult, RunError, TestCase, TestCounts

# Bounds on text kept per case (UTF-8 bytes, from `caps`): a 100 MB file full of failures must
# not become 100 MB of memory. The names keep their old spelling for the parsers that import them.
MAX_MESSAGE_CHARS = caps.MESSAGE_BYTES
MAX_STACK_CHARS = caps.STACK_BYTES
MAX_STDOUT_CHARS = caps.OUTPUT_BYTES
MAX_NOTE_NAMES = 10

__all__ = [
    "CaseFormatParser",
    "CaseLayout",
    "CaseSink",
    "CaseWalk",
    "Freer",
    "children_by_name",
    "clear_element",
    "first_line",
    "head",
    "name_of",
    "output_of",
    "parse_duration",
    "parse_int",
    "refused_root",
    "stream_events",
    "tail",
    "text",
    "trim_blank_lines",
    "walk_cases",
    "with_problem",
]


def head(value: str | None, limit: int) -> str | None:
    """The start of `value`, cut at `limit` bytes with `… [truncated N bytes]`. Empty -> None."""
    return caps.cap(value, limit)


def tail(value: str | None, limit: int) -> str | None:
    """The end of `value` (console output matters most at its end), the marker first."""
    return caps.cap_end(value, limit)


def first_line(text: str | None) -> str | None:
    """First non-blank line, stripped; None when there is none."""
    if not text:
        return None
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return None


def trim_blank_lines(value: str | None) -> str | None:
    """Without the blank lines CDATA blocks start and end with, and trailing whitespace; keeps
    indentation (NUnit and xUnit align messages with it). None when nothing is left."""
    if value is None:
        return None
    lines = value.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines).rstrip() or None


def parse_duration(value: str | None) -> float | None:
    """Seconds from a `time`/`duration` attribute; tolerant of `1,234.5` and `0,5`. Bad -> None."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if "," in text:
        # "1,234.5" uses ',' for thousands; "0,5" (a decimal comma locale) uses it for the fraction.
        text = text.replace(",", "") if "." in text else text.replace(",", ".")
    try:
        seconds = float(text)
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def parse_int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


class CaseSink:
    """Counts leaf cases and keeps failures (and all cases when asked) for one input."""

    def __init__(self, fmt: str, source: str, keep_cases: bool) -> None:
        self.source = source
        self.result = ParseResult(format=fmt, cases=[] if keep_cases else None)
        self.total = 0
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def wants(self, outcome: Outcome) -> bool:
        """Whether a case with this outcome is kept (else only counted: no details built)."""
        return self.result.cases is not None or outcome.is_failure

    def count(self, outcome: Outcome) -> None:
        self.total += 1
        if outcome is Outcome.PASSED:
            self.passed += 1
        elif outcome is Outcome.SKIPPED:
            self.skipped += 1
        elif outcome.is_failure:
            self.failed += 1
        # INCONCLUSIVE is counted in total only: neither a pass nor a failure.

    def take(self, outcome: Outcome, build: Callable[[], TestCase]) -> None:
        """One finished case: built and kept when wanted, else only counted (no details built)."""
        if self.wants(outcome):
            self.add(build())
        else:
            self.count(outcome)

    def add(self, case: TestCase) -> None:
        self.count(case.outcome)
        if case.outcome.is_failure:
            self.result.failures.append(case)
        if self.result.cases is not None:
            self.result.cases.append(case)

    def error(self, message: str) -> None:
        self.result.run_errors.append(RunError(self.source, message))

    def note(self, message: str) -> None:
        self.result.notes.append(message)

    def note_names(self, what: str, names: list[str]) -> None:
        """A note like '2 flaky test(s) passed on rerun: a, b' with the list bounded."""
        if not names:
            return
        shown = ", ".join(names[:MAX_NOTE_NAMES])
        more = f" and {len(names) - MAX_NOTE_NAMES} more" if len(names) > MAX_NOTE_NAMES else ""
        self.note(f"{len(names)} {what}: {shown}{more}")

    def check_declared_total(self, declared: int | None, where: str) -> None:
        """The file's own total disagrees with our count: say so (we report ours)."""
        if declared is not None and declared != self.total:
            self.note(f"{where} declares {declared} test(s); counted {self.total} test case(s)")

    def finish(self) -> ParseResult:
        self.result.counts = TestCounts(self.total, self.passed, self.failed, self.skipped)
        return self.result


def stream_events(stream: BinaryIO, sink: CaseSink) -> Iterator[tuple[str, Any, str]]:
    """(event, element, local name) for each start/end; never stops early on bad XML.

    libxml2 reads on in recover mode past a damaged spot (its first problem becomes one RunError
    that says where, and the cases after it still count); what cannot be read at all (an empty
    file, no root element, a read error) becomes one RunError too.
    """
    reader = SanitizingReader(stream)
    parser = None
    try:
        parser = iterparse(reader)
        for event, elem in parser:
            name = _NAMES.get(elem.tag) or name_of(elem.tag)
            if name:
                yield event, elem, name
    except etree.XMLSyntaxError as exc:
        if reader.bytes_read == 0:
            sink.error("the file is empty: no XML to read")
        else:
            where = f" at line {exc.lineno}" if exc.lineno and exc.lineno > 0 else ""
            sink.error(f"truncated or malformed XML{where}: {_first_error_line(exc.msg)}")
    except etree.LxmlError as exc:
        sink.error(f"could not parse the XML: {_first_error_line(str(exc))}")
    except OSError as exc:
        sink.error(f"could not read the file: {exc}")
    else:
        damaged = damage(parser)
        if damaged:
            sink.error(damaged)
    if reader.repairs:
        sink.note(f"replaced {reader.repairs} character(s) that are illegal in XML 1.0")
    for note in repair_notes(reader):
        sink.note(note)


_LXML_POSITION_RE = re.compile(r",? line \d+, column \d+$")


def _first_error_line(message: str | None) -> str:
    """libxml2's message, first line, without the position it appends (we say the line)."""
    text = first_line(message) or "unknown parse error"
    return _LXML_POSITION_RE.sub("", text) or text


# tag -> local name; a result file uses a handful of tags, a hostile one must not grow this.
_NAMES: dict[object, str] = {}
_MAX_CACHED_NAMES = 1024


def name_of(tag: object) -> str:
    """`local_name` with a small cache: it runs for every element of a 100 MB file."""
    name = _NAMES.get(tag)
    if name is None:
        name = local_name(tag)
        if isinstance(tag, str) and len(_NAMES) < _MAX_CACHED_NAMES:
            _NAMES[tag] = name
    return name


def text(elem: Any) -> str:
    """All text of an element; the common leaf case without walking an iterator."""
    if len(elem) == 0:
        return elem.text or ""
    return text_of(elem)


class Freer:
    """Frees finished elements; unlinks finished siblings in batches (one by one is slow)."""

    def __init__(self) -> None:
        self._freed = 0

    def free(self, elem: Any) -> None:
        elem.clear(keep_tail=False)
        self._freed += 1
        if self._freed % 256 == 0:
            clear_element(elem)


class CaseWalk(Protocol):
    """One streaming pass over a format of nested suites and cases (JUnit, NUnit)."""

    root: str | None  # the root element's name, once seen
    case_depth: int  # > 0 while inside a case

    def begin(self, root: Any) -> None:
        """The root element, once it is known to be one of this format's."""

    def open_suite(self, elem: Any) -> None: ...

    def end_case(self, elem: Any) -> None: ...

    def end_other(self, elem: Any, name: str) -> None:
        """The end of an element outside any case (a suite, or something in one)."""

    def finish(self) -> None: ...


@dataclass(frozen=True, slots=True)
class CaseLayout:
    """Where a format of nested suites and cases keeps them."""

    roots: frozenset[str]  # root elements it reads
    refusal: str  # what another root is not: "JUnit XML (expected <testsuites> or <testsuite>)"
    case: str  # the leaf element (a case inside a case is part of it)
    suites: frozenset[str]  # elements that open a suite when met outside a case


def refused_root(sink: CaseSink, name: str, roots: frozenset[str], refusal: str) -> bool:
    """True, with a run error, when the root element `name` is not one the format reads."""
    if name in roots:
        return False
    sink.error(f"root element <{name}> is not {refusal}")
    return True


def walk_cases(stream: BinaryIO, sink: CaseSink, walk: CaseWalk, layout: CaseLayout) -> ParseResult:
    """Drive `walk` over every element of `stream`, as `layout` says where cases and suites are."""
    case, suites = layout.case, layout.suites
    for event, elem, name in stream_events(stream, sink):
        if walk.root is None:
            if refused_root(sink, name, layout.roots, layout.refusal):
                break
            walk.root = name
            walk.begin(elem)
        # Hot loop: one call per event only where something happens.
        if event == "start":
            if name == case:
                walk.case_depth += 1
            elif not walk.case_depth and name in suites:
                walk.open_suite(elem)
        elif walk.case_depth:
            if name == case:
                walk.case_depth -= 1
                if not walk.case_depth:
                    walk.end_case(elem)
        else:
            walk.end_other(elem, name)
    walk.finish()
    return sink.finish()


def children_by_name(elem: Any, names: frozenset[str]) -> dict[str, Any]:
    """The children of `elem` whose local name is one of `names`; the last one of each name."""
    found: dict[str, Any] = {}
    for child in elem:
        child_name = name_of(child.tag)
        if child_name in names:
            found[child_name] = child
    return found


def with_problem(message: str | None, problem: str | None) -> str | None:
    """A case's message led by what was wrong with the file's own values, when something was."""
    if problem:
        return f"{problem}; {message}" if message else problem
    return message


def output_of(output: Any) -> str | None:
    """A case's captured output element as kept: blank edge lines trimmed, the end kept."""
    return tail(trim_blank_lines(text(output)) if output is not None else None, MAX_STDOUT_CHARS)


@dataclass(frozen=True, slots=True)
class CaseFormatParser:
    """An XmlParser for a JUnit-like format: its names, and the function that reads one file's
    cases into a fresh CaseSink."""

    name: str
    description: str
    root_names: frozenset[str]
    read: Callable[[BinaryIO, CaseSink], ParseResult]

    def parse(self, stream: BinaryIO, source: str, keep_cases: bool = False) -> ParseResult:
        return self.read(stream, CaseSink(self.name, source, keep_cases))
