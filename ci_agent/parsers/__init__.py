"""Format registry, sniffing and the one entry point that turns a file into ParseResults."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from ci_agent.envelope import HEAD_BYTES, EnvelopeInfo, decode_head, detect_encoding, iter_log_lines
from ci_agent.errors import UsageError
from ci_agent.parsers import (
    cargo_test,
    compilers,
    dotnet_test,
    go_test,
    junit,
    msbuild,
    node_test,
    nunit,
    pytest_console,
    trx,
    xunit,
)
from ci_agent.parsers.base import LogParser, XmlParser
from ci_agent.parsers.log_tail import read_tail
from ci_agent.report import ParseResult, RunError

# The registry: every format, by name. Order matters for log parsers: all that sniff positive
# run, in this order, and the first is the fallback. tests/parsers/test_registry.py fails for a
# format without a fixture pair.
_XML_FORMATS: tuple[XmlParser, ...] = (trx.PARSER, junit.PARSER, nunit.PARSER, xunit.PARSER)
_LOG_FORMATS: tuple[LogParser, ...] = (
    msbuild.PARSER, dotnet_test.PARSER, compilers.PARSER, pytest_console.PARSER, cargo_test.PARSER,
    go_test.PARSER, node_test.PARSER,
)
XML_PARSERS: dict[str, XmlParser] = {parser.name: parser for parser in _XML_FORMATS}
LOG_PARSERS: dict[str, LogParser] = {parser.name: parser for parser in _LOG_FORMATS}
_LOG_FAMILIES = (frozenset({"msbuild", "dotnet_test"}),)

_XML_ROOT_RE = re.compile(rb"<(?![?!])(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)")
_XML_START_RE = re.compile(rb"^\s*(?:<\?xml|<!--|<!DOCTYPE|<[A-Za-z_])")


def all_formats() -> list[str]:
    return [*XML_PARSERS, *LOG_PARSERS]


def xml_root_name(head: bytes) -> str | None:
    """Local name of the root element, if `head` looks like XML (any supported encoding)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        head = head.decode("utf-16", errors="replace").encode("utf-8")
    elif head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if not _XML_START_RE.match(head):
        return None
    # Skip the prolog: declaration, comments, doctype (which may contain '<!ENTITY').
    pos = 0
    while True:
        m = _XML_ROOT_RE.search(head, pos)
        if m is None:
            return None
        before = head[:m.start()]
        # inside a comment or DOCTYPE internal subset? then keep looking after it
        if before.count(b"<!--") > before.count(b"-->"):
            end = head.find(b"-->", m.start())
            if end == -1:
                return None
            pos = end + 3
            continue
        if b"<!DOCTYPE" in before and before.count(b"[") > before.count(b"]"):
            end = head.find(b"]>", m.start())
            if end == -1:
                return None
            pos = end + 2
            continue
        return m.group(1).decode("ascii", errors="replace")


@dataclass(frozen=True, slots=True)
class Sniffed:
    kind: str  # "xml" | "log"
    formats: tuple[str, ...]


def sniff(head: bytes, forced: str | None = None) -> Sniffed:
    """Decide how to read an input from its first bytes (or from --format)."""
    if forced is not None:
        if forced in XML_PARSERS:
            return Sniffed("xml", (forced,))
        if forced in LOG_PARSERS:
            return Sniffed("log", (forced,))
        raise UsageError(f"unknown format {forced!r}; known formats: {', '.join(all_formats())}")
    root = xml_root_name(head)
    if root is not None:
        for parser in XML_PARSERS.values():
            if root in parser.root_names:
                return Sniffed("xml", (parser.name,))
        return Sniffed("xml", ())
    lines = decode_head(head)
    matched = {p.name for p in LOG_PARSERS.values() if p.sniff(lines)}
    for family in _LOG_FAMILIES:
        # A `dotnet test` log may print more than the sniffed head of build output before its first
        # test line (and a build log may end in tests): one .NET marker enables the whole family.
        if matched & family:
            matched |= family & LOG_PARSERS.keys()
    return Sniffed("log", tuple(name for name in LOG_PARSERS if name in matched))


def parse_stream(
    stream: BinaryIO, source: str, forced: str | None = None, keep_cases: bool = False
) -> ParseResult:
    """Parse one input. Never raises for bad content: problems become run_errors."""
    head = stream.read(HEAD_BYTES)
    sniffed = sniff(head, forced)
    # _Rejoined implements the read() that every parser uses; BinaryIO is the parsers' declared type.
    body = cast(BinaryIO, _Rejoined(head, stream))
    if sniffed.kind == "xml":
        if not sniffed.formats:
            root = xml_root_name(head)
            return ParseResult(
                format="unknown",
                run_errors=[RunError(source, f"XML root element <{root}> is not a test-result format we read "
                                             f"(known: {', '.join(sorted(_xml_roots()))})")],
            )
        return XML_PARSERS[sniffed.formats[0]].parse(body, source, keep_cases=keep_cases)
    if not head:
        return ParseResult(format="empty", run_errors=[RunError(source, "the file is empty")])
    if looks_binary(head):
        return ParseResult(
            format="binary",
            run_errors=[RunError(source, "the file is binary, not a text log or an XML result file")],
        )
    if not sniffed.formats:
        # Nothing recognised the head: let every log parser read it, and say so when none found anything.
        result = parse_log(body, source, tuple(LOG_PARSERS))
        if not (result.diagnostics or result.failures or result.counts or result.run_errors):
            result.format = "unknown"
            result.run_errors.append(
                RunError(source, "not a format ci-agent reads (no build log, test log or result file found)")
            )
    else:
        result = parse_log(body, source, sniffed.formats)
    if needs_tail(result):
        result.tail = read_tail(stream, head) or None
    return result


def needs_tail(result: ParseResult) -> bool:
    """A log that told nothing: no diagnostic, no failed test, and no count saying all passed."""
    if result.diagnostics or result.failures:
        return False
    return result.counts is None or result.counts.failed > 0


def parse_log(stream: BinaryIO, source: str, names: Iterable[str]) -> ParseResult:
    consumers = [(name, LOG_PARSERS[name].consumer(source)) for name in names]
    info = EnvelopeInfo()
    feeds = [consumer.feed for _, consumer in consumers]
    lines = iter_log_lines(stream, info)
    # Hot loop (millions of lines): bound methods, and no inner loop for the common one or two.
    if len(feeds) == 1:
        (feed,) = feeds
        for line in lines:
            feed(line)
    elif len(feeds) == 2:
        first, second = feeds
        for line in lines:
            first(line)
            second(line)
    else:
        for line in lines:
            for feed in feeds:
                feed(line)
    results = [(name, consumer.finish()) for name, consumer in consumers]
    merged = merge_results(results)
    if info.truncated_lines:
        merged.notes.append(f"{info.truncated_lines} over-long line(s) cut at 65536 characters")
    return merged


_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))


def looks_binary(head: bytes) -> bool:
    """True when the first bytes are not text in any encoding we read (UTF-16 is text)."""
    encoding, _ = detect_encoding(head)
    if encoding != "utf-8" or not head:
        return False
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls > 0.1 * len(head)


def merge_results(results: list[tuple[str, ParseResult]]) -> ParseResult:
    """One ParseResult for a log read by several parsers; format names those that found something."""
    useful = [name for name, r in results if r.diagnostics or r.failures or r.counts or r.run_errors]
    merged = ParseResult(format="+".join(useful) if useful else (results[0][0] if results else "unknown"))
    for _, r in results:
        merged.diagnostics.extend(r.diagnostics)
        merged.failures.extend(r.failures)
        merged.run_errors.extend(r.run_errors)
        merged.printed_diagnostics += r.printed_diagnostics
        merged.notes.extend(r.notes)
        if r.counts is not None:
            merged.counts = r.counts if merged.counts is None else merged.counts + r.counts
        if r.cases is not None:
            merged.cases = (merged.cases or []) + r.cases
    return merged


def parse_path(path: Path | str, forced: str | None = None, keep_cases: bool = False) -> ParseResult:
    with open(path, "rb") as fh:
        return parse_stream(fh, str(path), forced, keep_cases)


def _xml_roots() -> set[str]:
    return {name for p in XML_PARSERS.values() for name in p.root_names}


class _Rejoined(io.RawIOBase):
    """The head already read for sniffing, followed by the rest of the stream."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size < 0:
                out, self._head = self._head + self._rest.read(), b""
                return out
            out, self._head = self._head[:size], self._head[size:]
            return out
        return self._rest.read(size)

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
