"""NUnit XML: NUnit 3 (`test-run` root), NUnit 2 (`test-results` root) and a bare `test-suite`.

Every `test-case` is a leaf (parameterised rows included); suites are only containers.
Outcomes are mapped explicitly from one table that covers both versions (their `result`
vocabularies only overlap where they agree). Nothing unknown becomes a pass:
- NUnit 3 `Failed` + label Error/Invalid -> error, + Cancelled -> aborted, + a
  "Test exceeded Timeout" label -> timeout; `Skipped` (Ignored/Explicit) -> skipped;
  `Inconclusive` -> inconclusive (counted in the total only); `Warning` -> passed, with a note.
- NUnit 2 `Error`/`NotRunnable` -> error (EnricoMi: skipped), `Cancelled` -> aborted,
  `Ignored`/`Skipped` -> skipped; old files without `result` use `executed`/`success`.
- Anything else -> error, with the unknown value in the message.
Suite-level failures: a OneTimeSetUp failure marks the children failed (site="Parent"), and
those are counted. A failing suite with no failing test under it (OneTimeTearDown, a fixture
that could not be built, a crashed run) becomes a RunError so it is not lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO

from ci_agent.parsers.caps import NAME_BYTES, cap, cap_name
from ci_agent.parsers.xmlresults import (
    MAX_MESSAGE_CHARS,
    MAX_STACK_CHARS,
    CaseFormatParser,
    CaseLayout,
    CaseSink,
    Freer,
    children_by_name,
    clear_element,
    head,
    name_of,
    output_of,
    parse_duration,
    parse_int,
    text,
    trim_blank_lines,
    walk_cases,
    with_problem,
)
from ci_agent.report import Outcome, ParseResult, TestCase

_ROOTS = frozenset({"test-run", "test-results", "test-suite"})
_SUITE = "test-suite"
_CASE = "test-case"
_LAYOUT = CaseLayout(_ROOTS, "NUnit XML (expected <test-run> or <test-results>)", _CASE, _ROOTS)
_RESULTS = {
    # NUnit 3
    "passed": Outcome.PASSED,
    "failed": Outcome.FAILED,
    "skipped": Outcome.SKIPPED,
    "inconclusive": Outcome.INCONCLUSIVE,
    "warning": Outcome.PASSED,  # Assert.Warn: the test passed with a warning (noted)
    # NUnit 2
    "success": Outcome.PASSED,
    "failure": Outcome.FAILED,
    "error": Outcome.ERROR,
    "ignored": Outcome.SKIPPED,
    "notrunnable": Outcome.ERROR,  # a test that cannot run (bad signature, no constructor) is broken
    "cancelled": Outcome.ABORTED,
}
_FAILED_LABELS = {"error": Outcome.ERROR, "invalid": Outcome.ERROR, "cancelled": Outcome.ABORTED}
_TIMEOUT_LABEL_PREFIX = "test exceeded timeout"
_CASE_CHILDREN = frozenset({"failure", "reason", "output", "assertions"})


def _read(stream: BinaryIO, sink: CaseSink) -> ParseResult:
    return walk_cases(stream, sink, _Walk(sink), _LAYOUT)


@dataclass
class _OpenSuite:
    """What we must remember about an open suite: its own children get cleared as we go."""

    name: str
    result: str
    label: str
    site: str
    failing_cases: int = 0
    failure_message: str | None = None
    reason_message: str | None = None


class _Walk:
    def __init__(self, sink: CaseSink) -> None:
        self.sink = sink
        self.root: str | None = None
        self.run_result = ""
        self.declared_total: int | None = None
        self.case_depth = 0
        self.suites: list[_OpenSuite] = []  # the root counts as a suite
        self.warnings: list[str] = []
        self.run_failure_message: str | None = None
        self.freer = Freer()

    def begin(self, root: Any) -> None:
        self.run_result = (root.get("result") or "").strip()
        if self.root != "test-results":  # NUnit 2 totals leave out not-run tests; only v3 totals compare
            self.declared_total = parse_int(root.get("total"))

    def open_suite(self, elem: Any) -> None:
        self.suites.append(
            _OpenSuite(
                name=elem.get("fullname") or elem.get("name") or "(unnamed suite)",
                result=(elem.get("result") or "").strip(),
                label=(elem.get("label") or "").strip(),
                site=(elem.get("site") or "").strip(),
            )
        )

    def end_case(self, elem: Any) -> None:
        outcome, problem = outcome_of(elem)
        if (elem.get("result") or "").strip().lower() == "warning":
            self.warnings.append(_name_of_case(elem))
        if outcome.is_failure and self.suites:
            self.suites[-1].failing_cases += 1
        self.sink.take(outcome, lambda: _build_case(elem, outcome, problem))
        self.freer.free(elem)

    def end_other(self, elem: Any, name: str) -> None:
        if name in _ROOTS:
            self._close_suite()
            clear_element(elem)
            return
        parent = elem.getparent()
        if parent is not None and name_of(parent.tag) in _ROOTS and self.suites:
            if name == "failure":
                self.suites[-1].failure_message = _message_of(elem)
            elif name == "reason":
                self.suites[-1].reason_message = _message_of(elem)

    def _close_suite(self) -> None:
        if not self.suites:
            return
        suite = self.suites.pop()
        if self.suites:
            self.suites[-1].failing_cases += suite.failing_cases
        elif self.root != _SUITE:
            # <test-run>/<test-results> is the run, not a suite: judged once in finish().
            self.run_failure_message = suite.failure_message
            return
        failed = (
            suite.result.lower() in ("failed", "failure", "error")
            or suite.label.lower() == "invalid"  # a fixture NUnit could not even build
            or suite.failure_message is not None
        )
        # site="Child": failed because a test under it failed; site="Parent": failed because its
        # parent did (NUnit may write such test cases beside, not under, this suite).
        if failed and not suite.failing_cases and suite.site.lower() not in ("child", "parent"):
            where = f" in {suite.site}" if suite.site else ""
            message = suite.failure_message or _reason_or_result(suite)
            self.sink.error(f"suite {suite.name} failed{where} with no failing test under it: {message}")

    def finish(self) -> None:
        self.sink.note_names("test(s) passed with warnings", self.warnings)
        self.sink.check_declared_total(self.declared_total, "the run")
        if (
            self.run_result.lower().startswith("fail")
            and not self.sink.failed
            and not self.sink.result.run_errors
        ):
            why = f": {self.run_failure_message}" if self.run_failure_message else ""
            self.sink.error(f"the run's result is {self.run_result} but no test case failed{why}")


def _reason_or_result(suite: _OpenSuite) -> str:
    if suite.reason_message:
        return suite.reason_message
    label = f" ({suite.label})" if suite.label else ""
    return f"result {suite.result or 'unknown'}{label}"


def case_from_element(elem: Any) -> TestCase:
    """One `test-case` element -> TestCase (all details)."""
    return _build_case(elem, *outcome_of(elem))


def _build_case(elem: Any, outcome: Outcome, problem: str | None) -> TestCase:
    children = children_by_name(elem, _CASE_CHILDREN)
    failure, reason, assertions = children.get("failure"), children.get("reason"), children.get("assertions")
    message = stack = None
    if failure is not None:
        message = _message_of(failure)
        stack = trim_blank_lines(_child_text(failure, "stack-trace"))
    if message is None and assertions is not None:
        message, stack = _first_failed_assertion(assertions, stack)
    if message is None and reason is not None:
        message = _message_of(reason)
    name = cap_name(_name_of_case(elem))
    return TestCase(
        name=name,
        outcome=outcome,
        classname=cap(elem.get("classname") or _class_from_name(name), NAME_BYTES),
        message=head(with_problem(message, problem), MAX_MESSAGE_CHARS),
        stack=head(stack, MAX_STACK_CHARS),
        duration_s=parse_duration(elem.get("duration") or elem.get("time")),
        stdout=output_of(children.get("output")),
    )


def _name_of_case(elem: Any) -> str:
    return elem.get("fullname") or elem.get("name") or "(unnamed test)"


def outcome_of(elem: Any) -> tuple[Outcome, str | None]:
    """(outcome, a note when the file's values were not ones we know)."""
    result = (elem.get("result") or "").strip()
    if not result:
        return _outcome_without_result(elem)
    outcome = _RESULTS.get(result.lower())
    if outcome is None:
        return Outcome.ERROR, f"unrecognised NUnit result {result!r}"
    label = (elem.get("label") or "").strip().lower()
    if outcome is Outcome.FAILED:
        if label.startswith(_TIMEOUT_LABEL_PREFIX):
            return Outcome.TIMEOUT, None
        return _FAILED_LABELS.get(label, Outcome.FAILED), None
    if outcome is Outcome.SKIPPED and label == "invalid":
        return Outcome.ERROR, None  # not runnable (not public, missing arguments): a broken test
    return outcome, None


def _outcome_without_result(elem: Any) -> tuple[Outcome, str | None]:
    """NUnit 2.2-era files: only `executed` and `success` (and sometimes only `executed`)."""
    executed = (elem.get("executed") or "").strip()
    success = (elem.get("success") or "").strip()
    if executed.lower() == "false":
        return Outcome.SKIPPED, None
    if success.lower() == "true":
        return Outcome.PASSED, None
    if success.lower() == "false":
        return Outcome.FAILED, None
    if not success and executed.lower() == "true":
        # Ran, and says nothing else: NUnit 2 writes a <failure> for every failing test.
        has_failure = any(name_of(child.tag) == "failure" for child in elem)
        return (Outcome.FAILED if has_failure else Outcome.PASSED), None
    if not success and not executed:
        return Outcome.ERROR, "the test case has no result"
    return Outcome.ERROR, f"unrecognised NUnit outcome executed={executed!r} success={success!r}"


def _first_failed_assertion(assertions: Any, stack: str | None) -> tuple[str | None, str | None]:
    for assertion in assertions:
        if (assertion.get("result") or "").lower() in ("failed", "error"):
            return _message_of(assertion), stack or trim_blank_lines(_child_text(assertion, "stack-trace"))
    return None, stack


def _message_of(elem: Any) -> str | None:
    return trim_blank_lines(_child_text(elem, "message"))


def _child_text(elem: Any, name: str) -> str | None:
    for child in elem:
        if name_of(child.tag) == name:
            return text(child)
    return None


def _class_from_name(name: str) -> str | None:
    """NUnit 2 has no classname: `Ns.Class.Method(args)` -> `Ns.Class`."""
    method = name.split("(", 1)[0]
    return method.rsplit(".", 1)[0] if "." in method else None


PARSER = CaseFormatParser(
    "nunit",
    "NUnit 2 and NUnit 3 XML result files",
    _ROOTS,
    _read,
)
