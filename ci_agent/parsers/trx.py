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
from dataclasses import replace
from typing import BinaryIO

from lxml import etree

from ci_agent.parsers.trx_fields import map_outcome
from ci_agent.parsers.trx_walk import NotTrx, WalkState, walk
from ci_agent.parsers.xmlsafe import SanitizingReader, repair_notes
from ci_agent.report import ParseResult, RunError, TestCase, TestCounts

# Outcomes worth a note: mapped by a decision of ours rather than an obvious equivalent.
_NOTED_OUTCOMES = frozenset({"Warning", "Completed", "InProgress", "Pending", "NotRunnable", "Disconnected",
                             "Inconclusive", "PassedButRunAborted"})
_FAILING_RUN_OUTCOMES = frozenset({"Failed", "Error", "Aborted", "Timeout", "Disconnected"})
# MTP exit code 2 means "some test failed": it repeats test failures we already report.
_MTP_TEST_FAILURE_EXIT_RE = re.compile(r"Exit code indicates failure: '2'")
_TROUBLE_RE = re.compile(
    r"crash|abort|exit code|exited|error|exception|fatal|timed? ?out|not found|cannot|could not|fail", re.I
)
_LXML_POSITION_RE = re.compile(r",? line \d+, column \d+\s*$")


def _run_level(state: WalkState, notes: list[str]) -> None:
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


def _notes(state: WalkState, reader: SanitizingReader) -> list[str]:
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


def _resolve(state: WalkState) -> list[TestCase]:
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
        state = WalkState(source=source, keep_cases=keep_cases)
        reader = SanitizingReader(stream)
        try:
            walk(state, reader)
        except NotTrx as exc:
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
