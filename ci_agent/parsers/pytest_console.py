"""pytest console output, and bare Python tracebacks printed outside pytest.

What pytest prints about a failure, in order: the `ERRORS` / `FAILURES` sections (one
`____ TestA.test_b ____` block per failure with the traceback, `E   ` message lines and
`path:line: ExcType` locations), then the `short test summary info` lines
(`FAILED node::id - message`, `ERROR node::id - message`), then the final counts line
(`=== 1 failed, 3 passed in 0.12s ===`, or without the `=` rules under `-q`).

Blocks are named by their title (`TestA.test_b`), summary lines by node id
(`tests/test_x.py::TestA::test_b`); the two are joined at the end. Collection errors
(`ERROR collecting tests/x.py`) become failures with outcome `error` named by the module's
node id: pytest counts them among its errors and the fix is in that file. An interrupted
session (`!!! Interrupted: 1 error during collection !!!`) is also a run error: no test ran.

A Python traceback outside the pytest sections becomes an error diagnostic located at its
last frame, coded with the exception type.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from ci_agent.parsers.pytest_lines import (
    block_name,
    counts_line,
    is_node_id,
    node_of_title,
    split_subtest,
    subtest_summary_line,
    subtest_verbose_line,
    summary_line,
    title_of_node,
    verbose_line,
    with_subtest,
)
from ci_agent.report import Diagnostic, Outcome, ParseResult, RunError, Severity, TestCase, TestCounts

# pytest pads titles to the terminal width but always writes at least one rule character.
_RULE_RE = re.compile(r"=+ (?P<title>.+?) =+")
_BLOCK_RE = re.compile(r"_+ (?P<title>[^_ ].*?) _+")
_INTERRUPTED_RE = re.compile(r"!{3,} (?P<text>.+?) !{3,}")
# A traceback location at column 0: `t/a.py:12: AssertionError` (long), `t/a.py:12: in test_b` (short).
_LOCATION_RE = re.compile(r"(?P<file>(?:[A-Za-z]:[\\/])?[^\s:][^:]*?\.py):(?P<line>\d+):(?: (?P<rest>.*))?")
_TRACEBACK_START = "Traceback (most recent call last):"
_FRAME_RE = re.compile(r'  File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.*))?')
_EXCEPTION_RE = re.compile(r"(?P<type>[A-Za-z_][\w.]*)(?:: (?P<msg>.*))?")
_IN_TEST_SECTIONS = frozenset({"ERRORS", "FAILURES", "PASSES", "XPASSES", "XFAILURES"})
MAX_BLOCK_LINES = 400
MAX_LINE_CHARS = 2000
MAX_TRACEBACK_FRAMES = 50
MAX_FAILURES = 20_000  # blocks and summary entries kept per input (memory stays bounded)
MAX_STORED_CHARS = 32 << 20


@dataclass(slots=True)
class _Block:
    """One `____ title ____` block of the ERRORS or FAILURES section."""

    title: str
    lines: list[str] = field(default_factory=list)

    def add(self, line: str, lean: bool) -> int:
        """Keep a line (cut); when `lean`, only message and location lines. Returns chars kept."""
        if len(self.lines) >= MAX_BLOCK_LINES:
            return 0
        if lean and not (line.startswith("E ") or ".py:" in line):
            return 0
        kept = line[:MAX_LINE_CHARS]
        self.lines.append(kept)
        return len(kept)


@dataclass(slots=True)
class _Traceback:
    frames: list[tuple[str, int]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


def _traceback_part(lines: Sequence[str]) -> Sequence[str]:
    """A block up to its `---- Captured stdout call ----` sections (their text is not a traceback)."""
    for i, line in enumerate(lines):
        if line.startswith("-") and " Captured " in line:
            return lines[:i]
    return lines


def block_message(lines: Sequence[str]) -> str | None:
    """The `E   ` lines, dedented; else the first non-blank line (collection error preamble)."""
    lines = _traceback_part(lines)
    e_lines = [line[1:] for line in lines if line.startswith("E ") or line == "E"]
    if e_lines:
        indent = min((len(x) - len(x.lstrip()) for x in e_lines if x.strip()), default=0)
        text = "\n".join(x[indent:].rstrip() for x in e_lines).strip("\n")
        return text or None
    return next((line.strip() for line in lines if line.strip()), None)


def block_locations(lines: Sequence[str]) -> list[tuple[str, int]]:
    out = []
    for line in _traceback_part(lines):
        m = _LOCATION_RE.fullmatch(line) if ".py:" in line else None
        if m:
            out.append((m["file"], int(m["line"])))
    return out


def pick_location(
    locations: Sequence[tuple[str, int]], test_file: str | None
) -> tuple[str | None, int | None]:
    """The last frame inside the test file; else the deepest frame; else the test file alone."""
    if test_file:
        wanted = test_file.replace("\\", "/")
        for file, line in reversed(locations):
            if file.replace("\\", "/") == wanted:
                return file, line
    if locations:
        return locations[-1]
    return test_file, None


_Key = tuple[str, Outcome]
# (node id, outcome, ordinal): the ordinal is 0, except for the oldest subtest dialect's summary
# lines (`SUBFAIL node`, no description), which repeat one node once per failed subtest.
_SummaryKey = tuple[str, Outcome, int]


class PytestConsumer:
    """Per-input state: the current `===` section and `___` block, what was collected so far."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._section: str | None = None
        self._block: _Block | None = None
        self._blocks: dict[_Key, list[_Block]] = {}  # by (title name, outcome); titles can repeat
        self._summary: dict[_SummaryKey, str | None] = {}  # -> summary message
        self._bare_subtests: dict[str, int] = {}  # node -> its `SUBFAIL node` lines so far
        self._subtest_titles: dict[_Key, deque[str]] = {}  # (test's title, outcome) -> subtest blocks
        self._counts: TestCounts | None = None
        self._run_errors: list[RunError] = []
        self._traceback: _Traceback | None = None
        self._diagnostics: dict[Diagnostic, None] = {}
        self._printed = 0
        self._kept_blocks = 0
        self._stored_chars = 0  # block text kept so far: past the budget, blocks keep E and location lines
        self._dropped = 0

    def feed(self, line: str) -> None:
        if self._traceback is not None and self._feed_traceback(line):
            return
        first = line[:1]
        if first == "=" and self._feed_rule(line):
            return
        if first == "_" and self._section in ("ERRORS", "FAILURES"):
            m = _BLOCK_RE.fullmatch(line)
            if m:
                self._close_block()
                self._block = _Block(m["title"])
                return
        if self._block is not None:
            self._stored_chars += self._block.add(line, lean=self._stored_chars > MAX_STORED_CHARS)
            return
        if first in ("F", "E"):
            summary = summary_line(line)
            if summary is not None:
                outcome, node, message = summary
                self._remember(node, outcome, message)
                return
        if "SUBFAIL" in line and self._feed_subtest(line):
            return
        if first == "!":
            m = _INTERRUPTED_RE.fullmatch(line)
            if m:
                self._run_errors.append(RunError(self.source, f"pytest stopped early: {m['text']}"))
                return
        if line.startswith(_TRACEBACK_START) and self._section not in _IN_TEST_SECTIONS:
            self._traceback = _Traceback()
            return
        if self._section not in _IN_TEST_SECTIONS:
            counts = counts_line(line)  # `-q` prints the counts line without `===` rules
            if counts is not None:
                self._counts = counts
                return
        if "::" in line and ("FAILED" in line or "ERROR" in line):
            verbose = verbose_line(line)
            if verbose is not None and (verbose[1], verbose[0], 0) not in self._summary:
                self._remember(verbose[1], verbose[0], None)

    def _feed_subtest(self, line: str) -> bool:
        """A failed subtest's summary or `-v` line (pytest_lines' module docstring)."""
        summary = subtest_summary_line(line)
        if summary is not None:
            if summary.description is not None:
                self._remember(with_subtest(summary.node, summary.description), Outcome.FAILED,
                               summary.message)
            else:
                ordinal = self._bare_subtests.get(summary.node, 0) + 1
                if self._remember(summary.node, Outcome.FAILED, summary.message, ordinal):
                    self._bare_subtests[summary.node] = ordinal
            return True
        name = subtest_verbose_line(line)
        if name is None:
            return False
        if (name, Outcome.FAILED, 0) not in self._summary:
            self._remember(name, Outcome.FAILED, None)
        return True

    def _remember(self, node: str, outcome: Outcome, message: str | None, ordinal: int = 0) -> bool:
        key = (node, outcome, ordinal)
        if key in self._summary or len(self._summary) < MAX_FAILURES:
            self._summary[key] = message
            return True
        self._dropped += 1
        return False

    def _feed_rule(self, line: str) -> bool:
        m = _RULE_RE.fullmatch(line)
        if m is None:
            return False
        self._close_block()
        title = m["title"]
        counts = counts_line(title)
        if counts is not None:
            self._counts = counts
            self._section = None
        else:
            self._section = title
        return True

    def _feed_traceback(self, line: str) -> bool:
        """Lines after `Traceback (most recent call last):`. True while the traceback goes on."""
        tb = self._traceback
        assert tb is not None
        m = _FRAME_RE.fullmatch(line) if line.startswith("  File ") else None
        if m:
            if len(tb.frames) < MAX_TRACEBACK_FRAMES:
                tb.frames.append((m["file"], int(m["line"])))
                tb.text.append(line.strip()[:MAX_LINE_CHARS])
            return True
        if line.startswith(" ") or not line:
            return True  # source lines, `^^^^` markers
        self._traceback = None
        exc = _EXCEPTION_RE.fullmatch(line)
        if exc is None or not tb.frames:
            return False
        file, lineno = tb.frames[-1]
        self._printed += 1
        # Like a compiler diagnostic: the exception type is the code, its text the message.
        exc_type = exc["type"].rsplit(".", 1)[-1]
        diag = Diagnostic(
            severity=Severity.ERROR, message=(exc["msg"] or exc_type)[:MAX_LINE_CHARS], file=file,
            line=lineno, code=exc_type, origin="python", detail="\n".join(tb.text) or None,
        )
        if len(self._diagnostics) < MAX_FAILURES:
            self._diagnostics.setdefault(diag, None)
        return True

    def _close_block(self) -> None:
        block, self._block = self._block, None
        if block is None:
            return
        if self._kept_blocks >= MAX_FAILURES:
            self._dropped += 1
            return
        self._kept_blocks += 1
        name, outcome = block_name(block.title)
        self._blocks.setdefault((name, outcome), []).append(block)
        test_title, description = split_subtest(name)
        if description is not None:
            self._subtest_titles.setdefault((test_title, outcome), deque()).append(name)

    def finish(self) -> ParseResult:
        self._close_block()
        if self._traceback is not None:
            self._feed_traceback("<end of log>")  # a traceback cut off by the end of the log
        result = ParseResult(
            format=PARSER.name, failures=self._join(), counts=self._counts, run_errors=self._run_errors,
            diagnostics=list(self._diagnostics), printed_diagnostics=self._printed,
        )
        if self._dropped:
            result.notes.append(f"{self._dropped} further failure block(s) or summary line(s) not kept "
                                f"(cap {MAX_FAILURES})")
        return result

    def _join(self) -> list[TestCase]:
        """Summary lines (node ids) joined with blocks (titles), in order; either may be missing."""
        failures: list[TestCase] = []
        for (node, outcome, ordinal), summary_message in self._summary.items():
            if ordinal:
                node, block = self._next_subtest_block(node, outcome)
            else:
                waiting = self._blocks.get((title_of_node(node), outcome))
                block = waiting.pop(0) if waiting else None
            failures.append(_case(node, outcome, summary_message, block))
        for (title, outcome), blocks in self._blocks.items():
            for block in blocks:  # blocks without a summary line (`-r` without f/E, old pytest)
                locations = block_locations(block.lines)
                if is_node_id(title) and "::" not in title:
                    node = title  # a collection error names its module
                elif locations:
                    node = node_of_title(locations[0][0], title)
                else:
                    node = title
                failures.append(_case(node, outcome, None, block))
        return failures

    def _next_subtest_block(self, node: str, outcome: Outcome) -> tuple[str, _Block | None]:
        """For a summary line without a description: the test's next subtest block, in log order,
        and the subtest's name from that block's title."""
        titles = self._subtest_titles.get((title_of_node(node), outcome), deque())
        while titles:
            title = titles.popleft()
            waiting = self._blocks.get((title, outcome))
            if waiting:
                return with_subtest(node, split_subtest(title)[1]), waiting.pop(0)
        return node, None


def _case(node: str, outcome: Outcome, summary_message: str | None, block: _Block | None) -> TestCase:
    path, sep, rest = split_subtest(node)[0].partition("::")
    test_file = path if path.endswith(".py") else None
    lines = block.lines if block is not None else []
    file, line = pick_location(block_locations(lines), test_file)
    qualified = rest.partition("[")[0]
    classname = qualified.rsplit("::", 1)[0] if sep and "::" in qualified else None
    stack = "\n".join(lines).strip("\n")
    return TestCase(
        name=node,
        outcome=outcome,
        classname=classname,
        message=block_message(lines) or summary_message,
        stack=stack or None,
        file=file,
        line=line,
    )


@dataclass(frozen=True, slots=True)
class PytestConsoleParser:
    name: str = "pytest_console"
    description: str = "pytest console output (failures, errors, counts) and bare Python tracebacks"

    def sniff(self, head: Sequence[str]) -> bool:
        for line in head:
            if line.startswith("=") and "test session starts" in line:
                return True
            if line.startswith(_TRACEBACK_START):
                return True
            if "::" in line and summary_line(line) is not None:
                return True
        return False

    def consumer(self, source: str) -> PytestConsumer:
        return PytestConsumer(source)


PARSER = PytestConsoleParser()
