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

from ci_agent.parsers.caps import NAME_BYTES, cap, cap_name
from ci_agent.parsers.xmlresults import (
    MAX_MESSAGE_CHARS,
    MAX_STACK_CHARS,
    MAX_STDOUT_CHARS,
    CaseFormatParser,
    CaseLayout,
    CaseSink,
    Freer,
    clear_element,
    first_line,
    head,
    name_of,
    parse_duration,
    parse_int,
    tail,
    text,
    walk_cases,
)
from ci_agent.report import Outcome, ParseResult, TestCase

_ROOTS = frozenset({"testsuites", "testsuite"})
_SUITE = "testsuite"
_CASE = "testcase"
_LAYOUT = CaseLayout(_ROOTS, "JUnit XML (expected <testsuites> or <testsuite>)", _CASE, frozenset({_SUITE}))
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


def _read(stream: BinaryIO, sink: CaseSink) -> ParseResult:
    return walk_cases(stream, sink, _Walk(sink), _LAYOUT)


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
        self.freer = Freer()

    def begin(self, root: Any) -> None:
        self.declared_total = parse_int(root.get("tests"))

    def open_suite(self, elem: Any) -> None:
        top_level = not self.suite_files and self.root == "testsuites" and elem.getparent() is not None
        inherited = self.suite_files[-1] if self.suite_files else None
        self.suite_files.append(elem.get("file") or inherited)
        if top_level:
            declared = parse_int(elem.get("tests"))
            if declared is not None:
                self.declared_by_suites = (self.declared_by_suites or 0) + declared

    def end_case(self, elem: Any) -> None:
        children = _Children(elem)
        outcome = _outcome_of(elem, children.results)
        if children.reruns and outcome is Outcome.PASSED:
            self.flaky.append(elem.get("name") or UNNAMED)
        suite_file = self.suite_files[-1] if self.suite_files else None
        self.sink.take(outcome, lambda: _build_case(elem, outcome, children, suite_file))
        self.freer.free(elem)

    def end_other(self, elem: Any, name: str) -> None:
        if name == _SUITE:
            if self.suite_files:
                self.suite_files.pop()
            clear_element(elem)
            return
        parent = elem.getparent()
        if parent is not None and name_of(parent.tag) in _ROOTS:
            if name in ("failure", "error"):
                self._suite_level_failure(parent, elem)
            clear_element(elem)  # suite-level properties / system-out: done with them

    def _suite_level_failure(self, suite: Any, elem: Any) -> None:
        suite_name = suite.get("name") or "(unnamed suite)"
        message = elem.get("message") or first_line(text(elem)) or elem.get("type") or "no message"
        self.sink.error(f"suite {suite_name} reported a {name_of(elem.tag)} outside any test case: {message}")

    def finish(self) -> None:
        self.sink.note_names(
            "flaky test(s) failed first and passed on a rerun (counted as passed)", self.flaky
        )
        declared = self.declared_total if self.declared_total is not None else self.declared_by_suites
        self.sink.check_declared_total(declared, "the file")


class _Children:
    """One pass over a testcase's children: result elements, reruns, output elements."""

    __slots__ = ("err", "out", "reruns", "results")

    def __init__(self, elem: Any) -> None:
        self.results: list[tuple[Outcome, Any]] = []
        self.reruns = 0
        self.out: Any = None
        self.err: Any = None
        for child in elem:
            name = name_of(child.tag)
            outcome = _RESULT_OUTCOMES.get(name)
            if outcome is not None:
                self.results.append((outcome, child))
            elif name in _RERUN_ELEMENTS:
                self.reruns += 1
            elif name == "system-out":
                self.out = child
            elif name == "system-err":
                self.err = child


def case_from_element(elem: Any, suite_file: str | None = None) -> TestCase:
    """One `testcase` element -> TestCase (all details)."""
    children = _Children(elem)
    return _build_case(elem, _outcome_of(elem, children.results), children, suite_file)


def _outcome_of(elem: Any, results: list[tuple[Outcome, Any]]) -> Outcome:
    if not results:
        # googletest writes status="run" result="suppressed"; ctest and tst only `status`.
        for attribute in ("status", "result"):
            outcome = _STATUS_OUTCOMES.get((elem.get(attribute) or "").strip().lower())
            if outcome is not None:
                return outcome
        return Outcome.PASSED
    return max(results, key=lambda r: _SEVERITY[r[0]])[0]


def _build_case(elem: Any, outcome: Outcome, children: _Children, suite_file: str | None) -> TestCase:
    message, stack = _details(children.results)
    out = text(children.out) if children.out is not None else None
    err = text(children.err) if children.err is not None else None
    return TestCase(
        name=cap_name(elem.get("name") or elem.get("classname") or UNNAMED),
        outcome=outcome,
        classname=cap(elem.get("classname") or elem.get("class"), NAME_BYTES),
        message=head(message, MAX_MESSAGE_CHARS),
        stack=head(stack, MAX_STACK_CHARS),
        file=elem.get("file") or suite_file,
        line=parse_int(elem.get("line")),
        duration_s=parse_duration(elem.get("time")),
        stdout=tail(_join_output(out, err), MAX_STDOUT_CHARS),
    )


def _details(results: list[tuple[Outcome, Any]]) -> tuple[str | None, str | None]:
    """(message, stack) of the most severe result element."""
    if not results:
        return None, None
    ranked = sorted(results, key=lambda r: _SEVERITY[r[0]], reverse=True)
    outcome, worst = ranked[0]
    message = worst.get("message") or first_line(text(worst)) or worst.get("type") or None
    if outcome is Outcome.SKIPPED:
        return message, None
    # Every failing element's body, worst first: a teardown error after an assertion failure
    # (several results in one case) is worth seeing too.
    bodies = [text(el).strip("\n") for o, el in ranked if o is not Outcome.SKIPPED]
    return message, "\n".join(b for b in bodies if b.strip()) or None


def _join_output(out: str | None, err: str | None) -> str | None:
    if out and err:
        return f"{out.rstrip()}\n[stderr]\n{err}"
    return out or err


PARSER = CaseFormatParser(
    "junit",
    "JUnit XML result files (pytest, Maven Surefire, Gradle, Jest, PHPUnit, Go, ...)",
    _ROOTS,
    _read,
)
