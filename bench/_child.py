"""One benchmark case, run in a fresh interpreter by bench/run.py: `python bench/_child.py TOOL PATH`.

Prints one JSON object: `work_s` (the parse/distill itself, imports excluded) and what the tool
found, so the runner can check that every tool read the same file. Wall time and peak RSS are
measured by the parent (os.wait4 on this process), so they include interpreter start and imports.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from typing import Any

Result = dict[str, Any]


def ours_api(path: str) -> Result:
    """Our Python API: parse_path, then distill + render the llm text when those modules exist."""
    from ci_agent.parsers import parse_path

    t0 = time.perf_counter()
    parsed = parse_path(path)
    out: Result = {
        "format": parsed.format,
        "tests": parsed.counts.total if parsed.counts else None,
        "failed": parsed.counts.failed if parsed.counts else None,
        "failures_kept": len(parsed.failures),
        "printed_diagnostics": parsed.printed_diagnostics,
        "unique_diagnostics": len({d.key() for d in parsed.diagnostics}),
        "run_errors": len(parsed.run_errors),
    }
    llm = _distill_and_render(path, parsed)
    if llm is not None:
        out["llm_bytes"] = len(llm.encode("utf-8"))
    out["work_s"] = time.perf_counter() - t0
    return out


def _distill_and_render(path: str, parsed: Any) -> str | None:
    """distill.py + render, written in parallel with this harness; None while they do not exist."""
    import os

    try:
        from ci_agent.distill import Input, distill, resolve_root
        from ci_agent.render.text import render_llm
        from ci_agent.report import SourceInfo
    except ImportError:
        return None
    inputs = [Input(SourceInfo(path, parsed.format, os.path.getsize(path)), parsed)]
    report = distill(inputs, resolve_root(inputs, None, None))
    return render_llm(report)


def lxml_parse(path: str) -> Result:
    """The naive baseline: the whole tree in memory (EnricoMi's first step, before its XSLT)."""
    from lxml import etree

    t0 = time.perf_counter()
    root = etree.parse(path, etree.XMLParser(huge_tree=True)).getroot()
    tests = failed = 0
    for el in root.iter():
        name = etree.QName(el).localname if isinstance(el.tag, str) else ""
        if name in ("UnitTestResult", "testcase"):
            tests += 1
            if el.get("outcome") in ("Failed", "Error", "Timeout", "Aborted") or (
                name == "testcase" and any(
                    isinstance(c.tag, str) and c.tag in ("failure", "error") for c in el)):
                failed += 1
    return {"tests": tests, "failed": failed, "work_s": time.perf_counter() - t0}


# Elements freed as soon as they end: TRX rows, JUnit cases and (JUnit) whole suites.
_LEAVES = frozenset({"UnitTestResult", "UnitTest", "TestEntry", "testcase", "testsuite"})


def lxml_iterparse_floor(path: str) -> Result:
    """A floor for any streaming Python reader: lxml iterparse, free each leaf, no other work."""
    from lxml import etree

    t0 = time.perf_counter()
    tests = 0
    for _, el in etree.iterparse(path, events=("end",), huge_tree=True):
        tag = el.tag
        if isinstance(tag, str) and tag.rsplit("}", 1)[-1] in _LEAVES:
            tests += tag.endswith(("UnitTestResult", "testcase"))
            el.clear(keep_tail=False)
            parent = el.getparent()
            while parent is not None and el.getprevious() is not None:
                del parent[0]
    return {"tests": tests, "work_s": time.perf_counter() - t0}


def junitparser_case(path: str) -> Result:
    from junitparser import JUnitXml, TestSuite

    t0 = time.perf_counter()
    xml = JUnitXml.fromfile(path)
    tests = failed = 0
    for suite in xml:
        if not isinstance(suite, TestSuite):
            continue
        for case in suite:
            tests += 1
            failed += bool(case.is_failure or case.is_error)
    return {"tests": tests, "failed": failed, "work_s": time.perf_counter() - t0}


def test_results_parser_case(path: str) -> Result:
    """Codecov's Rust parser. Its only entry point is parse_junit_xml(bytes): JUnit only."""
    import test_results_parser as trp  # type: ignore[import-untyped]

    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        data = fh.read()
    info = trp.parse_junit_xml(data)
    tests = len(info.testruns)
    failing = (trp.Outcome.Failure, trp.Outcome.Error)
    failed = sum(1 for r in info.testruns if r.outcome in failing)
    return {"tests": tests, "failed": failed, "work_s": time.perf_counter() - t0}


# `grep -c`-style: one regex per line for an MSBuild `error|warning CODE:` header.
_NAIVE_DIAG = re.compile(r"\b(?:error|warning) [A-Z]+[0-9]+:")


def line_scan(path: str) -> Result:
    t0 = time.perf_counter()
    printed = 0
    unique: set[str] = set()
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if _NAIVE_DIAG.search(line):
                printed += 1
                unique.add(line)
    return {"printed_diagnostics": printed, "unique_lines": len(unique), "work_s": time.perf_counter() - t0}


def noop(path: str) -> Result:
    """Interpreter + lxml import only: the floor under every Python row."""
    from lxml import etree  # noqa: F401

    return {"work_s": 0.0}


TOOLS: dict[str, Callable[[str], Result]] = {
    "ours-api": ours_api,
    "lxml-parse": lxml_parse,
    "lxml-iterparse-floor": lxml_iterparse_floor,
    "junitparser": junitparser_case,
    "test-results-parser": test_results_parser_case,
    "line-scan": line_scan,
    "noop": noop,
}


if __name__ == "__main__":
    tool, target = sys.argv[1], sys.argv[2]
    print(json.dumps(TOOLS[tool](target)))
