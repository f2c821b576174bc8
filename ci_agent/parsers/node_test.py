"""Node's built-in test runner (`node --test`): its TAP reporter and its spec reporter.

TAP (the default when not on a terminal): `# Subtest: name`, then `not ok 2 - name` followed by
a YAML block (`---` ... `...`) with `location: '/p/t.test.js:16:3'`, `error: |-` and
`stack: |-` (frames without `at `), and `# tests 3` / `# pass 1` / `# fail 2` at the end.
Spec (`--test-reporter=spec`): `✖ name (7.5ms)` with the error and `at ...` frames indented
below it, `ℹ tests 3` counts, and a `✖ failing tests:` recap that repeats every failure (read
once). A suite failing only because its tests did (`subtestsFailed`, `N subtests failed`) is
not a failure of its own. Frames are given as Node prints them in spec (`at fn (/p/f.js:9:10)`,
`file://` dropped), so a failure is located at its first repository frame.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ci_agent.report import Outcome, ParseResult, TestCase, TestCounts

_NOT_OK_RE = re.compile(r"not ok \d+ - (?P<name>.*)")
_COUNT_RE = re.compile(r"(?:# |ℹ )(?P<what>tests|pass|fail|skipped|todo|cancelled) (?P<n>\d+)")
_LOCATION_RE = re.compile(r"location: '(?P<file>.+):(?P<line>\d+):(?P<col>\d+)'")
_SUITE_FAILED = ("subtestsFailed", "subtests failed", "subtest failed")
MAX_LINES = 200
MAX_LINE_CHARS = 2000
MAX_FAILURES = 20_000


@dataclass(slots=True)
class _Failure:
    name: str
    depth: int
    message: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    file: str | None = None
    line: int | None = None
    suite_only: bool = False
    block: str = ""  # TAP: the YAML key whose `|-` text follows (`error`, `stack`)
    props: bool = False  # spec: inside the `{ code: ..., actual: ... }` after the frames

    def case(self) -> TestCase:
        return TestCase(name=self.name, outcome=Outcome.FAILED, message="\n".join(self.message) or None,
                        stack="\n".join(self.frames) or None, file=self.file, line=self.line)


def _frame(text: str) -> str:
    text = text.strip().removesuffix(" {").replace("file://", "")
    return text if text.startswith("at ") else "at " + text


class NodeTestConsumer:
    def __init__(self, source: str) -> None:
        self.source = source
        self._suites: list[tuple[int, str]] = []  # TAP `# Subtest:` names by indentation
        self._open: _Failure | None = None
        self._failures: list[_Failure] = []
        self._counts: dict[str, int] = {}
        self._recap = False  # after spec's `✖ failing tests:`: repeats, not read

    def feed(self, line: str) -> None:
        stripped = line.lstrip(" ")
        depth = len(line) - len(stripped)
        if depth == 0:
            m = _COUNT_RE.fullmatch(line)
            if m is not None:
                self._counts[m["what"]] = int(m["n"])
                return
            if line == "✖ failing tests:":
                self._close()
                self._recap = True
                return
        if self._recap:
            return
        if stripped.startswith("# Subtest: "):
            self._close()
            self._suites = [(d, n) for d, n in self._suites if d < depth] + [(depth, stripped[11:])]
            return
        if stripped.startswith("not ok "):
            m = _NOT_OK_RE.fullmatch(stripped)
            if m is not None:
                self._start(m["name"], depth, [n for d, n in self._suites if d < depth])
                return
        if stripped.startswith(("✖ ", "✔ ", "ok ", "▶ ", "﹣ ")):
            self._close()
            if stripped.startswith("✖ ") and stripped.endswith("ms)") and " (" in stripped:
                self._start(stripped[2:stripped.rfind(" (")], depth, [])
            return
        if self._open is not None:
            if stripped and depth <= self._open.depth:
                self._close()
            elif stripped:
                self._body(stripped, depth)

    def _start(self, name: str, depth: int, parents: list[str]) -> None:
        self._close()
        if len(self._failures) < MAX_FAILURES:
            self._open = _Failure(" > ".join([*parents, name]), depth)

    def _body(self, text: str, depth: int) -> None:
        failure = self._open
        assert failure is not None
        text = text[:MAX_LINE_CHARS]
        if text in ("---", "...") and depth == failure.depth + 2:
            failure.block = ""  # the YAML block's own fences
            return
        if text.startswith("location: '"):
            m = _LOCATION_RE.fullmatch(text)
            if m is not None:
                failure.file, failure.line = m["file"].replace("file://", ""), int(m["line"])
            return
        if text.startswith(("failureType: ", "error: ")) and any(s in text for s in _SUITE_FAILED):
            failure.suite_only = True
        key = text.split(":", 1)[0] if depth == failure.depth + 2 else ""
        if key and key.isidentifier():  # a TAP YAML key
            failure.block = key
            if key == "error" and not text.endswith("|-"):
                failure.message.append(text[7:].strip("'"))
            return
        if failure.block == "stack" or text.startswith("at "):
            if len(failure.frames) < MAX_LINES:
                failure.frames.append(_frame(text))
            failure.props = text.endswith(" {")
        elif failure.props or text == "}":
            failure.props = text != "}"
        elif failure.block in ("error", "") and len(failure.message) < MAX_LINES:
            failure.message.append(text)

    def _close(self) -> None:
        failure, self._open = self._open, None
        if failure is not None and not failure.suite_only:
            self._failures.append(failure)

    def finish(self) -> ParseResult:
        self._close()
        counts = None
        if "tests" in self._counts:
            failed = self._counts.get("fail", 0) + self._counts.get("cancelled", 0)
            skipped = self._counts.get("skipped", 0) + self._counts.get("todo", 0)
            counts = TestCounts(self._counts["tests"], self._counts.get("pass", 0), failed, skipped)
        return ParseResult(format=PARSER.name, failures=[f.case() for f in self._failures], counts=counts)


@dataclass(frozen=True, slots=True)
class NodeTestParser:
    name: str = "node_test"
    description: str = "node --test output (TAP and spec reporters): failed tests, errors, frames, counts"

    def sniff(self, head: Sequence[str]) -> bool:
        for line in head:
            stripped = line.lstrip(" ")
            if stripped.startswith("# Subtest: ") or line.startswith("ℹ tests "):
                return True
            if stripped.startswith(("✖ ", "✔ ")) and stripped.endswith("ms)") and " (" in stripped:
                return True
        return False

    def consumer(self, source: str) -> NodeTestConsumer:
        return NodeTestConsumer(source)


PARSER = NodeTestParser()
