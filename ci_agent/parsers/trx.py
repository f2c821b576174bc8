"""Visual Studio / VSTest / Microsoft.Testing.Platform TRX result files.

Streaming and namespace-agnostic (TeamTest 2006 and 2010), independent of element order.
Decisions (see /work/shared/reference/trx-parsers.md §0-§3):
- Every result kind under `Results` counts, unknown `*Result` elements included. Only leaves
  count: a data-driven parent or aggregation with `InnerResults` is not a test, its rows are.
- Outcomes map explicitly (`OUTCOMES`); timeout/aborted/error/NotRunnable/Disconnected and a
  missing or unknown outcome are failures, never passes. Completed counts as passed (it
  finished without a verdict); InProgress/Pending count as skipped (they never finished, and a
  test that never finished must not look like a pass). Both are flagged in `notes`.
- `TestCase.name` is `@testName` exactly as written; `classname` comes from TestDefinitions
  (`TestMethod/@className` cut at the first `,`). Reports qualify with `qualified_name()`.
- The run itself can fail with no failing test (host crash, missing framework): that is a
  RunError. xUnit's per-test `RunInfo` echoes (`... [FAIL]`/`[SKIP]`) are not.
- `ResultSummary/Counters` are not trusted (VSTest double-counts data-driven parents); a
  mismatch with what we counted is only noted.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from lxml import etree

from ci_agent.model import Outcome, ParseResult, RunError, TestCase, TestCounts
from ci_agent.parsers.xmlsafe import SanitizingReader, clear_element, iterparse, local_name, text_of

STDOUT_LIMIT = 4096
RUN_TEXT_LIMIT = 4096
MAX_RUN_INFOS = 20

OUTCOMES: dict[str, Outcome] = {
    "Passed": Outcome.PASSED,
    "Failed": Outcome.FAILED,
    "Error": Outcome.ERROR,
    "Timeout": Outcome.TIMEOUT,
    "Aborted": Outcome.ABORTED,
    "NotExecuted": Outcome.SKIPPED,
    "Inconclusive": Outcome.INCONCLUSIVE,
    "NotRunnable": Outcome.ERROR,  # bad signature / missing attribute: a setup failure
    "PassedButRunAborted": Outcome.PASSED,  # plus a RunError: the run itself was aborted
    "Warning": Outcome.PASSED,  # noted
    "Disconnected": Outcome.ABORTED,  # the agent went away: an infrastructure failure
    "Completed": Outcome.PASSED,  # noted
    "InProgress": Outcome.SKIPPED,  # noted
    "Pending": Outcome.SKIPPED,  # noted
}
_NOTED_OUTCOMES = frozenset({"Warning", "Completed", "InProgress", "Pending", "NotRunnable", "Disconnected"})
KNOWN_RESULT_KINDS = frozenset(
    {"UnitTestResult", "TestResultAggregation", "WebTestResult", "GenericTestResult",
     "ManualTestResult", "TestResult", "LoadTestResult"}
)
_FAILING_RUN_OUTCOMES = frozenset({"Failed", "Error", "Aborted", "Timeout", "Disconnected"})
_DURATION_RE = re.compile(r"^\s*(?:(\d+)\.)?(\d+):(\d+):(\d+(?:\.\d+)?)\s*$")
# The first frame with a file: any UI language's "line" word; Windows, `/_/`, `/` and `~/` paths.
_FRAME_FILE_RE = re.compile(
    r"(?:^|\s)(?P<file>(?:[A-Za-z]:[\\/]|[\\/]|~[\\/])[^\n]*?):"
    r"(?:line|línea|linea|Zeile|ligne|riga|regel|linha|lijn|rad|linje|wiersz|řádek|satır|строка|行号|行|줄)"
    r" ?(?P<line>\d+)\s*$",
    re.MULTILINE,
)
# xUnit under VSTest echoes every failed/skipped test as a RunInfo; MTP exit code 2 means
# "some test failed". Both repeat test failures we already report.
_ECHO_RE = re.compile(r"\[(?:FAIL|SKIP)\]\s*$")
_MTP_TEST_FAILURE_EXIT_RE = re.compile(r"Exit code indicates failure: '2'")


def qualified_name(classname: str | None, name: str) -> str:
    """The full name for reports: `Class.Method` unless `name` is already qualified by it."""
    if not classname or name.startswith(classname + "."):
        return name
    return f"{classname}.{name}"


def parse_duration(text: str | None) -> float | None:
    """TimeSpan text (`00:00:18`, `00:00:01.2345678`, `1.02:03:04.5`) -> seconds, or None."""
    if not text:
        return None
    m = _DURATION_RE.match(text)
    if m is None:
        return None
    days, hours, minutes, seconds = m.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def first_frame_location(stack: str | None) -> tuple[str | None, int | None]:
    """File and line of the first stack frame that names a file, in any UI language."""
    if not stack:
        return None, None
    m = _FRAME_FILE_RE.search(stack)
    if m is None:
        return None, None
    return m.group("file").strip(), int(m.group("line"))


def map_outcome(raw: str | None) -> Outcome:
    """A TRX outcome -> ours. Missing or unknown is an error: never a silent pass."""
    if raw is None:
        return Outcome.ERROR
    return OUTCOMES.get(raw.strip(), Outcome.ERROR)


@dataclass(slots=True)
class _Pending:
    """A leaf result waiting for its class name (definitions may come after results)."""

    test_id: str | None
    execution_id: str | None
    case: TestCase


@dataclass(slots=True)
class _RunInfo:
    outcome: str
    text: str


@dataclass(slots=True)
class _State:
    source: str
    keep_cases: bool
    counts: dict[str, int] = field(default_factory=lambda: {"passed": 0, "failed": 0, "skipped": 0})
    kept: list[_Pending] = field(default_factory=list)
    classes: dict[str, str | None] = field(default_factory=dict)  # testId/executionId -> class
    results_done: bool = False
    needed_ids: set[str] = field(default_factory=set)
    raw_outcomes: dict[str, int] = field(default_factory=dict)  # noteworthy raw outcomes
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    run_outcome: str | None = None
    run_infos: list[_RunInfo] = field(default_factory=list)
    echo_run_infos: int = 0
    run_stdout: str | None = None
    counters_total: int | None = None
    passed_but_run_aborted: int = 0
    failing_parents: int = 0
    run_errors: list[RunError] = field(default_factory=list)
    # one frame per open result element: how many child results it has seen so far
    open_results: list[list[int]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _child(elem: Any, name: str) -> Any:
    for child in elem:
        if local_name(child.tag) == name:
            return child
    return None


def _text(elem: Any) -> str | None:
    if elem is None:
        return None
    return text_of(elem)


def _read_output(result: Any) -> tuple[str | None, str | None, str | None]:
    """(message, stack, stdout) from a result's Output; stdout bounded, StdErr appended."""
    output = _child(result, "Output")
    if output is None:
        return None, None, None
    error_info = _child(output, "ErrorInfo")
    message = _text(_child(error_info, "Message")) if error_info is not None else None
    stack = _text(_child(error_info, "StackTrace")) if error_info is not None else None
    stdout = _text(_child(output, "StdOut"))
    stderr = _text(_child(output, "StdErr"))
    if stderr:
        stdout = f"{stdout or ''}\n[stderr]\n{stderr}" if stdout else f"[stderr]\n{stderr}"
    if stdout is not None and len(stdout) > STDOUT_LIMIT:
        stdout = stdout[:STDOUT_LIMIT] + "\n[... output cut ...]"
    return message, stack, stdout


def _make_case(result: Any) -> TestCase:
    raw = result.get("outcome")
    message, stack, stdout = _read_output(result)
    file, line = first_frame_location(stack)
    name = result.get("testName") or result.get("name") or result.get("testId") or "(unnamed test)"
    return TestCase(
        name=name,
        outcome=map_outcome(raw),
        message=message,
        stack=stack,
        file=file,
        line=line,
        duration_s=parse_duration(result.get("duration")),
        stdout=stdout,
    )


def _record_leaf(state: _State, result: Any, kind: str) -> None:
    raw = result.get("outcome")
    key = "(missing)" if raw is None else raw if raw in OUTCOMES else f"(unknown: {raw[:40]})"
    if key not in ("Passed", "Failed", "NotExecuted"):
        state.raw_outcomes[key] = state.raw_outcomes.get(key, 0) + 1
    if kind not in KNOWN_RESULT_KINDS:
        state.unknown_kinds[kind] = state.unknown_kinds.get(kind, 0) + 1
    if raw == "PassedButRunAborted":
        state.passed_but_run_aborted += 1
    outcome = map_outcome(raw)
    bucket = "failed" if outcome.is_failure else "passed" if outcome is Outcome.PASSED else "skipped"
    state.counts[bucket] += 1
    if outcome.is_failure or state.keep_cases:
        _keep(state, result, _make_case(result))


def _keep(state: _State, result: Any, case: TestCase) -> None:
    test_id, execution_id = result.get("testId"), result.get("executionId")
    state.kept.append(_Pending(test_id, execution_id, case))
    state.needed_ids.update(i for i in (test_id, execution_id) if i)


def _end_result(state: _State, result: Any, kind: str, frame: list[int]) -> None:
    child_results, child_failures = frame
    if child_results == 0:
        _record_leaf(state, result, kind)
        failed = map_outcome(result.get("outcome")).is_failure
    else:
        failed = child_failures > 0
        case = _make_case(result)
        # A failing parent whose rows all passed still failed (its own ErrorInfo): never lose it.
        if case.outcome.is_failure and child_failures == 0:
            state.failing_parents += 1
            state.counts["failed"] += 1
            _keep(state, result, case)
            failed = True
    if state.open_results:
        parent = state.open_results[-1]
        parent[0] += 1
        parent[1] += int(failed)


def _end_definition(state: _State, definition: Any) -> None:
    """Remember the class of one TestDefinitions entry, keyed by test id and execution id."""
    class_name: str | None = None
    execution_id: str | None = None
    for sub in definition.iter():
        name = local_name(sub.tag)
        if name == "TestMethod" and class_name is None:
            raw = sub.get("className")
            class_name = sys.intern(raw.split(",", 1)[0].strip()) if raw else None
        elif name == "Execution" and execution_id is None:
            execution_id = sub.get("id")
    for key in (definition.get("id"), execution_id):
        # once every result is read, only the ids of kept results matter (flat memory)
        if key and (not state.results_done or key in state.needed_ids):
            state.classes.setdefault(key, class_name)


def _end_run_info(state: _State, info: Any) -> None:
    text_elem = _child(info, "Text")
    text = (text_of(text_elem) if text_elem is not None else text_of(info)).strip()
    if _ECHO_RE.search(text):
        state.echo_run_infos += 1
    elif len(state.run_infos) < MAX_RUN_INFOS:
        state.run_infos.append(_RunInfo(info.get("outcome") or "", text[:RUN_TEXT_LIMIT]))


def _walk(state: _State, reader: SanitizingReader) -> None:
    path: list[str] = []
    held = 0  # open elements whose subtree is read at their end: do not clear inside them
    for event, elem in iterparse(reader):
        if event == "start":
            name = local_name(elem.tag)
            path.append(name)
            depth = len(path)
            if depth == 1 and name != "TestRun":
                raise _NotTrx(name)
            if _is_result(path):
                state.open_results.append([0, 0])
                held += 1
            elif depth == 3 and path[1] == "TestDefinitions":
                held += 1
            elif depth == 2 and name == "ResultSummary":
                state.run_outcome = elem.get("outcome")
            elif depth == 3 and path[1] == "ResultSummary" and name == "Counters":
                state.counters_total = _int_or_none(elem.get("total"))
            elif _is_run_info(path) or _is_run_stdout(path):
                held += 1
            continue
        name = path[-1]
        depth = len(path)
        if _is_result(path):
            _end_result(state, elem, name, state.open_results.pop())
            held -= 1
            clear_element(elem)
        elif depth == 3 and path[1] == "TestDefinitions":
            _end_definition(state, elem)
            held -= 1
            clear_element(elem)
        elif _is_run_info(path):
            _end_run_info(state, elem)
            held -= 1
            clear_element(elem)
        elif _is_run_stdout(path):
            state.run_stdout = text_of(elem)[-RUN_TEXT_LIMIT:]
            held -= 1
            clear_element(elem)
        elif held == 0 and depth > 1:
            if depth == 2 and name == "Results":
                state.results_done = not state.keep_cases
            clear_element(elem)
        path.pop()


def _is_result(path: list[str]) -> bool:
    depth = len(path)
    if depth == 3:
        return path[1] == "Results"
    return depth > 3 and path[-2] == "InnerResults" and path[1] == "Results"


def _is_run_info(path: list[str]) -> bool:
    return len(path) == 4 and path[1] == "ResultSummary" and path[2] == "RunInfos" and path[3] == "RunInfo"


def _is_run_stdout(path: list[str]) -> bool:
    return len(path) == 4 and path[1] == "ResultSummary" and path[2] == "Output" and path[3] == "StdOut"


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


class _NotTrx(Exception):
    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.root = root


def _run_level(state: _State, notes: list[str]) -> None:
    """RunErrors for a run that failed on its own; notes for the rest."""
    failed_tests = state.counts["failed"]
    infos = [i for i in state.run_infos if not (failed_tests and _MTP_TEST_FAILURE_EXIT_RE.search(i.text))]
    errors = [i for i in infos if i.outcome == "Error"]
    for info in errors:
        state.run_errors.append(RunError(state.source, f"test run error: {info.text}"))
    run_failed = state.run_outcome is not None and state.run_outcome.strip() in _FAILING_RUN_OUTCOMES
    if run_failed and failed_tests == 0 and not errors:
        detail = "; ".join(i.text for i in infos) or _tail(state.run_stdout) or "no reason given in the file"
        state.run_errors.append(
            RunError(state.source, f"the test run outcome is {state.run_outcome} but no test failed: {detail}")
        )
    elif infos and not errors:
        notes.append("run info: " + "; ".join(f"{i.outcome}: {i.text[:200]}" for i in infos[:5]))
    if state.passed_but_run_aborted:
        state.run_errors.append(RunError(
            state.source, f"the test run was aborted ({state.passed_but_run_aborted} test(s) PassedButRunAborted)"
        ))


def _tail(text: str | None, lines: int = 20) -> str | None:
    if not text or not text.strip():
        return None
    return "\n".join(text.strip().splitlines()[-lines:])


def _notes(state: _State, reader: SanitizingReader) -> list[str]:
    notes: list[str] = []
    for raw, n in sorted(state.raw_outcomes.items()):
        if raw.startswith("(") or raw in _NOTED_OUTCOMES or raw in ("Inconclusive", "PassedButRunAborted"):
            mapped = "error" if raw.startswith("(") else map_outcome(raw).value
            notes.append(f"{n} result(s) with outcome {raw} counted as {mapped}")
    for kind, n in sorted(state.unknown_kinds.items()):
        notes.append(f"{n} result element(s) of unknown kind <{kind}> counted")
    if state.failing_parents:
        notes.append(f"{state.failing_parents} failing data-driven parent(s) with no failing row counted as failures")
    if state.counters_total is not None and state.counters_total != state.total:
        notes.append(f"ResultSummary/Counters says total={state.counters_total}; {state.total} leaf results counted")
    if state.echo_run_infos:
        notes.append(f"{state.echo_run_infos} per-test RunInfo line(s) ([FAIL]/[SKIP]) not repeated as run errors")
    if reader.repairs:
        notes.append(f"repaired {reader.repairs} illegal XML character(s) or character reference(s)")
    if reader.transcoded_from:
        notes.append(f"transcoded from {reader.transcoded_from}")
    _run_level(state, notes)
    return notes


def _resolve(state: _State) -> list[TestCase]:
    cases: list[TestCase] = []
    for pending in state.kept:
        class_name = state.classes.get(pending.test_id or "") or state.classes.get(pending.execution_id or "")
        case = pending.case
        if class_name is not None:
            case = TestCase(case.name, case.outcome, class_name, case.message, case.stack, case.file,
                            case.line, case.duration_s, case.stdout)
        cases.append(case)
    return cases


def _syntax_error(source: str, exc: etree.XMLSyntaxError) -> RunError:
    line = exc.lineno if exc.lineno else (exc.position[0] if exc.position else 0)
    problem = (exc.msg or str(exc)).strip()
    return RunError(source, f"truncated or malformed XML at line {line}: {problem}")


class TrxParser:
    name = "trx"
    description = "Visual Studio / VSTest / Microsoft.Testing.Platform TRX result files"
    root_names = frozenset({"TestRun"})

    def parse(self, stream: BinaryIO, source: str, keep_cases: bool = False) -> ParseResult:
        state = _State(source=source, keep_cases=keep_cases)
        reader = SanitizingReader(stream)
        try:
            _walk(state, reader)
        except _NotTrx as exc:
            state.run_errors.append(RunError(source, f"root element <{exc.root}> is not a TRX <TestRun>"))
        except etree.XMLSyntaxError as exc:
            state.run_errors.append(_syntax_error(source, exc))
        except (etree.LxmlError, LookupError, UnicodeError) as exc:  # e.g. an unknown declared encoding
            state.run_errors.append(RunError(source, f"unreadable XML: {exc}"))
        notes = _notes(state, reader)
        cases = _resolve(state)
        c = state.counts
        return ParseResult(
            format=self.name,
            failures=[case for case in cases if case.outcome.is_failure],
            cases=cases if keep_cases else None,
            counts=TestCounts(state.total, c["passed"], c["failed"], c["skipped"]),
            run_errors=state.run_errors,
            notes=notes,
        )


PARSER = TrxParser()
