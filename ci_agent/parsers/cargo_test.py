"""`cargo test` output (libtest's console format): failed tests with their panic.

What libtest prints for one test binary, in order:

    running 3 tests
    test money::tests::splits ... FAILED          (or `ok`, `ignored`; `-q` prints dots instead)

    failures:

    ---- money::tests::splits stdout ----
    <what the test printed>
    thread 'money::tests::splits' (1171) panicked at src/money.rs:33:9:
    assertion `left == right` failed
      left: [Cents(3333)]
     right: [Cents(3334)]
    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

    failures:
        money::tests::splits

    test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

A failed test is located where it panicked (`src/money.rs:33`) and its message is the panic's
text, `left:`/`right:` included: that is what tells what the code computed. Rust before 1.73
printed `panicked at 'message', src/x.rs:3:5` on one line; both shapes are read. Counts are the
sum of the `test result:` lines of every binary. Matching is by fixed prefixes and suffixes and
anchored patterns whose parts cannot overlap, so any line is read in linear time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ci_agent.report import Outcome, ParseResult, TestCase, TestCounts

_RUNNING_RE = re.compile(r"running \d+ tests?")
_RESULT_RE = re.compile(
    r"test result: (?:ok|FAILED)\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored;"
)
# 1.73+: `thread 'name' (tid) panicked at src/x.rs:3:5:` (the thread id since 1.88), message below.
_PANIC_AT_RE = re.compile(
    r"thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at "
    r"(?P<file>[^\s:'][^:']*?):(?P<line>\d+):(?P<col>\d+):"
)
# Before 1.73: `thread 'name' panicked at 'message', src/x.rs:3:5` (the message may hold anything).
_PANIC_OLD_RE = re.compile(r"thread '(?P<thread>[^']*)' panicked at '(?P<msg>.*)', "
                           r"(?P<file>[^\s:,][^:,]*?):(?P<line>\d+):(?P<col>\d+)")
_BACKTRACE_NOTE = "note: run with `RUST_BACKTRACE=1`"
MAX_BLOCK_LINES = 200
MAX_LINE_CHARS = 2000
MAX_FAILURES = 20_000


@dataclass(slots=True)
class _Block:
    """One `---- name stdout ----` block: what the test printed, then its panic."""

    name: str
    printed: list[str] = field(default_factory=list)
    message: list[str] = field(default_factory=list)
    file: str | None = None
    line: int | None = None
    column: int | None = None
    in_panic: bool = False
    backtrace: list[str] | None = None  # `RUST_BACKTRACE=1`: `at ./src/x.rs:3:5` lines among others
    in_backtrace: bool = False

    def add(self, line: str) -> None:
        line = line[:MAX_LINE_CHARS]
        if self.file is None:
            if self._panic(line):
                return
            if len(self.printed) < MAX_BLOCK_LINES:
                self.printed.append(line)
        elif line == "stack backtrace:":
            self.in_panic, self.in_backtrace, self.backtrace = False, True, []
        elif self.in_backtrace and self.backtrace is not None:
            if not line.strip() or line.startswith("note: "):
                self.in_backtrace = False
            elif len(self.backtrace) < MAX_BLOCK_LINES:
                self.backtrace.append(line)
        elif self.in_panic:
            if line.startswith(_BACKTRACE_NOTE) or not line.strip():
                self.in_panic = False
            elif len(self.message) < MAX_BLOCK_LINES:
                self.message.append(line)

    def _panic(self, line: str) -> bool:
        if not line.startswith("thread '") or " panicked at " not in line:
            return False
        m = _PANIC_AT_RE.fullmatch(line)
        if m is not None:
            self.file, self.line, self.column, self.in_panic = m["file"], int(m["line"]), int(m["col"]), True
            return True
        m = _PANIC_OLD_RE.fullmatch(line)
        if m is not None:
            self.file, self.line, self.column = m["file"], int(m["line"]), int(m["col"])
            self.message.append(m["msg"])
            return True
        return False

    def case(self) -> TestCase:
        printed = "\n".join(self.printed).strip("\n")
        message = "\n".join(self.message).strip("\n") or (printed if self.file is None else "")
        return TestCase(name=self.name, outcome=Outcome.FAILED, message=message or None,
                        stack=self._stack(), file=self.file, line=self.line,
                        stdout=printed or None if self.file is not None else None)

    def _stack(self) -> str | None:
        """The panic's location as the first frame (`at src/x.rs:3:5`, the shape backtraces print),
        then the backtrace if one was printed: failures cluster and are located by their frames."""
        if self.file is None:
            return None
        return "\n".join([f"at {self.file}:{self.line}:{self.column}", *(self.backtrace or ())])


class CargoTestConsumer:
    """Per-input state: the open block, the failed names in first-seen order, summed counts."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._block: _Block | None = None
        self._blocks: dict[str, _Block] = {}
        self._failed: dict[str, None] = {}  # names from `test x ... FAILED` and the `failures:` list
        self._listing = False  # inside the second `failures:` section (indented names)
        self._counts: TestCounts | None = None
        self._seen_tests = TestCounts()  # from `test x ... ok` lines, when no summary comes

    def feed(self, line: str) -> None:
        if line.startswith("---- ") and line.endswith(" stdout ----"):
            self._close()
            name = line[5:-12]
            if len(self._blocks) < MAX_FAILURES:
                self._block = self._blocks.setdefault(name, _Block(name))
            self._listing = False
            return
        if line.startswith("test ") and self._test_line(line):
            return
        if line == "failures:":
            self._close()
            self._listing = True
            return
        if self._listing:
            self._list_line(line)
            return
        if self._block is not None:
            if _RESULT_RE.match(line) or _RUNNING_RE.fullmatch(line):
                self._close()
            else:
                self._block.add(line)

    def _test_line(self, line: str) -> bool:
        m = _RESULT_RE.match(line)
        if m is not None:
            self._close()
            self._listing = False
            passed, failed, ignored = int(m["passed"]), int(m["failed"]), int(m["ignored"])
            found = TestCounts(passed + failed + ignored, passed, failed, ignored)
            self._counts = found if self._counts is None else self._counts + found
            return True
        if line.endswith(" ... FAILED"):
            self._fail(line[5:-11])
            self._seen_tests = self._seen_tests + TestCounts(1, 0, 1, 0)
            return True
        if line.endswith(" ... ok"):
            self._seen_tests = self._seen_tests + TestCounts(1, 1, 0, 0)
            return True
        return False

    def _list_line(self, line: str) -> None:
        name = line[4:]
        if line.startswith("    ") and name and " " not in name:
            self._fail(name)
        elif line.strip():
            self._listing = False

    def _fail(self, name: str) -> None:
        if len(self._failed) < MAX_FAILURES:
            self._failed.setdefault(name, None)

    def _close(self) -> None:
        self._block = None

    def finish(self) -> ParseResult:
        names = list(self._failed) + [name for name in self._blocks if name not in self._failed]
        failures = [self._blocks[name].case() if name in self._blocks
                    else TestCase(name=name, outcome=Outcome.FAILED) for name in names]
        counts = self._counts
        if counts is None and self._seen_tests.total:
            counts = self._seen_tests
        return ParseResult(format=PARSER.name, failures=failures, counts=counts)


@dataclass(frozen=True, slots=True)
class CargoTestParser:
    name: str = "cargo_test"
    description: str = "cargo test / libtest console output (failed tests, panics, counts)"

    def sniff(self, head: Sequence[str]) -> bool:
        # `running 3 tests` and libtest's summary are printed by nothing else.
        return any(_RUNNING_RE.fullmatch(line) or _RESULT_RE.match(line) for line in head)

    def consumer(self, source: str) -> CargoTestConsumer:
        return CargoTestConsumer(source)


PARSER = CargoTestParser()
