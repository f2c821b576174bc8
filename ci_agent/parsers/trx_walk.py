"""The streaming walk over a TRX file: what each element is, and what its end records.

Decided once at each element's start from its parent's kind alone (no element order assumed);
finished elements are freed as the walk goes, so memory stays flat on a 100 MB file. What the
recorded state says about the run (notes, run errors) is decided in trx.py.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any

from ci_agent.parsers.trx_fields import KNOWN_RESULT_KINDS, OUTCOMES, child, make_case, map_outcome
from ci_agent.parsers.xmlsafe import SanitizingReader, clear_element, damage, iterparse, local_name, text_of
from ci_agent.report import Outcome, RunError, TestCase

RUN_TEXT_LIMIT = 4096
MAX_RUN_INFOS = 20

# xUnit under VSTest echoes every failed/skipped test as a RunInfo ("... [FAIL]"): counted and
# compared with the results, never made run errors.
_ECHO_RE = re.compile(r"\[(?:FAIL|SKIP)\]\s*$")


@dataclass(slots=True)
class _Pending:
    """A leaf result waiting for its class name (definitions may come after results)."""

    test_id: str | None
    execution_id: str | None
    case: TestCase


@dataclass(slots=True)
class RunInfo:
    outcome: str
    text: str


@dataclass(slots=True)
class WalkState:
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
    run_infos: list[RunInfo] = field(default_factory=list)
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


def _record_leaf(state: WalkState, result: Any, kind: str) -> None:
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


def _keep(state: WalkState, result: Any, case: TestCase) -> None:
    test_id, execution_id = result.get("testId"), result.get("executionId")
    state.kept.append(_Pending(test_id, execution_id, case))
    state.needed_ids.update(i for i in (test_id, execution_id) if i)


def _end_result(state: WalkState, result: Any, kind: str, frame: list[int]) -> None:
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


def _end_definition(state: WalkState, definition: Any) -> None:
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


def _end_run_info(state: WalkState, info: Any) -> None:
    text_elem = child(info, "Text")
    text = (text_of(text_elem) if text_elem is not None else text_of(info)).strip()
    if _ECHO_RE.search(text):
        state.echo_run_infos += 1
        if text.endswith("[FAIL]"):
            state.fail_echo_count += 1
            if len(state.fail_echoes) < 3:
                state.fail_echoes.append(text[:300])
    elif len(state.run_infos) < MAX_RUN_INFOS:
        state.run_infos.append(RunInfo(info.get("outcome") or "", text[:RUN_TEXT_LIMIT]))


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


def walk(state: WalkState, reader: SanitizingReader) -> None:
    parser = iterparse(reader)
    _walk_events(state, parser)
    damaged = damage(parser)
    if damaged:
        state.unreadable = True
        state.run_errors.append(RunError(state.source, damaged))


def _walk_events(state: WalkState, parser: Any) -> None:
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
                    raise NotTrx(name)
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


class NotTrx(Exception):
    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.root = root
