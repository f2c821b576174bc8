"""xUnit.net XML parser: the shared corpus against EnricoMi's expected outputs, result mapping,
`errors/error` elements as RunErrors, hostile input."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ci_agent.parsers import parse_path, parse_stream
from ci_agent.parsers.xunit import PARSER
from ci_agent.report import Outcome, ParseResult, TestCase, TestCounts
from tests.parsers.xmlresults_oracles import (
    ENRICOMI,
    assert_counts_match_cases,
    enricomi_inputs,
    enricomi_results,
)

XUNIT = ENRICOMI / "xunit/mstest"
ALL_INPUTS = sorted((ENRICOMI / "xunit").rglob("*.xml"))


def _id(path: Path) -> str:
    return str(path.relative_to(ENRICOMI))


def _parse(path: Path) -> ParseResult:
    result = parse_path(path, keep_cases=True)
    assert result.format == "xunit"
    return result


def test_the_corpus_is_there() -> None:
    assert len(ALL_INPUTS) == 8


@pytest.mark.parametrize("path", ALL_INPUTS, ids=_id)
def test_every_input_parses_through_the_registry_without_raising(path: Path) -> None:
    result = _parse(path)
    assert_counts_match_cases(result)
    assert result.run_errors == []


_OUTCOME = {
    "success": Outcome.PASSED,
    "failure": Outcome.FAILED,
    "error": Outcome.ERROR,
    "skipped": Outcome.SKIPPED,
}
# testcase3.xml writes times with a decimal comma (time="0,014"): 14 ms. EnricoMi reads 14.0 s.
_DECIMAL_COMMA = {"testcase3.xml"}


@pytest.mark.parametrize("path", enricomi_inputs("xunit"), ids=_id)
def test_cases_match_enricomi_results(path: Path) -> None:
    expected = enricomi_results(path)["cases"]
    result = _parse(path)
    assert result.cases is not None
    assert len(result.cases) == len(expected)
    for ours, theirs in zip(result.cases, expected, strict=True):
        # EnricoMi names a test by its `method`; we keep xUnit's display name (theory rows differ).
        assert ours.classname == (theirs["class_name"] or None)
        assert ours.outcome is _OUTCOME[theirs["result"]]
        assert (ours.message or "").strip() == (theirs["message"] or "").strip()
        if path.name in _DECIMAL_COMMA:
            assert ours.duration_s == pytest.approx(theirs["time"] / 1000)
        else:
            assert ours.duration_s == theirs["time"]


def _case(result: ParseResult, name: str) -> TestCase:
    assert result.cases is not None
    (found,) = [c for c in result.cases if c.name == name]
    return found


def test_display_names_theory_rows_and_output() -> None:
    result = _parse(XUNIT / "pickles.xml")  # xUnit.net 1.9: <assembly> > <class> > <test>
    assert result.counts == TestCounts(total=4, passed=3, failed=1)
    rows = [c.name for c in result.cases or [] if "AddingSeveralNumbers" in c.name]
    assert len(rows) == 2 and all(name.endswith("exampleTags: System.String[])") for name in rows)
    (failure,) = result.failures
    assert failure.name == "Pickles.TestHarness.xUnit.AdditionFeature.FailToAddTwoNumbers"
    assert failure.message == "          System.InvalidOperationException : This is a fake failure message"
    assert failure.stack is not None and "Steps.ThenTheResultShouldBePass" in failure.stack.replace("\n", "")
    assert failure.stdout is not None and failure.stdout.lstrip().startswith(
        "Given I have entered 50 into the"
    )


def test_skip_reason_is_the_message() -> None:
    result = _parse(XUNIT / "jenkinsci/testcase1.xml")
    skipped = _case(result, "MyProject.Tests.SampleFact.SkippedTest")
    assert (skipped.outcome, skipped.message) == (Outcome.SKIPPED, "On Purpose")


def test_declared_totals_that_disagree_are_noted_not_trusted() -> None:
    # testcase2.xml: <assembly total="3" failed="1" skipped="1"> but holds one passing <test>.
    result = _parse(XUNIT / "jenkinsci/testcase2.xml")
    assert result.counts == TestCounts(total=1, passed=1)
    assert result.notes == ["the file declares 3 test(s); counted 1 test case(s)"]


def test_empty_type_and_method_attributes() -> None:
    result = _parse(XUNIT / "jenkinsci/testcase6.xml")
    (failure,) = result.failures
    assert (failure.name, failure.classname) == ("collection1\\test.xml", None)
    assert failure.message is not None and failure.message.startswith(
        "OK: TestProcess.Execution.ExitCode == 0"
    )


# --- errors/error, NotRun, unknown results: element shapes from https://xunit.net/docs/format-xml-v2 ---


def _doc(assembly_body: str) -> bytes:
    return (
        '<assemblies schema-version="3"><assembly name="A.dll" total="2" passed="1" failed="0" skipped="1" '
        f'errors="1">{assembly_body}</assembly></assemblies>'
    ).encode()


def test_fixture_cleanup_errors_are_run_errors_not_tests() -> None:
    stack = "\n".join(f"   at Ns.Fixture.Dispose{i}() in /src/Fixture.cs:line {i}" for i in range(15))
    body = (
        '<errors><error type="test-class-cleanup" name="Ns.Tests">'
        '<failure exception-type="System.InvalidOperationException">'
        f"<message>System.InvalidOperationException : pod stuck</message><stack-trace>{stack}</stack-trace>"
        "</failure></error></errors>"
        '<collection name="C"><test name="Ns.Tests.Ok" type="Ns.Tests" method="Ok" time="0.1" result="Pass"/>'
        '<test name="Ns.Tests.Later" type="Ns.Tests" method="Later" time="0" result="NotRun"/></collection>'
    )
    result = PARSER.parse(io.BytesIO(_doc(body)), "x.xml")
    assert result.counts == TestCounts(total=2, passed=1, skipped=1)
    assert result.failures == []
    (error,) = result.run_errors
    lines = error.message.splitlines()
    assert (
        lines[0] == "xUnit test-class-cleanup error in Ns.Tests: System.InvalidOperationException : pod stuck"
    )
    assert lines[1] == "   at Ns.Fixture.Dispose0() in /src/Fixture.cs:line 0"
    assert len(lines) == 12 and lines[-1] == "... (5 more stack lines)"


def test_unknown_or_missing_results_are_errors_never_passes() -> None:
    body = (
        '<collection name="C"><test name="Ns.T.Odd" type="Ns.T" method="Odd" result="Exploded"/>'
        '<test name="Ns.T.None" type="Ns.T" method="None"/></collection>'
    )
    result = PARSER.parse(io.BytesIO(_doc(body)), "x.xml")
    assert [(f.name, f.outcome, f.message) for f in result.failures] == [
        ("Ns.T.Odd", Outcome.ERROR, "unrecognised xUnit result 'Exploded'"),
        ("Ns.T.None", Outcome.ERROR, "the test has no result"),
    ]


# --- hostile and broken input ------------------------------------------------------------------


def test_truncated_file_keeps_what_was_read() -> None:
    data = (XUNIT / "jenkinsci/testcase5.xml").read_bytes()
    cut = data.index(b'<test name="Check if the files were signed."')
    result = parse_stream(io.BytesIO(data[:cut]), "cut.xml", keep_cases=True)
    assert result.format == "xunit"
    assert result.counts == TestCounts(total=3, passed=3)
    (error,) = result.run_errors
    assert error.message.startswith("truncated or malformed XML at line ")


def test_a_wrong_root_is_refused_when_forced() -> None:
    result = parse_path(ENRICOMI / "junit-xml/testsuite-root.xml", forced="xunit")
    assert [e.message for e in result.run_errors] == [
        "root element <testsuite> is not xUnit XML (expected <assemblies> or <assembly>)"
    ]
    assert result.counts == TestCounts()
