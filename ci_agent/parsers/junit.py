"""JUnit XML (`testsuites` / `testsuite` roots): pytest, Surefire/Failsafe, Gradle, jest-junit,
PHPUnit, go-junit-report, mocha, bazel, scalatest, ctest, the .NET JUnit loggers...

Choices, each against a known peer bug:
- Suites nest to any depth and every `testcase` under them counts (EnricoMi #107 and dorny
  PR #701 lost nested cases). Only the outermost `testcase` of a (malformed) nesting counts.
- Counts are ours, from the cases; a file's `tests` attribute that disagrees becomes a note,
  and a suite with counts but no cases adds no phantom tests (EnricoMi PR #233).
- Several result elements in one case: the most severe wins (error > failure > skipped).
- Surefire `flakyFailure`/`flakyError` (and a lone `rerunFailure`/`rerunError`) without a
  final `failure`/`error` mean the test passed on a rerun: a pass plus a note, not a failure.
- `<failure/>` with neither message nor body is still a failure.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from ci_agent.model import Outcome, ParseResult, TestCase
from ci_agent.parsers.xmlresults import (
    MAX_MESSAGE_CHARS,
    MAX_STACK_CHARS,
    MAX_STDOUT_CHARS,
    CaseSink,
    clear_element,
    first_line,
    head,
    local_name,
    parse_duration,
    parse_int,
    stream_events,
    tail,
    text_of,
)

_ROOTS = frozenset({"testsuites", "testsuite"})
_SUITE = "testsuite"
_CASE = "testcase"
_RESULT_OUTCOMES = {"error": Outcome.ERROR, "failure": Outcome.FAILED, "skipped": Outcome.SKIPPED}
_SEVERITY = {Outcome.ERROR: 3, Outcome.FAILED: 2, Outcome.SKIPPED: 1}
_RERUN_ELEMENTS = frozenset({"flakyFailure", "flakyError", "rerunFailure", "rerunError"})
# A case with no result element may still say what happened in a `status`/`result` attribute
# (ctest, googletest, the tst runner); anything not listed here with no element is a pass.
_STATUS_OUTCOMES = {
    "disabled": Outcome.SKIPPED,
    "notrun": Outcome.SKIPPED,
    "skipped": Outcome.SKIPPED,
    "ignored": Outcome.SKIPPED,
    "suppressed": Outcome.SKIPPED,
    "fail": Outcome.FAILED,
    "failed": Outcome.FAILED,
    "failure": Outcome.FAILED,
    "error": Outcome.ERROR,
}
UNNAMED = "(unnamed test)"


class JUnitParser:
    name = "junit"
    description = "JUnit XML result files (pytest, Maven Surefire, Gradle, Jest, PHPUnit, Go, ...)"
    root_names = _ROOTS

    def parse(self, stream: BinaryIO, source: str, keep_cases: bool = False) -> ParseResult:
        sink = CaseSink(self.name, source, keep_cases)
        walk = _Walk(sink)
        for event, elem, name in stream_events(stream, sink):
            if not walk.step(event, elem, name):
                break
        walk.finish()
        return sink.finish()


class _Walk:
    """Per-input state of one streaming pass (kept iterative: suites nest thousands deep)."""

    def __init__(self, sink: CaseSink) -> None:
        self.sink = sink
        self.root: str | None = None
        self.declared_total: int | None = None
        self.declared_by_suites: int | None = None
        self.case_depth = 0  # > 0 while inside a testcase
        self.suite_files: list[str | None] = []  # `file` of each open suite, inherited inward
        self.flaky: list[str] = []

    def step(self, event: str, elem: Any, name: str) -> bool:
        """Handle one event; False stops the walk (the root is not JUnit)."""
        if self.root is None:
            self.root = name
            if name not in _ROOTS:
                self.sink.error(
                    f"root element <{name}> is not JUnit XML (expected <testsuites> or <testsuite>)"
                )
                return False
            self.declared_total = parse_int(elem.get("tests"))
        if event == "start":
            self._start(elem, name)
        else:
            self._end(elem, name)
        return True

    def _start(self, elem: Any, name: str) -> None:
        if name == _CASE:
            self.case_depth += 1
        elif name == _SUITE and not self.case_depth:
            inherited = self.suite_files[-1] if self.suite_files else None
            self.suite_files.append(elem.get("file") or inherited)
            parent = elem.getparent()
            if parent is not None and parent.getparent() is None and self.root == "testsuites":
                declared = parse_int(elem.get("tests"))
                if declared is not None:
                    self.declared_by_suites = (self.declared_by_suites or 0) + declared

    def _end(self, elem: Any, name: str) -> None:
        if self.case_depth:
            if name == _CASE:
                self.case_depth -= 1
                if not self.case_depth:
                    self._case(elem)
                    clear_element(elem)
            return
        if name == _SUITE:
            if self.suite_files:
                self.suite_files.pop()
            clear_element(elem)
            return
        parent = elem.getparent()
        if parent is not None and local_name(parent.tag) in _ROOTS:
            if name in ("failure", "error"):
                self._suite_level_failure(parent, elem)
            clear_element(elem)  # suite-level properties / system-out: done with them

    def _case(self, elem: Any) -> None:
        suite_file = self.suite_files[-1] if self.suite_files else None
        case, passed_on_rerun = case_from_element(elem, suite_file)
        if passed_on_rerun:
            self.flaky.append(case.name)
        self.sink.add(case)

    def _suite_level_failure(self, suite: Any, elem: Any) -> None:
        suite_name = suite.get("name") or "(unnamed suite)"
        message = elem.get("message") or first_line(text_of(elem)) or elem.get("type") or "no message"
        self.sink.error(
            f"suite {suite_name} reported a {local_name(elem.tag)} outside any test case: {message}"
        )

    def finish(self) -> None:
        self.sink.note_names(
            "flaky test(s) failed first and passed on a rerun (counted as passed)", self.flaky
        )
        declared = self.declared_total if self.declared_total is not None else self.declared_by_suites
        self.sink.check_declared_total(declared, "the file")


def case_from_element(elem: Any, suite_file: str | None = None) -> tuple[TestCase, bool]:
    """One `testcase` element -> (TestCase, passed only after a rerun)."""
    results: list[tuple[Outcome, Any]] = []
    reruns = 0
    out: str | None = None
    err: str | None = None
    for child in elem:
        child_name = local_name(child.tag)
        if child_name in _RESULT_OUTCOMES:
            results.append((_RESULT_OUTCOMES[child_name], child))
        elif child_name in _RERUN_ELEMENTS:
            reruns += 1
        elif child_name == "system-out":
            out = text_of(child) or out
        elif child_name == "system-err":
            err = text_of(child) or err
    outcome, message, stack = _outcome_of(elem, results)
    name = elem.get("name") or elem.get("classname") or UNNAMED
    case = TestCase(
        name=name,
        outcome=outcome,
        classname=elem.get("classname") or elem.get("class") or None,
        message=head(message, MAX_MESSAGE_CHARS),
        stack=head(stack, MAX_STACK_CHARS),
        file=elem.get("file") or suite_file,
        line=parse_int(elem.get("line")),
        duration_s=parse_duration(elem.get("time")),
        stdout=tail(_join_output(out, err), MAX_STDOUT_CHARS),
    )
    return case, bool(reruns) and outcome is Outcome.PASSED


def _outcome_of(elem: Any, results: list[tuple[Outcome, Any]]) -> tuple[Outcome, str | None, str | None]:
    if not results:
        status = (elem.get("status") or elem.get("result") or "").strip().lower()
        return _STATUS_OUTCOMES.get(status, Outcome.PASSED), None, None
    results.sort(key=lambda r: _SEVERITY[r[0]], reverse=True)
    outcome, worst = results[0]
    message = worst.get("message") or first_line(text_of(worst)) or worst.get("type") or None
    if outcome is Outcome.SKIPPED:
        return outcome, message, None
    # Every failing element's body, worst first: a teardown error after an assertion failure
    # (several results in one case) is worth seeing too.
    bodies = [text_of(el).strip("\n") for o, el in results if o is not Outcome.SKIPPED]
    stack = "\n".join(b for b in bodies if b.strip()) or None
    return outcome, message, stack


def _join_output(out: str | None, err: str | None) -> str | None:
    if out and err:
        return f"{out.rstrip()}\n[stderr]\n{err}"
    return out or err


PARSER = JUnitParser()
