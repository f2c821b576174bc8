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
from collections.abc import Sequence
from dataclasses import dataclass, field

from ci_agent.report import Diagnostic, Outcome, ParseResult, RunError, Severity, TestCase, TestCounts

# pytest pads titles to the terminal width but always writes at least one rule character.
_RULE_RE = re.compile(r"=+ (?P<title>.+?) =+")
_BLOCK_RE = re.compile(r"_+ (?P<title>[^_ ].*?) _+")
_INTERRUPTED_RE = re.compile(r"!{3,} (?P<text>.+?) !{3,}")
# `1 failed, 3 passed, 1 skipped, 2 warnings in 0.12s` (also `no tests ran in 0.01s`).
_COUNTS_RE = re.compile(
    r"(?P<items>(?:\d+ [a-z]+(?:, )?)+|no tests ran) in [\d.]+s(?: \([\d:]+\))?"
)
_COUNT_ITEM_RE = re.compile(r"(\d+) ([a-z]+)")
# A traceback location at column 0: `t/a.py:12: AssertionError` (long), `t/a.py:12: in test_b` (short).
_LOCATION_RE = re.compile(r"(?P<file>(?:[A-Za-z]:[\\/])?[^\s:][^:]*?\.py):(?P<line>\d+):(?: (?P<rest>.*))?")
_TRACEBACK_START = "Traceback (most recent call last):"
_FRAME_RE = re.compile(r'  File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.*))?')
_EXCEPTION_RE = re.compile(r"(?P<type>[A-Za-z_][\w.]*)(?:: (?P<msg>.*))?")
_IN_TEST_SECTIONS = frozenset({"ERRORS", "FAILURES", "PASSES", "XPASSES", "XFAILURES"})
MAX_BLOCK_LINES = 400
MAX_LINE_CHARS = 2000
MAX_TRACEBACK_FRAMES = 50
MAX_SPLIT_TRIES = 20
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


def block_name(title: str) -> tuple[str, Outcome]:
    """`TestA.test_b` -> name part of the node id; `ERROR at setup of x` -> (x, error)."""
    for prefix in ("ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "):
        if title.startswith(prefix):
            return title.removeprefix(prefix), Outcome.ERROR
    return title, Outcome.FAILED


def title_of_node(node: str) -> str:
    """The block title pytest prints for a node id: `a.py::TestA::test_b[x::y]` -> `TestA.test_b[x::y]`."""
    _, sep, rest = node.partition("::")
    if not sep:
        return node  # a module (collection error)
    head, bracket, params = rest.partition("[")
    return head.replace("::", ".") + bracket + params


def node_of_title(module: str, title: str) -> str:
    """The inverse of title_of_node, given the module the block's first frame is in."""
    head, bracket, params = title.partition("[")
    return f"{module}::{head.replace('.', '::')}{bracket}{params}"


def is_node_id(text: str) -> bool:
    """`tests/a.py::TestA::test_b[...]` or a module `tests/a.py` (collection error)."""
    if not text or text[0].isspace():
        return False
    path, sep, _ = text.partition("::")
    return bool(sep and path and " " not in path) or (text.endswith(".py") and " " not in text)


def split_summary(text: str) -> tuple[str, str | None]:
    """`node - message` -> (node, message); a ` - ` inside `[param ids]` belongs to the node."""
    start = 0
    for _ in range(MAX_SPLIT_TRIES):
        at = text.find(" - ", start)
        if at < 0:
            break
        node = text[:at]
        if node.count("[") <= node.count("]"):
            return node, text[at + 3 :]
        start = at + 3
    node, sep, message = text.partition(" - ")
    return node, (message if sep else None)


def summary_line(line: str) -> tuple[Outcome, str, str | None] | None:
    """`FAILED node - message` / `ERROR node` of the short test summary."""
    for word, outcome in (("FAILED ", Outcome.FAILED), ("ERROR ", Outcome.ERROR)):
        if line.startswith(word):
            node, message = split_summary(line[len(word):])
            if is_node_id(node):
                return outcome, node, message
    return None


def verbose_line(line: str) -> tuple[Outcome, str] | None:
    """`node FAILED   [ 7%]` of `pytest -v`, or xdist's `[gw0] [ 7%] FAILED node`."""
    words = line.split()
    for i, word in enumerate(words):
        if word in ("FAILED", "ERROR"):
            outcome = Outcome.FAILED if word == "FAILED" else Outcome.ERROR
            if i == 1 and "::" in words[0] and is_node_id(words[0]):
                return outcome, words[0]
            if i > 0 and words[0].startswith("[gw") and i + 1 < len(words) and "::" in words[i + 1]:
                return outcome, words[i + 1]
            return None
    return None


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


def counts_from(items: str) -> TestCounts:
    """pytest's words -> our counts: xfailed is skipped, xpassed passed, errors failed."""
    found: dict[str, int] = {}
    for number, word in _COUNT_ITEM_RE.findall(items):
        found[word] = found.get(word, 0) + int(number)
    failed = found.get("failed", 0) + found.get("error", 0) + found.get("errors", 0)
    passed = found.get("passed", 0) + found.get("xpassed", 0)
    skipped = found.get("skipped", 0) + found.get("xfailed", 0)
    return TestCounts(total=failed + passed + skipped, passed=passed, failed=failed, skipped=skipped)


def counts_line(text: str) -> TestCounts | None:
    if " in " not in text or not text.endswith(("s", ")")):
        return None
    m = _COUNTS_RE.fullmatch(text)
    return counts_from(m["items"]) if m else None


_Key = tuple[str, Outcome]


class PytestConsumer:
    """Per-input state: the current `===` section and `___` block, what was collected so far."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._section: str | None = None
        self._block: _Block | None = None
        self._blocks: dict[_Key, list[_Block]] = {}  # by (title name, outcome); titles can repeat
        self._summary: dict[_Key, str | None] = {}  # by (node id, outcome) -> summary message
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
            if verbose is not None and (verbose[1], verbose[0]) not in self._summary:
                self._remember(verbose[1], verbose[0], None)

    def _remember(self, node: str, outcome: Outcome, message: str | None) -> None:
        key = (node, outcome)
        if key in self._summary or len(self._summary) < MAX_FAILURES:
            self._summary[key] = message
        else:
            self._dropped += 1

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
        self._blocks.setdefault(block_name(block.title), []).append(block)

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
        for (node, outcome), summary_message in self._summary.items():
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


def _case(node: str, outcome: Outcome, summary_message: str | None, block: _Block | None) -> TestCase:
    path, sep, rest = node.partition("::")
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
