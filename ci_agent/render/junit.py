"""`--output junit`: every test case of every input as one JUnit XML file (GitLab's test widget
reads JUnit, not TRX/NUnit/xUnit).

One `<testsuite>` per (input, class). Outcomes: failed/timeout/aborted -> `<failure type=...>`,
error -> `<error>`, skipped/inconclusive -> `<skipped>`. Inputs that only reported failures (a
console log) contribute those failures. The result is always well-formed XML: characters XML
1.0 forbids (C0 controls, lone surrogates, U+FFFE/FFFF) are removed from every string.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lxml import etree

from ci_agent.report import Outcome, ParseResult, TestCase

_ILLEGAL_XML_RE = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FAILURE_OUTCOMES = {Outcome.FAILED, Outcome.TIMEOUT, Outcome.ABORTED}
_SKIP_OUTCOMES = {Outcome.SKIPPED, Outcome.INCONCLUSIVE}


def xml_text(text: str) -> str:
    return _ILLEGAL_XML_RE.sub("", text)


def _cases(result: ParseResult) -> list[TestCase]:
    return list(result.cases) if result.cases is not None else list(result.failures)


def _suite_key(case: TestCase) -> str:
    if case.classname:
        return case.classname
    name = case.name.split("(", 1)[0]
    return name.rsplit(".", 1)[0] if "." in name else "(no class)"


def _tally(cases: Sequence[TestCase]) -> dict[str, str]:
    failures = sum(1 for c in cases if c.outcome in _FAILURE_OUTCOMES)
    errors = sum(1 for c in cases if c.outcome is Outcome.ERROR)
    skipped = sum(1 for c in cases if c.outcome in _SKIP_OUTCOMES)
    time = sum(c.duration_s or 0.0 for c in cases)
    return {"tests": str(len(cases)), "failures": str(failures), "errors": str(errors),
            "skipped": str(skipped), "time": f"{time:.3f}"}


def _set(elem: etree._Element, name: str, value: str | None) -> None:
    if value is not None:
        elem.set(name, xml_text(value))


def _case_element(parent: etree._Element, case: TestCase) -> None:
    elem = etree.SubElement(parent, "testcase")
    _set(elem, "name", case.name)
    _set(elem, "classname", _suite_key(case))
    if case.duration_s is not None:
        elem.set("time", f"{case.duration_s:.3f}")
    _set(elem, "file", case.file)
    if case.line is not None:
        elem.set("line", str(case.line))
    body = "\n".join(part for part in (case.message, case.stack) if part)
    first = (case.message or "").strip().split("\n", 1)[0]
    if case.outcome in _FAILURE_OUTCOMES or case.outcome is Outcome.ERROR:
        tag = "error" if case.outcome is Outcome.ERROR else "failure"
        result = etree.SubElement(elem, tag)
        _set(result, "message", first)
        result.set("type", case.outcome.value)
        if body:
            result.text = xml_text(body)
    elif case.outcome in _SKIP_OUTCOMES:
        skipped = etree.SubElement(elem, "skipped")
        _set(skipped, "message", first or (None if case.outcome is Outcome.SKIPPED else case.outcome.value))
    if case.stdout:
        out = etree.SubElement(elem, "system-out")
        out.text = xml_text(case.stdout)


def render_junit(inputs: Sequence[tuple[str, ParseResult]]) -> str:
    """One JUnit document for every case of every input (source path, ParseResult with cases)."""
    root = etree.Element("testsuites", name="ci-agent")
    all_cases: list[TestCase] = []
    for source, result in inputs:
        suites: dict[str, list[TestCase]] = {}
        for case in _cases(result):
            suites.setdefault(_suite_key(case), []).append(case)
        for suite_name, cases in suites.items():
            suite = etree.SubElement(root, "testsuite")
            _set(suite, "name", suite_name)
            for attr, value in _tally(cases).items():
                suite.set(attr, value)
            _set(suite, "file", source)
            for case in cases:
                _case_element(suite, case)
            all_cases.extend(cases)
    for attr, value in _tally(all_cases).items():
        root.set(attr, value)
    data: bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return data.decode("utf-8")
