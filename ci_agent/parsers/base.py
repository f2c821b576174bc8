"""The parser protocols. Parsers are stateless modules; per-input state lives in a consumer.

Two kinds:
- `XmlParser`: result files (TRX, JUnit, NUnit, xUnit), chosen by the XML root element name,
  parsed from a byte stream (streaming; never the whole file in memory).
- `LogParser`: console logs, chosen by sniffing the first clean lines. Several log parsers can
  read the same log in one pass (a `dotnet test` log holds MSBuild diagnostics *and* test
  failures), each through its own `LineConsumer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import BinaryIO, Protocol

from ci_agent.report import ParseResult


class LineConsumer(Protocol):
    def feed(self, line: str) -> None:
        """One clean line (envelope removed, no line terminator)."""

    def finish(self) -> ParseResult:
        """Called once after the last line."""


class LogParser(Protocol):
    # read-only members, so that a frozen parser fits too
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def sniff(self, head: Sequence[str]) -> bool:
        """True when the first clean lines of a log look like this parser's format."""

    def consumer(self, source: str) -> LineConsumer:
        """A fresh consumer for one input named `source`."""


class XmlParser(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def root_names(self) -> frozenset[str]:
        """Local names of the root elements this parser reads."""

    def parse(self, stream: BinaryIO, source: str, keep_cases: bool = False) -> ParseResult:
        """Parse one result file. Malformed input becomes run_errors plus what was read before it."""
