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

from ci_agent.model import Outcome, ParseResult, TestCase
from ci_agent.parsers.xmlresults import (
    MAX_MESSAGE_CHARS,
    MAX_STACK_CHARS,
    MAX_STDOUT_CHARS,
    CaseSink,
    clear_element,
    head,
    local_name,
    parse_duration,
    parse_int,
    stream_events,
    tail,
    text_of,
)

_ROOTS = frozenset({"test-run", "test-results", "test-suite"})
_SUITE = "test-suite"
_CASE = "test-case"
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


class NUnitParser:
    name = "nunit"
    description = "NUnit 2 and NUnit 3 XML result files"
    root_names = _ROOTS

    def parse(self, stream: BinaryIO, source: str, keep_cases: bool = False) -> ParseResult:
        sink = CaseSink(self.name, source, keep_cases)
        walk = _Walk(sink)
        for event, elem, name in stream_events(stream, sink):
            if not walk.step(event, elem, name):
                break
        walk.finish()
        return sink.finish()


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

    def step(self, event: str, elem: Any, name: str) -> bool:
        if self.root is None:
            self.root = name
            if name not in _ROOTS:
                self.sink.error(
                    f"root element <{name}> is not NUnit XML (expected <test-run> or <test-results>)"
                )
                return False
            self.run_result = (elem.get("result") or "").strip()
            if name != "test-results":  # NUnit 2 totals leave out not-run tests; only v3 totals compare
                self.declared_total = parse_int(elem.get("total"))
        if event == "start":
            if name == _CASE:
                self.case_depth += 1
            elif not self.case_depth and name in _ROOTS:
                self.suites.append(
                    _OpenSuite(
                        name=elem.get("fullname") or elem.get("name") or "(unnamed suite)",
                        result=(elem.get("result") or "").strip(),
                        label=(elem.get("label") or "").strip(),
                        site=(elem.get("site") or "").strip(),
                    )
                )
            return True
        self._end(elem, name)
        return True

    def _end(self, elem: Any, name: str) -> None:
        if self.case_depth:
            if name == _CASE:
                self.case_depth -= 1
                if not self.case_depth:
                    self._case(elem)
                    clear_element(elem)
            return
        if name in _ROOTS:
            self._close_suite()
            clear_element(elem)
            return
        parent = elem.getparent()
        if parent is not None and local_name(parent.tag) in _ROOTS and self.suites:
            if name == "failure":
                self.suites[-1].failure_message = _message_of(elem)
            elif name == "reason":
                self.suites[-1].reason_message = _message_of(elem)

    def _case(self, elem: Any) -> None:
        case = case_from_element(elem)
        if (elem.get("result") or "").strip().lower() == "warning":
            self.warnings.append(case.name)
        if case.outcome.is_failure and self.suites:
            self.suites[-1].failing_cases += 1
        self.sink.add(case)

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
    failure = reason = output = assertions = None
    for child in elem:
        child_name = local_name(child.tag)
        if child_name == "failure":
            failure = child
        elif child_name == "reason":
            reason = child
        elif child_name == "output":
            output = child
        elif child_name == "assertions":
            assertions = child
    outcome, problem = outcome_of(elem, has_failure=failure is not None)
    message = stack = None
    if failure is not None:
        message = _message_of(failure)
        stack = _trimmed(_child_text(failure, "stack-trace"))
    if message is None and assertions is not None:
        message, stack = _first_failed_assertion(assertions, stack)
    if message is None and reason is not None:
        message = _message_of(reason)
    if problem:
        message = f"{problem}; {message}" if message else problem
    name = elem.get("fullname") or elem.get("name") or "(unnamed test)"
    return TestCase(
        name=name,
        outcome=outcome,
        classname=elem.get("classname") or _class_from_name(name),
        message=head(message, MAX_MESSAGE_CHARS),
        stack=head(stack, MAX_STACK_CHARS),
        duration_s=parse_duration(elem.get("duration") or elem.get("time")),
        stdout=tail(_trimmed(text_of(output)) if output is not None else None, MAX_STDOUT_CHARS),
    )


def outcome_of(elem: Any, has_failure: bool = False) -> tuple[Outcome, str | None]:
    """(outcome, a note when the file's values were not ones we know)."""
    result = (elem.get("result") or "").strip()
    if not result:
        return _outcome_without_result(elem, has_failure)
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


def _outcome_without_result(elem: Any, has_failure: bool) -> tuple[Outcome, str | None]:
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
        return (Outcome.FAILED if has_failure else Outcome.PASSED), None
    if not success and not executed:
        return Outcome.ERROR, "the test case has no result"
    return Outcome.ERROR, f"unrecognised NUnit outcome executed={executed!r} success={success!r}"


def _first_failed_assertion(assertions: Any, stack: str | None) -> tuple[str | None, str | None]:
    for assertion in assertions:
        if (assertion.get("result") or "").lower() in ("failed", "error"):
            return _message_of(assertion), stack or _trimmed(_child_text(assertion, "stack-trace"))
    return None, stack


def _message_of(elem: Any) -> str | None:
    return _trimmed(_child_text(elem, "message"))


def _child_text(elem: Any, name: str) -> str | None:
    for child in elem:
        if local_name(child.tag) == name:
            return text_of(child)
    return None


def _trimmed(text: str | None) -> str | None:
    """Drop the blank lines CDATA blocks start/end with; keep indentation (NUnit aligns with it)."""
    if text is None:
        return None
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines).rstrip() or None


def _class_from_name(name: str) -> str | None:
    """NUnit 2 has no classname: `Ns.Class.Method(args)` -> `Ns.Class`."""
    method = name.split("(", 1)[0]
    return method.rsplit(".", 1)[0] if "." in method else None


PARSER = NUnitParser()
