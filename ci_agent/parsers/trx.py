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
  (`TestMethod/@className` cut at the first `,`). Reports qualify with
  `trx_fields.qualified_name()` (`Class.Method` unless testName already starts with the class).
- The run itself can fail with no failing test (host crash, missing framework): that is a
  RunError. xUnit's per-test `RunInfo` echoes (`... [FAIL]`/`[SKIP]`) are not.
- `ResultSummary/Counters` are not trusted (VSTest double-counts data-driven parents); a
  mismatch with what we counted is only noted.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

from lxml import etree

from ci_agent.parsers.trx_fields import KNOWN_RESULT_KINDS, OUTCOMES, child, make_case, map_outcome
from ci_agent.parsers.xmlsafe import (
    SanitizingReader,
    clear_element,
    damage,
    iterparse,
    local_name,
    repair_notes,
    text_of,
)
from ci_agent.report import Outcome, ParseResult, RunError, TestCase, TestCounts

RUN_TEXT_LIMIT = 4096
MAX_RUN_INFOS = 20

# Outcomes worth a note: mapped by a decision of ours rather than an obvious equivalent.
_NOTED_OUTCOMES = frozenset({"Warning", "Completed", "InProgress", "Pending", "NotRunnable", "Disconnected",
                             "Inconclusive", "PassedButRunAborted"})
_FAILING_RUN_OUTCOMES = frozenset({"Failed", "Error", "Aborted", "Timeout", "Disconnected"})
# xUnit under VSTest echoes every failed/skipped test as a RunInfo; MTP exit code 2 means
# "some test failed". Both repeat test failures we already report.
_ECHO_RE = re.compile(r"\[(?:FAIL|SKIP)\]\s*$")
_MTP_TEST_FAILURE_EXIT_RE = re.compile(r"Exit code indicates failure: '2'")
_TROUBLE_RE = re.compile(
    r"crash|abort|exit code|exited|error|exception|fatal|timed? ?out|not found|cannot|could not|fail", re.I
)
_LXML_POSITION_RE = re.compile(r",? line \d+, column \d+\s*$")


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
    fail_echoes: list[str] = field(default_factory=list)  # xUnit "[FAIL]" RunInfo texts (first few)
    fail_echo_count: int = 0
    run_stdout: str | None = None
    counters_total: int | None = None
    passed_but_run_aborted: int = 0
    failing_parents: int = 0
    unreadable: bool = False  # the XML broke off: counts are partial
    run_errors: list[RunError] = field(default_factory=list)
    # one frame per open result element: how many child results it has seen so far
    open_results: list[list[int]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


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
        _keep(state, result, make_case(result))


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
        raw = result.get("outcome")
        # A parent that says it failed while all its rows passed (its own setup ErrorInfo) still
        # failed: never lose it. A parent without an outcome defers to its rows.
        if raw is not None and map_outcome(raw).is_failure and child_failures == 0:
            state.failing_parents += 1
            state.counts["failed"] += 1
            _keep(state, result, make_case(result))
            failed = True
    if state.open_results:
        parent = state.open_results[-1]
        parent[0] += 1
        parent[1] += int(failed)


def _end_definition(state: _State, definition: Any) -> None:
    """Remember the class of one TestDefinitions entry, keyed by test id and execution id."""
    if state.results_done and not state.needed_ids:
        return  # every result is read and none is kept: no class name is needed
    class_name: str | None = None
    execution_id: str | None = None
    for sub in definition:
        tag = sub.tag
        if not isinstance(tag, str):
            continue
        if tag.endswith("TestMethod") and local_name(tag) == "TestMethod":
            raw = sub.get("className")
            class_name = sys.intern(raw.split(",", 1)[0].strip()) if raw else None
        elif tag.endswith("Execution") and local_name(tag) == "Execution":
            execution_id = sub.get("id")
    for key in (definition.get("id"), execution_id):
        # once every result is read, only the ids of kept results matter (flat memory)
        if key and (not state.results_done or key in state.needed_ids):
            state.classes.setdefault(key, class_name)


def _end_run_info(state: _State, info: Any) -> None:
    text_elem = child(info, "Text")
    text = (text_of(text_elem) if text_elem is not None else text_of(info)).strip()
    if _ECHO_RE.search(text):
        state.echo_run_infos += 1
        if text.endswith("[FAIL]"):
            state.fail_echo_count += 1
            if len(state.fail_echoes) < 3:
                state.fail_echoes.append(text[:300])
    elif len(state.run_infos) < MAX_RUN_INFOS:
        state.run_infos.append(_RunInfo(info.get("outcome") or "", text[:RUN_TEXT_LIMIT]))


# What an open element is, decided once at its start event from its parent's kind alone (no
# element order assumed). Elements whose subtree holds nothing to classify are "opaque": events
# inside them cost one comparison, which is what keeps a 100 MB file under two seconds.
(_OTHER, _RUN, _SECTION, _RESULTS, _RESULT, _INNER, _DEFINITIONS, _DEFINITION,
 _SUMMARY, _RUN_INFOS, _RUN_INFO, _SUMMARY_OUTPUT, _RUN_STDOUT) = range(13)
_SECTIONS = {"Results": _RESULTS, "TestDefinitions": _DEFINITIONS, "ResultSummary": _SUMMARY}
_OPAQUE = frozenset({_OTHER, _DEFINITION, _RUN_INFO, _RUN_STDOUT})


def _classify(parent: int, name: str) -> int:
    if parent in (_RESULTS, _INNER):
        return _RESULT
    if parent == _RESULT:
        return _INNER if name == "InnerResults" else _OTHER
    if parent == _RUN:
        return _SECTIONS.get(name, _SECTION)
    if parent == _DEFINITIONS:
        return _DEFINITION
    if parent == _SUMMARY:
        return _RUN_INFOS if name == "RunInfos" else _SUMMARY_OUTPUT if name == "Output" else _OTHER
    if parent == _RUN_INFOS and name == "RunInfo":
        return _RUN_INFO
    if parent == _SUMMARY_OUTPUT and name == "StdOut":
        return _RUN_STDOUT
    return _OTHER


def _free(elem: Any, freed: int) -> int:
    """Free a finished element now; unlink finished siblings in batches (unlinking each one
    on its own is a large share of the time on a 100 MB file). Returns the new count."""
    elem.clear(keep_tail=False)
    freed += 1
    if freed % 256 == 0:
        clear_element(elem)
    return freed


def _walk(state: _State, reader: SanitizingReader) -> None:
    parser = iterparse(reader)
    _walk_events(state, parser)
    damaged = damage(parser)
    if damaged:
        state.unreadable = True
        state.run_errors.append(RunError(state.source, damaged))


def _walk_events(state: _State, parser: Any) -> None:
    kinds: list[int] = []  # kinds of the open, non-opaque-interior elements
    names: dict[str, str] = {}  # tag -> local name (a handful of distinct tags)
    depth = 0
    opaque_at = 0  # depth of the open opaque element, 0 when none
    small_ends = 0
    for event, elem in parser:
        if event == "start":
            depth += 1
            if opaque_at:
                continue
            tag = elem.tag
            name = names.get(tag) if isinstance(tag, str) else ""
            if name is None:
                name = names[tag] = local_name(tag)
            if not kinds:
                if name != "TestRun":
                    raise _NotTrx(name)
                kinds.append(_RUN)
                continue
            kind = _classify(kinds[-1], name)
            kinds.append(kind)
            if kind in _OPAQUE:
                opaque_at = depth
            if kind == _RESULT:
                state.open_results.append([0, 0])
            elif kind == _SUMMARY:
                state.run_outcome = elem.get("outcome")
            elif kind == _OTHER and name == "Counters" and kinds[-2] == _SUMMARY:
                state.counters_total = _int_or_none(elem.get("total"))
            continue
        depth -= 1
        if opaque_at:
            if depth >= opaque_at:
                continue
            opaque_at = 0
        kind = kinds.pop()
        if kind == _RESULT:
            _end_result(state, elem, local_name(elem.tag), state.open_results.pop())
            small_ends = _free(elem, small_ends)
        elif kind == _DEFINITION:
            _end_definition(state, elem)
            small_ends = _free(elem, small_ends)
        elif kind == _RUN_INFO:
            _end_run_info(state, elem)
            clear_element(elem)
        elif kind == _RUN_STDOUT:
            state.run_stdout = text_of(elem)[-RUN_TEXT_LIMIT:]
            clear_element(elem)
        elif kind == _OTHER and depth == 2:  # section entries: TestEntry, TestList...
            small_ends = _free(elem, small_ends)
        elif kind in (_SECTION, _DEFINITIONS, _SUMMARY, _RESULTS):
            if kind == _RESULTS:
                state.results_done = not state.keep_cases
            clear_element(elem)


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
    run_failed = run_failed and not state.unreadable  # half a file cannot show "no test failed"
    if run_failed and failed_tests == 0 and not errors:
        detail = "; ".join(i.text for i in infos) or _trouble_tail(state.run_stdout)
        if detail:
            message = f"the test run outcome is {state.run_outcome} but no test failed: {detail}"
            state.run_errors.append(RunError(state.source, message))
        else:
            # VSTest also writes outcome="Failed" for green runs (gh-749, trx2junit samples): with no
            # run info and nothing wrong in the run output, that alone is not worth a fix attempt.
            notes.append(f"ResultSummary outcome is {state.run_outcome} but no test failed and the file "
                         "gives no reason; not reported as a run error")
    elif infos and not errors:
        notes.append("run info: " + "; ".join(f"{i.outcome}: {i.text[:200]}" for i in infos[:5]))
    if state.fail_echo_count > failed_tests and not state.unreadable:
        # xUnit echoed more failures than the file has results for: results went missing.
        shown = "; ".join(state.fail_echoes)
        message = (f"xUnit reported {state.fail_echo_count} failed test(s) but the file holds "
                   f"{failed_tests} failing result(s); missing results (first echoes: {shown})")
        state.run_errors.append(RunError(state.source, message))
    if state.passed_but_run_aborted:
        aborted = state.passed_but_run_aborted
        message = f"the test run was aborted ({aborted} test(s) with outcome PassedButRunAborted)"
        state.run_errors.append(RunError(state.source, message))


def _trouble_tail(text: str | None, lines: int = 20) -> str | None:
    """The end of the run's console output, when it says something went wrong."""
    if not text or not text.strip():
        return None
    tail = "\n".join(text.strip().splitlines()[-lines:])
    return tail if _TROUBLE_RE.search(tail) else None


def _notes(state: _State, reader: SanitizingReader) -> list[str]:
    notes: list[str] = []
    for raw, n in sorted(state.raw_outcomes.items()):
        if raw.startswith("(") or raw in _NOTED_OUTCOMES:
            mapped = "error" if raw.startswith("(") else map_outcome(raw).value
            notes.append(f"{n} result(s) with outcome {raw} counted as {mapped}")
    for kind, n in sorted(state.unknown_kinds.items()):
        notes.append(f"{n} result element(s) of unknown kind <{kind}> counted")
    if state.failing_parents:
        notes.append(f"{state.failing_parents} failing parent(s) with no failing row counted as failures")
    if state.counters_total is not None and state.counters_total != state.total:
        notes.append(f"ResultSummary/Counters says total={state.counters_total}; counted {state.total}")
    if state.echo_run_infos:
        notes.append(f"{state.echo_run_infos} per-test RunInfo line(s) ([FAIL]/[SKIP]) not made run errors")
    if reader.repairs:
        notes.append(f"repaired {reader.repairs} illegal XML character(s) or character reference(s)")
    if reader.transcoded_from:
        notes.append(f"transcoded from {reader.transcoded_from}")
    notes.extend(repair_notes(reader))
    _run_level(state, notes)
    return notes


def _resolve(state: _State) -> list[TestCase]:
    cases: list[TestCase] = []
    for pending in state.kept:
        class_name = state.classes.get(pending.test_id or "") or state.classes.get(pending.execution_id or "")
        cases.append(pending.case if class_name is None else replace(pending.case, classname=class_name))
    return cases


def _syntax_error(source: str, exc: etree.XMLSyntaxError) -> RunError:
    line = exc.lineno if exc.lineno else (exc.position[0] if exc.position else 0)
    problem = _LXML_POSITION_RE.sub("", (exc.msg or str(exc)).strip())
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
            state.unreadable = True
            state.run_errors.append(_syntax_error(source, exc))
        except (etree.LxmlError, UnicodeError) as exc:  # e.g. an undecodable byte sequence
            state.unreadable = True
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
