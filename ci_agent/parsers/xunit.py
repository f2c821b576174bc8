"""xUnit.net XML (v2 `assemblies` / `assembly` roots; the v1 `assembly` > `class` > `test`
shape reads the same way).

Each `test` is a leaf: `result` Pass/Fail/Skip/NotRun maps explicitly; anything else is an
error carrying the unknown value (never a pass). `name` is the display name (theory rows
included), `type` the class.

`errors/error` elements (assembly/collection/class/method cleanup failures, `fatal`) are not
tests: they have no test identity and no outcome, and the tests they follow already have
their own results. We report each as a RunError (type, where, exception message and the top
of its stack) so the failure is shown and fails the run, without inventing a test or
skewing the counts.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from ci_agent.parsers.caps import NAME_BYTES, cap, cap_name
from ci_agent.parsers.xmlresults import (
    MAX_MESSAGE_CHARS,
    MAX_STACK_CHARS,
    CaseFormatParser,
    CaseSink,
    Freer,
    children_by_name,
    clear_element,
    head,
    name_of,
    output_of,
    parse_duration,
    parse_int,
    refused_root,
    stream_events,
    text,
    trim_blank_lines,
    with_problem,
)
from ci_agent.report import Outcome, ParseResult, TestCase

_ROOTS = frozenset({"assemblies", "assembly"})
_CASE = "test"
_RESULTS = {
    "pass": Outcome.PASSED,
    "fail": Outcome.FAILED,
    "skip": Outcome.SKIPPED,
    "notrun": Outcome.SKIPPED,  # xUnit v3 explicit tests that were not asked for
}
_CASE_CHILDREN = frozenset({"failure", "reason", "output"})
_ERROR_STACK_LINES = 10
_ERROR_MESSAGE_CHARS = 2_000


def _read(stream: BinaryIO, sink: CaseSink) -> ParseResult:
    freer = Freer()
    root: str | None = None
    declared: int | None = None
    case_depth = 0
    for event, elem, name in stream_events(stream, sink):
        if root is None:
            root = name
            if refused_root(sink, name, _ROOTS, "xUnit XML (expected <assemblies> or <assembly>)"):
                break
        if event == "start":
            if name == _CASE:
                case_depth += 1
            elif name == "assembly" and not case_depth:
                total = parse_int(elem.get("total"))
                if total is not None:
                    declared = (declared or 0) + total
        elif case_depth:
            if name == _CASE:
                case_depth -= 1
                if not case_depth:
                    _end_case(sink, elem)
                    freer.free(elem)
        elif name == "error":
            parent = elem.getparent()
            if parent is not None and name_of(parent.tag) == "errors":
                sink.error(error_message(elem))
                clear_element(elem)
        elif name in ("collection", "class", "errors", "assembly"):
            clear_element(elem)
    sink.check_declared_total(declared, "the file")
    return sink.finish()


def _end_case(sink: CaseSink, elem: Any) -> None:
    outcome, problem = outcome_of(elem)
    sink.take(outcome, lambda: _build_case(elem, outcome, problem))


def outcome_of(elem: Any) -> tuple[Outcome, str | None]:
    """(outcome, a note when the result is missing or not one we know)."""
    result = (elem.get("result") or "").strip()
    outcome = _RESULTS.get(result.lower())
    if outcome is not None:
        return outcome, None
    return Outcome.ERROR, f"unrecognised xUnit result {result!r}" if result else "the test has no result"


def case_from_element(elem: Any) -> TestCase:
    """One `test` element -> TestCase (all details)."""
    return _build_case(elem, *outcome_of(elem))


def _build_case(elem: Any, outcome: Outcome, problem: str | None) -> TestCase:
    children = children_by_name(elem, _CASE_CHILDREN)
    failure, reason = children.get("failure"), children.get("reason")
    message = stack = None
    if failure is not None:
        message, stack = _failure_text(failure)
    elif reason is not None:
        message = trim_blank_lines(text(reason))
    return TestCase(
        name=cap_name(elem.get("name") or elem.get("method") or "(unnamed test)"),
        outcome=outcome,
        classname=cap(elem.get("type"), NAME_BYTES),
        message=head(with_problem(message, problem), MAX_MESSAGE_CHARS),
        stack=head(stack, MAX_STACK_CHARS),
        duration_s=parse_duration(elem.get("time")),
        stdout=output_of(children.get("output")),
    )


def error_message(elem: Any) -> str:
    """One `errors/error` element -> a RunError message: what failed, where, and why."""
    kind = elem.get("type") or "unknown"
    where = elem.get("name")
    message = stack = None
    exception_type = None
    for child in elem:
        if name_of(child.tag) == "failure":
            exception_type = child.get("exception-type")
            message, stack = _failure_text(child)
    text = f"xUnit {kind} error" + (f" in {where}" if where else "")
    detail = message or exception_type or "no message"
    text += f": {head(detail, _ERROR_MESSAGE_CHARS)}"
    if stack:
        lines = stack.splitlines()
        text += "\n" + "\n".join(lines[:_ERROR_STACK_LINES])
        if len(lines) > _ERROR_STACK_LINES:
            text += f"\n... ({len(lines) - _ERROR_STACK_LINES} more stack lines)"
    return text


def _failure_text(failure: Any) -> tuple[str | None, str | None]:
    message = stack = None
    for child in failure:
        child_name = name_of(child.tag)
        if child_name == "message":
            message = trim_blank_lines(text(child))
        elif child_name == "stack-trace":
            stack = trim_blank_lines(text(child))
    if message is None:
        message = failure.get("exception-type") or None
    return message, stack


PARSER = CaseFormatParser(
    "xunit",
    "xUnit.net v2 (and v1) XML result files",
    _ROOTS,
    _read,
)
