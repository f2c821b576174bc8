"""`go test` output: failed tests (subtests included) with their `t.Error` lines, and panics.

    --- FAIL: TestStaticAssets (0.00s)
        --- FAIL: TestStaticAssets//static/app.js (0.00s)
            server_test.go:46: got 404, want 200
    FAIL
    FAIL	example.com/statusboard/web	0.010s

A failed test's message is its indented `file_test.go:N: msg` lines (located at the first one;
go prints the file's base name only), named `package.TestName` once the package's `FAIL\tpkg`
line says which package it was. With `-v` the lines come before `--- FAIL:` (after `=== RUN`),
so they are kept per running test. A parent whose subtests failed, with no line of its own, is
not reported again. A panic (`panic: ...`, `goroutine N [running]:`, then pairs of a function
line and a `\t/path/file.go:N +0x1f` line) fails the test that was running; its frames are kept
as `at function in /path/file.go:N`, the shape frame readers understand, so the failure is
located at the first frame in the repository. Every test is by fixed prefixes, splits and
anchored patterns whose parts cannot overlap: any line is read in linear time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ci_agent.report import Outcome, ParseResult, TestCase

_RESULT_RE = re.compile(r"--- (?P<result>FAIL|PASS|SKIP): (?P<name>\S+) \(\d+(?:\.\d+)?s\)")
_RUN_RE = re.compile(r"=== (?:RUN|CONT|PAUSE|NAME) +(?P<name>\S+)")
_PACKAGE_RE = re.compile(r"(?:FAIL|ok  |\?   )\t(?P<package>\S+)(?:\t.*)?")
_MESSAGE_RE = re.compile(r"(?P<file>[^\s:][^:]*?\.go):(?P<line>\d+): (?P<msg>.*)")
_FRAME_FILE_RE = re.compile(r"\t(?P<file>[^\t]+?\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?")
_GOROUTINE_RE = re.compile(r"goroutine \d+ \[[^\]]*\]:")
MAX_LINES = 200
MAX_LINE_CHARS = 2000
MAX_FAILURES = 20_000


@dataclass(slots=True)
class _Failed:
    name: str
    depth: int  # indentation of its `--- FAIL:` line
    lines: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    has_failed_child: bool = False

    def add(self, line: str) -> None:
        if len(self.lines) < MAX_LINES:
            self.lines.append(line[:MAX_LINE_CHARS])


def _located(lines: Sequence[str]) -> tuple[str | None, int | None]:
    for line in lines:
        m = _MESSAGE_RE.match(line)
        if m is not None:
            return m["file"], int(m["line"])
    return None, None


class GoTestConsumer:
    """Per-input state: failures of the package being printed, the running test's lines, a panic."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._pending: list[_Failed] = []  # failures whose package is not known yet
        self._done: list[TestCase] = []
        self._open: _Failed | None = None  # the failure whose indented lines follow
        self._running: str | None = None  # -v: the test whose lines are printed now
        self._run_lines: dict[str, list[str]] = {}
        self._panic: _Failed | None = None
        self._function: str | None = None  # a goroutine frame's function line, awaiting its file

    def feed(self, line: str) -> None:
        if self._panic is not None and self._feed_panic(line):
            return
        stripped = line.lstrip(" ")
        if stripped.startswith("--- "):
            m = _RESULT_RE.fullmatch(stripped)
            if m is not None:
                self._result(m["result"], m["name"], len(line) - len(stripped))
                return
        if line.startswith("=== "):
            m = _RUN_RE.fullmatch(line)
            if m is not None:
                self._running, self._open = m["name"], None
                return
        if line.startswith("panic: "):
            self._start_panic(line)
            return
        if line.startswith(("FAIL\t", "ok  \t", "?   \t")):
            m = _PACKAGE_RE.fullmatch(line)
            if m is not None:
                self._package(m["package"])
                return
        if line.startswith(" ") and stripped:
            self._indented(line, stripped)
        elif line.strip():
            self._open = None

    def _indented(self, line: str, stripped: str) -> None:
        if self._open is not None and len(line) - len(stripped) > self._open.depth:
            self._open.add(stripped)
        elif self._running is not None and len(self._run_lines) < MAX_FAILURES:
            lines = self._run_lines.setdefault(self._running, [])
            if len(lines) < MAX_LINES:
                lines.append(stripped[:MAX_LINE_CHARS])

    def _result(self, result: str, name: str, depth: int) -> None:
        self._open = None
        if result != "FAIL" or len(self._pending) >= MAX_FAILURES:
            self._run_lines.pop(name, None)
            return
        failed = _Failed(name, depth, list(self._run_lines.pop(name, ())))
        for earlier in self._pending:
            if earlier.depth < depth and name.startswith(earlier.name + "/"):
                earlier.has_failed_child = True
        self._pending.append(failed)
        self._open = failed

    def _start_panic(self, line: str) -> None:
        target = self._open or (self._pending[-1] if self._pending else None)
        if target is None:
            target = _Failed(self._running or "panic", 0)
            self._pending.append(target)
        target.add(line)
        self._panic, self._open, self._function = target, None, None

    def _feed_panic(self, line: str) -> bool:
        """Lines after `panic:`: its continuation, then goroutine traces. False ends the panic."""
        panic = self._panic
        assert panic is not None
        if line.startswith("\tpanic: ") or (line.startswith("[signal ") and not panic.frames):
            panic.add(line.strip())
            return True
        if not line.strip() or _GOROUTINE_RE.fullmatch(line):
            return True
        if line.startswith("\t"):
            m = _FRAME_FILE_RE.fullmatch(line)
            if m is not None and self._function is not None and len(panic.frames) < MAX_LINES:
                panic.frames.append(f"at {self._function} in {m['file']}:{m['line']}")
            self._function = None
            return True
        if line.startswith(("FAIL\t", "exit status ", "FAIL")):
            self._panic = None
            return False
        self._function = _function_name(line[:MAX_LINE_CHARS])
        return True

    def _package(self, package: str) -> None:
        self._panic, self._open, self._running = None, None, None
        self._run_lines.clear()
        for failed in self._pending:
            if failed.has_failed_child and not failed.lines:
                continue  # go fails the parent of a failed subtest; the subtest says why
            self._done.append(_case(failed, package))
        self._pending = []

    def finish(self) -> ParseResult:
        self._package("")
        return ParseResult(format=PARSER.name, failures=self._done)


def _function_name(line: str) -> str:
    """`pkg.(*T).Method` of `pkg.(*T).Method(0xc0, {0x1, 0x2})` or `created by pkg.F in goroutine 6`:
    the arguments are addresses, and `created by` would read as a function name."""
    name = line.removeprefix("created by ").split(" in goroutine ", 1)[0]
    if name.endswith(")") and "(" in name:
        name = name[: name.rfind("(")]
    return name or line


def _case(failed: _Failed, package: str) -> TestCase:
    file, line = _located(failed.lines)
    return TestCase(
        name=f"{package}.{failed.name}" if package else failed.name,
        outcome=Outcome.FAILED,
        classname=package or None,
        message="\n".join(failed.lines) or None,
        stack="\n".join(failed.frames) or None,
        file=file,
        line=line,
    )


@dataclass(frozen=True, slots=True)
class GoTestParser:
    name: str = "go_test"
    description: str = "go test output (failed tests and subtests, t.Error lines, panics)"

    def sniff(self, head: Sequence[str]) -> bool:
        for line in head:
            if line.startswith(("--- FAIL: ", "=== RUN ")) and (
                    _RESULT_RE.fullmatch(line) or _RUN_RE.fullmatch(line)):
                return True
            if line.startswith(("FAIL\t", "ok  \t")) and _PACKAGE_RE.fullmatch(line):
                return True
        return False

    def consumer(self, source: str) -> GoTestConsumer:
        return GoTestConsumer(source)


PARSER = GoTestParser()
