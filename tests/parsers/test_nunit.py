"""NUnit 2 / NUnit 3 XML parser: the shared corpus against EnricoMi's and dorny's expected outputs,
every result/label value mapped explicitly, suite-level failures, hostile input."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ci_agent.parsers import parse_path, parse_stream
from ci_agent.parsers.nunit import PARSER
from ci_agent.report import Outcome, ParseResult, TestCase, TestCounts
from tests.parsers.xmlresults_oracles import (
    DORNY,
    ENRICOMI,
    assert_counts_match_cases,
    dorny_snapshots,
    enricomi_inputs,
    enricomi_results,
)

JENKINS = ENRICOMI / "nunit/nunit3/jenkins"
DORNY_NUNIT = [DORNY / "fixtures/dotnet-nunit.xml", DORNY / "fixtures/external/nunit-sample.xml"]
ALL_INPUTS = [*sorted((ENRICOMI / "nunit").rglob("*.xml")), *DORNY_NUNIT]


def _id(path: Path) -> str:
    return str(path.relative_to(path.parents[1]))


def _parse(path: Path) -> ParseResult:
    result = parse_path(path, keep_cases=True)
    assert result.format == "nunit"
    return result


def _case(result: ParseResult, name: str) -> TestCase:
    assert result.cases is not None
    (found,) = [c for c in result.cases if c.name == name]
    return found


def test_the_corpus_is_there() -> None:
    assert len(ALL_INPUTS) == 26


@pytest.mark.parametrize("path", ALL_INPUTS, ids=_id)
def test_every_input_parses_through_the_registry_without_raising(path: Path) -> None:
    assert_counts_match_cases(_parse(path), inconclusive=True)


# --- EnricoMi .results ---------------------------------------------------------------------

_CATEGORY = {"success": "passed", "failure": "failing", "error": "failing", "skipped": "skipped"}
# Where we differ from EnricoMi on purpose: (file, test name) -> our category, with the reason.
_DELIBERATE = {
    # NUnit 2 NotRunnable (not public, no arguments, no usable constructor) is a broken test,
    # not a skip: it must fail the run (EnricoMi: skipped).
    ("NUnit-correct.xml", "NUnit.Tests.Assemblies.MockTestFixture.MockTest5"): "failing",
    ("NUnit-correct.xml", "NUnit.Tests.Assemblies.MockTestFixture.NotRunnableTest"): "failing",
    ("NUnit-correct.xml", "NUnit.Tests.BadFixture.SomeTest"): "failing",
    # Inconclusive is its own outcome for us (EnricoMi: skipped).
    ("NUnit-correct.xml", "NUnit.Tests.Assemblies.MockTestFixture.InconclusiveTest"): "inconclusive",
    ("NUnit-issue33493.xml", "AddTwoNumbers"): "inconclusive",
    # success="Turue" is not a value NUnit writes: unknown never becomes a pass (EnricoMi: success).
    ("NUnit-multinamespace.xml", "UnitTests.MainClassTest.TestFailure"): "failing",
}


def _category(case: TestCase) -> str:
    if case.outcome.is_failure:
        return "failing"
    return case.outcome.value


def _match(ours: list[TestCase], theirs: dict[str, Any]) -> TestCase:
    """EnricoMi names NUnit 3 cases by `name`, we by `fullname`; the time tells rows apart."""
    for i, case in enumerate(ours):
        if case.name.endswith(theirs["test_name"]) and case.duration_s == theirs["time"]:
            return ours.pop(i)
    raise AssertionError(f"no case for {theirs['test_name']!r}")


@pytest.mark.parametrize("path", enricomi_inputs("nunit"), ids=_id)
def test_cases_match_enricomi_results(path: Path) -> None:
    expected = enricomi_results(path)["cases"]
    result = _parse(path)
    assert result.cases is not None
    assert len(result.cases) == len(expected)
    remaining = list(result.cases)
    for theirs in expected:
        ours = _match(remaining, theirs)
        category = _DELIBERATE.get((path.name, theirs["test_name"]), _CATEGORY[theirs["result"]])
        assert _category(ours) == category, theirs["test_name"]
        if (
            theirs["message"] is not None
            and "sec1752" not in path.name
            and category == _CATEGORY[theirs["result"]]
        ):
            assert ours.message == theirs["message"].rstrip("\n")  # we drop CDATA's trailing newline
    assert remaining == []


def test_counts_and_failing_names_match_the_dorny_snapshot() -> None:
    expected = dorny_snapshots()["fixtures/dotnet-nunit.xml"]
    result = _parse(DORNY / "fixtures/dotnet-nunit.xml")
    assert result.cases is not None
    ours = Counter("failed" if c.outcome.is_failure else c.outcome.value for c in result.cases)
    assert ours == Counter(
        {"success": "passed", "failed": "failed", "skipped": "skipped"}[c.result] for c in expected
    )
    failing = sorted(c.name for c in expected if c.result == "failed")
    assert sorted(f.name.rsplit(".", 1)[-1] for f in result.failures) == failing


# --- outcome mapping, NUnit 3 ------------------------------------------------------------------


def test_nunit3_labels_refine_failed_and_skipped() -> None:
    result = _parse(DORNY / "fixtures/dotnet-nunit.xml")
    calc = "DotnetTests.XUnitTests.CalculatorTests."
    error = _case(result, calc + "Exception_In_TargetTest")  # result="Failed" label="Error"
    assert error.outcome is Outcome.ERROR
    assert error.message == "System.DivideByZeroException : Attempted to divide by zero."
    assert error.stack is not None and error.stack.startswith(
        "   at DotnetTests.Unit.Calculator.Div(Int32 a, Int32 b)"
    )
    # label="Test exceeded Timeout value 1ms."
    assert _case(result, calc + "Timeout_Test").outcome is Outcome.TIMEOUT
    skipped = _case(result, calc + "Skipped_Test")  # result="Skipped" label="Ignored"
    assert (skipped.outcome, skipped.message) == (Outcome.SKIPPED, "Skipped")
    plain = _case(result, calc + "Failing_Test")
    assert plain.outcome is Outcome.FAILED and plain.classname == "DotnetTests.XUnitTests.CalculatorTests"


def test_not_runnable_cases_and_fixtures_are_failures_inconclusive_is_neither() -> None:
    result = _parse(DORNY / "fixtures/external/nunit-sample.xml")
    mock = "NUnit.Tests.Assemblies.MockTestFixture."
    not_public = _case(result, mock + "MockTest5")  # result="Skipped" label="Invalid"
    assert (not_public.outcome, not_public.message) == (Outcome.ERROR, "Method is not public")
    assert _case(result, mock + "InconclusiveTest").outcome is Outcome.INCONCLUSIVE
    assert result.counts == TestCounts(total=18, passed=12, failed=4, skipped=1)  # + 1 inconclusive
    # BadFixture: a suite NUnit could not build, with no test case under it.
    assert [e.message for e in result.run_errors] == [
        "suite NUnit.Tests.BadFixture failed with no failing test under it: No suitable constructor was found"
    ]


def test_one_time_setup_failures_count_every_child() -> None:
    # Fixtures whose OneTimeSetUp failed (site="SetUp") mark their cases failed with site="Parent";
    # NUnit writes some of those cases beside, not under, the ParameterizedMethod suite.
    result = _parse(JENKINS / "NUnit-issue44527.xml")
    assert result.counts == TestCounts(total=150, passed=6, failed=144)
    assert result.run_errors == []
    setup = [f for f in result.failures if f.message == "OneTimeSetUp: No suitable constructor was found"]
    assert len(setup) == 10 and all(f.outcome is Outcome.ERROR for f in setup)


def test_output_becomes_stdout() -> None:
    result = _parse(ENRICOMI / "nunit/mstest/timewarpinc.xml")
    (failure,) = result.failures
    assert (
        failure.name
        == 'MP.Tests.AssetValidatorTest.ValidateSceneContainer("Assets/Scenes/Grid/GridTest.unity")'
    )
    assert failure.stdout is not None and failure.stdout.startswith(
        "AssertionException: Could not find a til"
    )


def test_a_bare_test_suite_root_is_read() -> None:
    result = _parse(ENRICOMI / "nunit/mstest/clicketyclackety.xml")
    assert result.counts == TestCounts(total=23, passed=13, failed=10)
    assert result.run_errors == [] and result.notes == []


# --- outcome mapping, NUnit 2 ------------------------------------------------------------------


def test_nunit2_result_values() -> None:
    result = _parse(JENKINS / "NUnit-correct.xml")
    mock = "NUnit.Tests.Assemblies.MockTestFixture."
    assert _case(result, mock + "FailingTest").outcome is Outcome.FAILED
    assert _case(result, mock + "TestWithException").outcome is Outcome.ERROR  # result="Error"
    assert _case(result, mock + "NotRunnableTest").outcome is Outcome.ERROR  # result="NotRunnable"
    assert _case(result, mock + "MockTest4").outcome is Outcome.SKIPPED  # result="Ignored"
    assert _case(result, mock + "InconclusiveTest").outcome is Outcome.INCONCLUSIVE
    assert result.counts == TestCounts(total=28, passed=18, failed=5, skipped=4)


def test_nunit2_without_result_uses_executed_and_success() -> None:
    old = _parse(JENKINS / "NUnit-failure.xml")  # NUnit 2.2.8: executed/success only
    assert old.counts == TestCounts(total=3, passed=2, failed=1)
    assert old.failures[0].message == "  Expected failure\n  Expected: 30\n  But was:  20"
    only_executed = _parse(JENKINS / "NUnit-issue6353.xml")  # no success attribute at all
    assert [(c.name, c.outcome) for c in only_executed.cases or []] == [
        ("SuccessfulTest", Outcome.PASSED),
        ("IgnoredTest", Outcome.SKIPPED),
        ("FailedTest", Outcome.FAILED),  # it has a <failure> element
    ]


def test_an_unknown_success_value_is_an_error_never_a_pass() -> None:
    result = _parse(JENKINS / "NUnit-multinamespace.xml")
    odd = _case(result, "UnitTests.MainClassTest.TestFailure")
    assert odd.outcome is Outcome.ERROR
    assert odd.message == "unrecognised NUnit outcome executed='True' success='Turue'"


# --- suite- and run-level failures (shapes from the NUnit 3 result schema) ---------------------


def _run(body: str, result: str = "Failed") -> ParseResult:
    doc = f'<test-run id="2" result="{result}" total="1">{body}</test-run>'
    return PARSER.parse(io.BytesIO(doc.encode()), "run.xml", keep_cases=True)


def test_one_time_teardown_failure_without_failing_child_is_a_run_error() -> None:
    result = _run(
        '<test-suite type="TestFixture" name="F" fullname="Ns.F" result="Failed" label="Error" '
        'site="TearDown">'
        "<failure><message>TearDown : System.Exception : cleanup broke</message></failure>"
        '<test-case name="T" fullname="Ns.F.T" result="Passed" duration="0.1"/></test-suite>'
    )
    assert result.counts == TestCounts(total=1, passed=1)
    assert [e.message for e in result.run_errors] == [
        "suite Ns.F failed in TearDown with no failing test under it: "
        "TearDown : System.Exception : cleanup broke"
    ]


def test_a_failed_run_without_any_failure_is_a_run_error() -> None:
    result = _run(
        '<test-suite type="Assembly" name="A.dll" result="Passed">'
        '<test-case name="T" result="Passed"/></test-suite>'
    )
    assert [e.message for e in result.run_errors] == ["the run's result is Failed but no test case failed"]


def test_warning_passes_with_a_note_and_unknown_results_are_errors() -> None:
    result = _run(
        '<test-suite type="TestFixture" name="F" fullname="Ns.F" result="Failed" site="Child">'
        '<test-case name="W" fullname="Ns.F.W" result="Warning">'
        "<reason><message>careful</message></reason></test-case>"
        '<test-case name="X" fullname="Ns.F.X" result="Exploded"/>'
        '<test-case name="C" fullname="Ns.F.C" result="Failed" label="Cancelled"/></test-suite>'
    )
    assert [(c.name, c.outcome, c.message) for c in result.cases or []] == [
        ("Ns.F.W", Outcome.PASSED, "careful"),
        ("Ns.F.X", Outcome.ERROR, "unrecognised NUnit result 'Exploded'"),
        ("Ns.F.C", Outcome.ABORTED, None),
    ]
    assert "1 test(s) passed with warnings: Ns.F.W" in result.notes
    assert result.run_errors == []


# --- hostile and broken input ------------------------------------------------------------------


def test_nul_bytes_are_repaired_where_enricomi_gives_up() -> None:
    path = JENKINS / "NUnit-issue17521.xml"
    assert "Char 0x0 out of allowed range" in path.with_suffix(".exception").read_text(encoding="utf-8")
    result = _parse(path)
    assert result.counts == TestCounts(total=2, passed=1)  # + 1 inconclusive, as the file's totals say
    assert result.run_errors == []
    assert result.notes == ["replaced 4 character(s) that are illegal in XML 1.0"]


def test_malformed_markup_is_a_run_error() -> None:
    path = JENKINS / "NUnit-issue47367.xml"
    assert "attributes construct error" in path.with_suffix(".exception").read_text(encoding="utf-8")
    result = _parse(path)
    (error,) = result.run_errors
    assert error.message.startswith("truncated or malformed XML at line 5: attributes construct error")
    assert error.message.endswith("the tests after it were still read")


@pytest.mark.parametrize("name", ["NUnit-sec1752-file.xml", "NUnit-sec1752-https.xml"])
def test_external_entities_are_not_resolved(name: str) -> None:
    # EnricoMi's .results for the file variant shows the entity resolved to the local file's
    # content ('abc'); we leave the reference as written and never read the file or the URL.
    secret = (JENKINS / "NUnit-sec1752-file.txt").read_text(encoding="utf-8").strip()
    result = _parse(JENKINS / name)
    (failure,) = result.failures
    assert failure.message == "&xxe;"
    assert secret not in repr(result)


def test_a_truncated_large_file_keeps_the_cases_before_the_cut() -> None:
    data = (JENKINS / "NUnit-issue44527.xml").read_bytes()
    result = parse_stream(io.BytesIO(data[: len(data) // 2]), "cut.xml")
    assert result.format == "nunit"
    assert result.counts is not None and 0 < result.counts.total < 150
    assert len(result.run_errors) == 1 and result.run_errors[0].message.startswith(
        "truncated or malformed XML at line "
    )


def test_ten_thousand_nested_suites_do_not_blow_the_stack() -> None:
    depth = 10_000
    doc = (
        b"<test-run>"
        + b"<test-suite>" * depth
        + b'<test-case name="t" result="Passed"/>'
        + b"</test-suite>" * depth
    )
    result = parse_stream(io.BytesIO(doc + b"</test-run>"), "deep.xml")
    assert result.format == "nunit" and len(result.run_errors) == 1
    assert "Excessive depth" in result.run_errors[0].message
