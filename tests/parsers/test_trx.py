"""TRX parser against the real corpus and four peer oracles.

Peer outputs are peer behaviour, not truth. Where we differ on purpose the test names the case
and the reason; everywhere else we assert the peer's value, read from the peer's expected file.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from ci_agent.parsers import parse_path, parse_stream
from ci_agent.parsers.trx_fields import (
    OUTCOMES,
    first_frame_location,
    map_outcome,
    parse_duration,
    qualified_name,
)
from ci_agent.report import Outcome, ParseResult, TestCase
from tests.conftest import SHARED_FIXTURES, shared_fixture

ALL_TRX = sorted(SHARED_FIXTURES.rglob("*.trx"))
MSTEST_PLUGIN = "other/mstest-plugin/src/test/resources/hudson/plugins/mstest/"
TRX2JUNIT = "other/trx2junit/tests/trx2junit.Core.Tests/data/"
TRX_PARSER = "other/trx-parser/test-data/"
ALLURE = "other/allure2/plugins/trx-plugin/src/test/resources/trxdata/"
LIQUID = "other/LiquidTestReports/test/LiquidTestReports.Cli.Tests/TrxTestInput/"


@cache
def parsed(path: Path) -> ParseResult:
    return parse_path(path, keep_cases=True)


def fixture(relative: str) -> ParseResult:
    return parsed(shared_fixture(relative))


def cases(result: ParseResult) -> list[TestCase]:
    assert result.cases is not None
    return result.cases


def short_name(case: TestCase) -> str:
    """The peers' test name: testName minus a leading `className.`."""
    prefix = f"{case.classname}."
    return case.name[len(prefix):] if case.classname and case.name.startswith(prefix) else case.name


# --- every TRX file in the corpus -----------------------------------------------------------

def test_corpus_has_the_78_trx_files() -> None:
    assert len(ALL_TRX) == 78


@pytest.mark.parametrize("path", ALL_TRX, ids=lambda p: str(p.relative_to(SHARED_FIXTURES)))
def test_every_trx_parses_with_consistent_counts(path: Path) -> None:
    result = parse_path(path)  # registry + sniffing, no format forced
    assert result.format == "trx"
    assert result.counts is not None
    c = result.counts
    assert c.total == c.passed + c.failed + c.skipped
    assert c.failed == len(result.failures)
    assert all(f.outcome.is_failure for f in result.failures)
    assert result.cases is None  # passed/skipped are only counted unless asked
    kept = parsed(path)
    assert kept.counts == c
    assert len(cases(kept)) == c.total
    # a file that parses cleanly has no syntax RunError
    assert not any("malformed XML" in e.message for e in result.run_errors)


# --- (a) EnricoMi: .results (per case) and .results.json (stats) ----------------------------

def _ast_value(node: ast.expr) -> Any:
    if isinstance(node, ast.Call):
        return {k.arg: _ast_value(k.value) for k in node.keywords}
    if isinstance(node, ast.List | ast.Tuple):
        return [_ast_value(e) for e in node.elts]
    return ast.literal_eval(node)


def enricomi_results(trx: Path) -> dict[str, Any]:
    text = trx.with_suffix(".results").read_text(encoding="utf-8")
    value: dict[str, Any] = _ast_value(ast.parse(text, mode="eval").body)
    return value


ENRICOMI_TRX = sorted((SHARED_FIXTURES / "enricomi/trx").rglob("*.trx"))
# EnricoMi's XSLT gives <skipped> to anything but Passed/Failed/Error. For us Aborted and
# NotRunnable are failures (DESIGN.md §4.1; reference §2), so these two yami cases differ.
YAMI_DELIBERATE = {
    "EST_SEG_TEMPTest": ("skipped", Outcome.ABORTED),  # ran 4.6 s, then the host crashed
    "CompareTest": ("skipped", Outcome.ERROR),  # NotRunnable: bad test signature (UTA007)
}
_ENRICOMI_RESULT = {Outcome.PASSED: "success", Outcome.FAILED: "failure", Outcome.ERROR: "error",
                    Outcome.SKIPPED: "skipped", Outcome.INCONCLUSIVE: "skipped"}


def test_enricomi_oracle_covers_nine_files() -> None:
    assert len(ENRICOMI_TRX) == 9


@pytest.mark.parametrize("path", ENRICOMI_TRX, ids=lambda p: p.name)
def test_enricomi_cases_match(path: Path) -> None:
    theirs = enricomi_results(path)
    ours = cases(parsed(path))
    deliberate = YAMI_DELIBERATE if path.name.startswith("yami") else {}
    expected = Counter(
        (c["class_name"], c["test_name"], c["result"])
        for c in theirs["cases"]
        if c["test_name"] not in deliberate
    )
    got = Counter(
        (c.classname, short_name(c), _ENRICOMI_RESULT[c.outcome])
        for c in ours
        if short_name(c) not in deliberate
    )
    assert got == expected
    for name, (their_result, our_outcome) in deliberate.items():
        assert [c["result"] for c in theirs["cases"] if c["test_name"] == name] == [their_result]
        assert [c.outcome for c in ours if short_name(c) == name] == [our_outcome]


@pytest.mark.parametrize("path", ENRICOMI_TRX, ids=lambda p: p.name)
def test_enricomi_failure_messages_kept_apart_from_stacks(path: Path) -> None:
    ours = {(c.classname, short_name(c)): c for c in cases(parsed(path))}
    failing = [c for c in enricomi_results(path)["cases"] if c["result"] in ("failure", "error")]
    for theirs in failing:
        case = ours[(theirs["class_name"], theirs["test_name"])]
        assert case.message == theirs["message"]
        # EnricoMi glues Message and StackTrace with no separator; we keep them apart.
        assert (case.message or "") + (case.stack or "") == (theirs["content"] or "")


@pytest.mark.parametrize("path", ENRICOMI_TRX, ids=lambda p: p.name)
def test_enricomi_stats(path: Path) -> None:
    stats = json.loads(path.with_suffix(".results.json").read_text(encoding="utf-8"))["stats"]
    counts = parsed(path).counts
    assert counts is not None
    assert counts.total == stats["runs"]  # we count runs (rows), theirs too
    if path.name.startswith("yami"):
        # Aborted + NotRunnable: 2 more failures and 2 fewer skips than EnricoMi (see above)
        assert (counts.failed, counts.skipped) == (stats["tests_fail"] + 2, stats["tests_skip"] - 2)
    else:
        assert counts.failed == stats["tests_fail"] + stats["tests_error"]
        assert counts.skipped == stats["tests_skip"]
    assert counts.passed == stats["runs_succ"]


# --- (b) dorny snapshots ----------------------------------------------------------------------

_SNAP = "dorny/__snapshots__/dotnet-trx.test.ts.snap"
_SUITE_RE = re.compile(r'\n {6}"name": "(.*)",\n {6}"totalTime"')
_CASE_RE = re.compile(r'\n {14}"name": "(.*)",\n {14}"result": "(\w+)"')
_MESSAGE_RE = re.compile(r'\n {16}"message": "(.*?)",\n {16}"path"', re.DOTALL)
_PATH_LINE_RE = re.compile(r'\n {16}"line": (\d+),.*?\n {16}"path": "(.*?)"', re.DOTALL)


def _unescape(text: str) -> str:
    # pretty-format escapes '"'; the JS template literal around it escapes '`', '${' and '\\'
    return text.replace("\\`", "`").replace("\\${", "${").replace('\\"', '"').replace("\\\\", "\\")


def dorny_snapshot(title: str) -> list[dict[str, Any]]:
    """Test cases of one snapshot: suite, name, result, message, path, line (None when absent)."""
    text = shared_fixture(_SNAP).read_text(encoding="utf-8")
    block = text.split(f"exports[`{title} 1`] = `", 1)[1].split("\n`;", 1)[0]
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for chunk in block.split("TestCaseResult {")[1:]:
        name, result = _CASE_RE.search(chunk).groups()  # type: ignore[union-attr]
        message = _MESSAGE_RE.search(chunk)
        where = _PATH_LINE_RE.search(chunk)
        pending.append({
            "name": _unescape(name), "result": result,
            "message": _unescape(message.group(1)) if message else None,
            "line": int(where.group(1)) if where else None,
            "path": _unescape(where.group(2)) if where else None,
        })
        suite = _SUITE_RE.search(chunk)
        if suite:
            for case in pending:
                case["suite"] = _unescape(suite.group(1))
            out.extend(pending)
            pending = []
    assert not pending
    return out


_DORNY_RESULT = {"success": Outcome.PASSED, "skipped": Outcome.SKIPPED, "failed": Outcome.FAILED}
DORNY = {
    "dotnet-trx tests matches dotnet-trx report snapshot": "dorny/fixtures/dotnet-trx.trx",
    "dotnet-trx tests matches dotnet-xunitv3 report snapshot": "dorny/fixtures/dotnet-xunitv3.trx",
    "dotnet-trx tests report from FluentValidation test results matches snapshot":
        "dorny/fixtures/external/FluentValidation.Tests.trx",
    "dotnet-trx tests report from SilentNotes test results matches snapshot":
        "dorny/fixtures/external/SilentNotes.trx",
}


def _norm(text: str | None) -> str:
    return (text or "").replace("\r\n", "\n")


@pytest.mark.parametrize("title", DORNY)
def test_dorny_snapshot_names_results_messages(title: str) -> None:
    theirs = dorny_snapshot(title)
    ours = cases(fixture(DORNY[title]))
    # dorny files unclassified tests (MTP cleanup failures have no className) under 'Unclassified'
    got = Counter((c.classname or "Unclassified", short_name(c), c.outcome) for c in ours)
    assert got == Counter((t["suite"], t["name"], _DORNY_RESULT[t["result"]]) for t in theirs)
    by_name = {(c.classname or "Unclassified", short_name(c)): c for c in ours}
    for t in theirs:
        case = by_name[(t["suite"], t["name"])]
        if t["message"] is not None:
            # dorny: Message + "\n" + StackTrace in one string; ours are separate fields
            assert _norm(t["message"]) == _norm(case.message) + "\n" + _norm(case.stack)
        elif case.outcome.is_failure:
            # dorny drops the error unless both Message and StackTrace exist; so do the files
            assert not (case.message and case.stack)
        if t["path"] is not None:
            # dorny's first *tracked* frame; ours is the first frame with a file: same frames here
            assert case.file is not None and case.file.replace("\\", "/").endswith(t["path"])
            assert case.line == t["line"]


def test_dorny_xunitv3_cleanup_failures_have_no_class_and_no_details() -> None:
    failures = [c for c in fixture("dorny/fixtures/dotnet-xunitv3.trx").failures if c.classname is None]
    assert sorted(c.name for c in failures) == [
        "[Test Class Cleanup Failure (DotnetTests.XUnitV3Tests.FixtureTests.Failing_Test)]",
        "[Test Class Cleanup Failure (DotnetTests.XUnitV3Tests.FixtureTests.Passing_Test)]",
    ]
    assert all(c.message is None and c.stack is None for c in failures)


def test_dorny_xunitv3_exit_code_2_is_not_a_run_error() -> None:
    # MTP's RunInfo "Exit code indicates failure: '2'" means "some test failed": already reported.
    result = fixture("dorny/fixtures/dotnet-xunitv3.trx")
    assert result.run_errors == []
    assert result.counts is not None and result.counts.failed == 3


# --- (c) trx2junit: expected JUnit files and the count table -------------------------------

def junit_cases(path: Path) -> Counter[tuple[str | None, str | None, str]]:
    tree = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True))
    out: Counter[tuple[str | None, str | None, str]] = Counter()
    for tc in tree.iter("testcase"):
        kinds = {child.tag for child in tc}
        result = next((k for k in ("failure", "error", "skipped") if k in kinds), "success")
        out[(tc.get("classname"), tc.get("name"), result)] += 1
    return out


_JUNIT_RESULT = {Outcome.PASSED: "success", Outcome.FAILED: "failure", Outcome.ERROR: "error",
                 Outcome.SKIPPED: "skipped", Outcome.INCONCLUSIVE: "skipped", Outcome.TIMEOUT: "error",
                 Outcome.ABORTED: "error"}
TRX2JUNIT_PAIRS = sorted(p.stem for p in (SHARED_FIXTURES / TRX2JUNIT / "junit").glob("*.xml")
                         if (SHARED_FIXTURES / TRX2JUNIT / "trx" / f"{p.stem}.trx").exists())


def test_trx2junit_has_fourteen_pairs() -> None:
    assert len(TRX2JUNIT_PAIRS) == 14


@pytest.mark.parametrize("stem", TRX2JUNIT_PAIRS)
def test_trx2junit_testcases_match(stem: str) -> None:
    ours = cases(fixture(f"{TRX2JUNIT}trx/{stem}.trx"))
    got = Counter((c.classname, short_name(c), _JUNIT_RESULT[c.outcome]) for c in ours)
    expected = junit_cases(shared_fixture(f"{TRX2JUNIT}junit/{stem}.xml"))
    if stem == "mstest-warning":
        # trx2junit keeps the assembly-qualified className; we cut at the first ',' as EnricoMi does
        expected = Counter({((k[0] or "").split(",")[0], k[1], k[2]): n for k, n in expected.items()})
    assert got == expected


# From PROVENANCE.md (trx2junit JUnitTestResultXmlBuilderTests/Integration.cs): tests, failures.
TRX2JUNIT_COUNTS = {
    "mstest": (3, 1), "nunit": (3, 1), "xunit": (3, 1),
    "mstest-datadriven": (5, 2), "nunit-datadriven": (5, 2), "nunit-memberdata": (5, 2),
    "xunit-datadriven": (5, 2), "xunit-memberdata": (5, 2),
    "mstest-ignore": (4, 1), "xunit-ignore": (4, 1), "nunit-ignore": (5, 1),
    "nunit-with-stdout": (1, 0), "nunit-testresultaggregation": (3, 1),
}


@pytest.mark.parametrize("stem", TRX2JUNIT_COUNTS)
def test_trx2junit_count_table(stem: str) -> None:
    counts = fixture(f"{TRX2JUNIT}trx/{stem}.trx").counts
    assert counts is not None
    assert (counts.total, counts.failed) == TRX2JUNIT_COUNTS[stem]


def test_mstest_datadriven_rows_are_cases_and_failure_sits_on_the_row() -> None:
    result = fixture(f"{TRX2JUNIT}trx/mstest-datadriven.trx")
    rows = sorted(c.name for c in cases(result) if c.name.startswith("Two_pass_one_fails"))
    assert rows == ["Two_pass_one_fails (0)", "Two_pass_one_fails (1)", "Two_pass_one_fails (2)"]
    failing_row = next(c for c in result.failures if c.name == "Two_pass_one_fails (1)")
    assert failing_row.message  # the row carries the failure, not the data-driven parent
    assert "Two_pass_one_fails" not in [c.name for c in cases(result)]


# --- (d) mstest-plugin: 17 expected JUnit pairs ---------------------------------------------

MSTEST_PAIRS = {
    **{stem: f"{stem}.xml" for stem in (
        "DATAFEED.Tests", "DataDriven.2008", "DataDriven.2013", "JENKINS-13862", "JENKINS-17506",
        "JENKINS-25533+19384", "ReportingOptions.2008", "ReportingOptions.2013", "kozl-unit-tests-missing",
        "mstest_vs_2010", "mstest_vs_2012", "nilleb_HOST18468 2015-03-18 08_03_36", "webTestResult")},
    # hard-coded in MSTestReportConverterTest.java (note the '-' in the last one)
    "mstest_2_tests_1_class": "junit_mstest_2_tests_1_class.xml",
    "mstest_2_tests_from_different_assemblies": "junit_mstest_2_tests_from_different_assemblies.xml",
    "mstest_4_tests_2_classes": "junit_mstest_4_tests_2_classes.xml",
    "mstest_more_than_one_minute_test": "junit_mstest_more_than-one_minute_test.xml",
}
# The plugin's "reporting options" rename or omit tests from markers the test printed (a Jenkins
# feature, not TRX data); we report every row under its testName. Its web-test classname is the
# .webtest storage path; a WebTest definition has no TestMethod, so we have no class.
MSTEST_PLUGIN_RENAMES = {
    "DataDriven.2008", "DataDriven.2013", "ReportingOptions.2008", "ReportingOptions.2013",
}


@pytest.mark.parametrize("stem", sorted(MSTEST_PAIRS))
def test_mstest_plugin_pairs(stem: str) -> None:
    ours = cases(fixture(f"{MSTEST_PLUGIN}{stem}.trx"))
    expected = junit_cases(shared_fixture(MSTEST_PLUGIN + MSTEST_PAIRS[stem]))
    got = Counter((c.classname, short_name(c), _JUNIT_RESULT[c.outcome]) for c in ours)
    if stem in MSTEST_PLUGIN_RENAMES:
        # same failures (none) and one more case each: the row or test the plugin omitted
        assert sum(expected.values()) + 1 == len(ours)
        assert {k[2] for k in expected} == {k[2] for k in got} == {"success"}
    elif stem == "webTestResult":
        only = [("Login - Sucess", "success")]
        assert [(k[1], k[2]) for k in expected] == [(k[1], k[2]) for k in got] == only
    else:
        assert got == expected


def test_mstest_plugin_pairs_are_seventeen() -> None:
    assert len(MSTEST_PAIRS) == 17


# --- (e) specific facts from the reference --------------------------------------------------

def test_test_host_error_is_a_run_error_with_zero_tests() -> None:
    result = fixture(f"{TRX_PARSER}failing-tests/test-host-error.trx")
    assert result.counts is not None and result.counts.total == 0
    assert len(result.run_errors) == 1
    missing = "The framework 'Microsoft.NETCore.App', version '3.1.0' was not found"
    assert missing in result.run_errors[0].message


def test_all_passed_but_outcome_failed_is_a_run_error_without_failures() -> None:
    result = fixture(f"{TRX_PARSER}passing-tests/all-passed-but-outcome-failed.trx")
    assert result.counts is not None and (result.counts.passed, result.counts.failed) == (2, 0)
    assert [e.message for e in result.run_errors] == [
        "the test run outcome is Failed but no test failed: Test host process crashed"
    ]


@pytest.mark.parametrize(("name", "missing"), [("JENKINS-13862", 1), ("kozl-unit-tests-missing", 3)])
def test_missing_outcome_is_an_error(name: str, missing: int) -> None:
    result = fixture(f"{MSTEST_PLUGIN}{name}.trx")
    assert [c.outcome for c in result.failures] == [Outcome.ERROR] * missing
    assert any("outcome (missing) counted as error" in n for n in result.notes)


def test_timeout_counts_as_a_failure() -> None:
    result = fixture(f"{MSTEST_PLUGIN}mstest_vs_2012_timeout.trx")
    assert [(c.name, c.outcome) for c in result.failures] == [("TestMethod2", Outcome.TIMEOUT)]
    assert result.counts is not None and result.counts.failed == 1


def test_yami_aborted_and_not_runnable_with_spanish_frames() -> None:
    result = fixture("enricomi/trx/yami_YAMILEX_2015-10-24_04_18_59.trx")
    outcomes = {short_name(c): c.outcome for c in result.failures}
    assert outcomes["EST_SEG_TEMPTest"] is Outcome.ABORTED
    assert outcomes["CompareTest"] is Outcome.ERROR
    inter = next(c for c in result.failures if short_name(c) == "EST_INTER_TEMPTest")
    assert (inter.file, inter.line) == (r"E:\TMC\TMC\Components\TemperatureControl\SIARAlgorithms.cs", 363)
    assert "El índice estaba fuera del intervalo" in (inter.message or "")
    assert [e.message for e in result.run_errors] == [
        "test run error: El proceso del host de pruebas terminó inesperadamente."
    ]
    assert "GetDiseñoTest" in {short_name(c) for c in cases(result)}


def test_nested_inner_results_count_leaves() -> None:
    result = fixture(f"{ALLURE}testresultsWithChildren.trx")
    assert result.counts is not None
    assert (result.counts.total, result.counts.passed, result.counts.failed) == (5, 3, 2)
    assert sorted((c.name, (c.message or "").strip()) for c in result.failures) == [
        ("UnitTest_Three (Child One)", "Some Message."),
        ("UnitTest_Three (Child Two) (GrandChild Two)", "Second Message."),
    ]
    # a grandchild whose testId is not in TestDefinitions still counts, without a class
    assert any("Counters says total=7" in n for n in result.notes)


def test_ordered_test_aggregation_counts_its_inner_result() -> None:
    result = fixture(f"{MSTEST_PLUGIN}JENKINS-25533+19384.trx")
    assert result.counts is not None and (result.counts.total, result.counts.failed) == (1, 1)
    (login,) = result.failures
    assert (login.name, login.classname) == ("Login", "UITestAutomation.RouteOptimization_SanityCheck")
    assert (login.file, login.line) == (r"d:\tests_Workspace\src\TestAutomation\TestActions.cs", 455)
    assert login.stdout is not None and "Failed to connect: Attempt 0" in login.stdout


def test_web_test_result_is_counted() -> None:
    result = fixture(f"{MSTEST_PLUGIN}webTestResult.trx")
    assert [(c.name, c.outcome) for c in cases(result)] == [("Login - Sucess", Outcome.PASSED)]


def test_nunit_test_result_aggregation_without_children_are_leaves() -> None:
    result = fixture(f"{TRX2JUNIT}trx/nunit-testresultaggregation.trx")
    assert result.counts is not None and (result.counts.total, result.counts.failed) == (3, 1)


@pytest.mark.parametrize("name", [
    "JENKINS-23531-charset.trx",
    "JENKINS-23531-xmlentities-forged.trx",
    "SYSTEM_AD-JENKINS 2015-07-08 10_53_01.trx",
])
def test_illegal_character_references_are_repaired_and_noted(name: str) -> None:
    result = fixture(MSTEST_PLUGIN + name)
    assert result.run_errors == []
    assert any(n.startswith("repaired ") for n in result.notes)
    # the repaired reference shows as U+FFFD where .NET wrote e.g. &#x1F;
    assert any("\ufffd" in (c.stack or "") + (c.message or "") + (c.stdout or "") for c in cases(result))


@pytest.mark.parametrize("path", ["enricomi/trx/nunit/FluentValidation.Tests.trx",
                                  "dorny/fixtures/external/FluentValidation.Tests.trx"])
def test_fluent_validation_804_results_with_repeated_test_ids(path: str) -> None:
    result = fixture(path)
    assert result.counts is not None
    assert (result.counts.total, result.counts.passed, result.counts.skipped) == (804, 803, 1)
    assert shared_fixture(path).read_bytes().count(b"<UnitTestResult ") == 804  # by eye: 804 results
    assert result.run_errors == []  # the one [SKIP] RunInfo is an echo, not a run error


@pytest.mark.parametrize("path", [
    "enricomi/trx/xunit/dotnet-trx.trx",
    f"{TRX_PARSER}failing-tests/stack-trace.trx",
    f"{TRX2JUNIT}trx/xunit-memberdata.trx",
])
def test_xunit_fail_run_infos_are_not_double_counted(path: str) -> None:
    result = fixture(path)
    assert result.run_errors == []
    assert any("per-test RunInfo line(s)" in n for n in result.notes)


def test_class_name_is_cut_at_the_first_comma() -> None:
    result = fixture("enricomi/trx/mstest/pickles.trx")
    assert {c.classname for c in cases(result)} == {"Pickles.TestHarness.MSTest.AdditionFeature"}


def test_stdout_is_kept_and_bounded() -> None:
    result = fixture(f"{TRX2JUNIT}trx/nunit-with-stdout.trx")
    (case,) = cases(result)
    assert case.stdout is not None and 0 < len(case.stdout) <= 4096 + 40


def test_durations_without_fraction_and_missing() -> None:
    xunitv3 = cases(fixture("dorny/fixtures/dotnet-xunitv3.trx"))
    assert {c.duration_s for c in xunitv3 if c.classname is None} == {0.0}  # duration="00:00:00"
    liquid = cases(fixture(f"{LIQUID}MSTest-net8.0-sample.trx"))
    skipped = [c for c in liquid if c.outcome is Outcome.SKIPPED]
    assert skipped and all(c.duration_s is None for c in skipped)  # no duration attribute


def test_truncated_real_file_keeps_what_was_read(tmp_path: Path) -> None:
    data = shared_fixture(f"{MSTEST_PLUGIN}DATAFEED.Tests.trx").read_bytes()
    cut = tmp_path / "cut.trx"
    cut.write_bytes(data[: len(data) // 2])
    result = parse_path(cut)
    assert result.format == "trx"
    assert result.counts is not None and 0 < result.counts.total < 317
    # only the syntax error: "run outcome Failed but no test failed" cannot be judged on half a file
    (error,) = result.run_errors
    assert error.source == str(cut)
    assert re.fullmatch(r"truncated or malformed XML at line \d+: [^\n]+", error.message)
    assert ", line " not in error.message  # lxml's own position suffix is not repeated


# --- outcomes and shapes no real file has (synthetic, minimal, labelled as such) -------------

NS = "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"


def synthetic_trx(results: str, tail: str = "", ns: str = NS) -> bytes:
    return f'<?xml version="1.0"?><TestRun xmlns="{ns}"><Results>{results}</Results>{tail}</TestRun>'.encode()


def parse_bytes(data: bytes) -> ParseResult:
    import io
    return parse_stream(io.BytesIO(data), "synthetic.trx", keep_cases=True)


@pytest.mark.parametrize(("raw", "outcome", "bucket"), [
    ("Passed", Outcome.PASSED, "passed"), ("Failed", Outcome.FAILED, "failed"),
    ("Error", Outcome.ERROR, "failed"), ("Timeout", Outcome.TIMEOUT, "failed"),
    ("Aborted", Outcome.ABORTED, "failed"), ("NotExecuted", Outcome.SKIPPED, "skipped"),
    ("Inconclusive", Outcome.INCONCLUSIVE, "skipped"), ("NotRunnable", Outcome.ERROR, "failed"),
    ("PassedButRunAborted", Outcome.PASSED, "passed"), ("Warning", Outcome.PASSED, "passed"),
    ("Disconnected", Outcome.ABORTED, "failed"), ("Completed", Outcome.PASSED, "passed"),
    ("InProgress", Outcome.SKIPPED, "skipped"), ("Pending", Outcome.SKIPPED, "skipped"),
    ("Exploded", Outcome.ERROR, "failed"),  # unknown: never a pass
])
def test_every_outcome_is_mapped_explicitly(raw: str, outcome: Outcome, bucket: str) -> None:
    result = parse_bytes(synthetic_trx(
        f'<UnitTestResult testId="t" testName="T" outcome="{raw}"><Output><ErrorInfo>'
        f"<Message>why</Message></ErrorInfo></Output></UnitTestResult>"
    ))
    (case,) = cases(result)
    assert case.outcome is outcome
    assert case.message == "why"  # kept for inconclusive/skipped too
    assert result.counts is not None and getattr(result.counts, bucket) == 1
    if raw == "PassedButRunAborted":
        assert [e.message for e in result.run_errors] == [
            "the test run was aborted (1 test(s) with outcome PassedButRunAborted)"
        ]
    if raw not in ("Passed", "Failed", "Error", "Timeout", "Aborted", "NotExecuted"):
        assert any(raw in n for n in result.notes)


def test_unknown_result_kind_under_results_is_counted() -> None:
    result = parse_bytes(synthetic_trx('<FancyTestResult testName="F" outcome="Failed"/>'))
    assert result.counts is not None and result.counts.failed == 1
    assert any("<FancyTestResult>" in n for n in result.notes)


def test_failing_parent_with_passing_rows_is_not_lost() -> None:
    result = parse_bytes(synthetic_trx(
        '<UnitTestResult testName="P" outcome="Failed"><Output><ErrorInfo><Message>setup broke</Message>'
        '</ErrorInfo></Output><InnerResults><UnitTestResult testName="P (0)" outcome="Passed"/>'
        "</InnerResults></UnitTestResult>"
    ))
    assert result.counts is not None and (result.counts.total, result.counts.failed) == (2, 1)
    assert [(c.name, c.message) for c in result.failures] == [("P", "setup broke")]


def test_definitions_before_or_after_results_and_2006_join_by_execution_id() -> None:
    definition = ('<TestDefinitions><UnitTest id="t1"><Execution id="e1"/>'
                  '<TestMethod className="Ns.C, Asm, Version=1.0.0.0" name="M"/>'
                  "</UnitTest></TestDefinitions>")
    failing = '<UnitTestResult testId="t1" executionId="e1" testName="M" outcome="Failed"/>'
    after = parse_bytes(synthetic_trx(failing, tail=definition))
    before = parse_bytes(f'<TestRun xmlns="{NS}">{definition}<Results>{failing}</Results></TestRun>'.encode())
    old = parse_bytes(synthetic_trx(failing.replace('testId="t1" ', ""), tail=definition,
                                    ns="http://microsoft.com/schemas/VisualStudio/TeamTest/2006"))
    for result in (after, before, old):
        assert [(c.name, c.classname) for c in result.failures] == [("M", "Ns.C")]


def test_run_failure_reason_from_summary_stdout_when_no_run_info() -> None:
    result = parse_bytes(synthetic_trx(
        '<UnitTestResult testName="A" outcome="Passed"/>',
        tail='<ResultSummary outcome="Failed"><Output><StdOut>line 1\nTest host crashed</StdOut></Output>'
             "</ResultSummary>",
    ))
    assert [e.message for e in result.run_errors] == [
        "the test run outcome is Failed but no test failed: line 1\nTest host crashed"
    ]


def test_not_a_test_run_root_is_a_run_error() -> None:
    import io
    result = parse_stream(io.BytesIO(b"<NotTrx/>"), "x.trx", forced="trx")
    assert [e.message for e in result.run_errors] == ["root element <NotTrx> is not a TRX <TestRun>"]


def test_data_driven_parent_without_rows_is_itself_a_leaf() -> None:
    result = fixture(f"{MSTEST_PLUGIN}DataDriven-no-tests-found.trx")
    assert result.counts is not None and (result.counts.total, result.counts.failed) == (2, 1)
    (failure,) = result.failures
    assert failure.name == "TestCreatesError"
    assert (failure.message or "").startswith("The unit test adapter failed to connect to the data source")


# --- field rules (trx_fields) -----------------------------------------------------------------

@pytest.mark.parametrize(("text", "seconds"), [
    ("00:00:18", 18.0), ("00:00:01.2345678", 1.2345678), ("01:02:03", 3723.0),
    ("1.02:03:04.5", 93784.5), ("00:00:00", 0.0), (None, None), ("", None), ("soon", None),
])
def test_parse_duration(text: str | None, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


@pytest.mark.parametrize(("stack", "where"), [
    ("   at A.B() in /_/src/App/X.cs:line 19\n   at C.D() in /_/src/Y.cs:line 2", ("/_/src/App/X.cs", 19)),
    ("   en A.B() en E:\\TMC\\Prueba\\T.cs:línea 199", ("E:\\TMC\\Prueba\\T.cs", 199)),
    ("   bei A.B() in C:\\src\\Mein Projekt\\T.cs:Zeile 42\r\n", ("C:\\src\\Mein Projekt\\T.cs", 42)),
    ("   à A.B() dans C:\\src\\T.cs:ligne 7", ("C:\\src\\T.cs", 7)),
    ("   in A.B() in ~/work/T.cs:riga 3", ("~/work/T.cs", 3)),
    ("   場所 A.B() 場所 C:\\src\\T.cs:行 12", ("C:\\src\\T.cs", 12)),
    ("   at System.RuntimeMethodHandle.InvokeMethod(Object target)\n   at A.B() in /home/u/T.cs:line 5",
     ("/home/u/T.cs", 5)),
    ("   at System.Threading.Tasks.Task.Wait()", (None, None)),
    (None, (None, None)),
])
def test_first_frame_location_in_any_language(
    stack: str | None, where: tuple[str | None, int | None]
) -> None:
    assert first_frame_location(stack) == where


def test_outcome_table_is_the_fourteen_xsd_values() -> None:
    assert set(OUTCOMES) == {
        "Error", "Failed", "Timeout", "Aborted", "Inconclusive", "PassedButRunAborted", "NotRunnable",
        "NotExecuted", "Disconnected", "Warning", "Passed", "Completed", "InProgress", "Pending",
    }
    assert map_outcome(None) is Outcome.ERROR
    assert map_outcome("passed") is Outcome.ERROR  # the enum is case-sensitive; unknown is never a pass


@pytest.mark.parametrize(("classname", "name", "full"), [
    ("Ns.C", "M", "Ns.C.M"), ("Ns.C", "Ns.C.M(x: 1)", "Ns.C.M(x: 1)"),
    ("Ns.C", "Custom Name", "Ns.C.Custom Name"), (None, "[Cleanup Failure]", "[Cleanup Failure]"),
])
def test_qualified_name(classname: str | None, name: str, full: str) -> None:
    assert qualified_name(classname, name) == full


def test_hostile_digit_runs_do_not_raise() -> None:
    assert parse_duration("9" * 5000 + ":00:00") is None
    assert first_frame_location("   at A() in /x.cs:line " + "9" * 5000) == (None, None)


def test_hostile_one_line_stack_is_not_scanned_quadratically() -> None:
    # 1 MB of " /" on one line would take hours with a naive lazy match
    assert first_frame_location(" /" * 500_000 + "x") == (None, None)
    assert first_frame_location(" /" * 500_000 + ":line 1") == ("/ /" + " /" * 499_998, 1)
    assert first_frame_location((" /:line 1" * 100_000) + " x") == (None, None)
    assert first_frame_location(" /" * 500_000 + "\n   at A() in /x.cs:line 3") == ("/x.cs", 3)


def test_text_messages_and_stderr_follow_stdout_under_headings() -> None:
    (mstest_v1,) = cases(fixture(f"{MSTEST_PLUGIN}JENKINS-17506.trx"))
    assert mstest_v1.stdout == (
        "[messages]\ngiven RomanCalc object exists\nwhen args I and II are passed to the Add Method\n"
        "then III is returned"
    )
    (nunit,) = cases(fixture(f"{TRX2JUNIT}trx/nunit-with-stderr.trx"))
    assert nunit.stdout == "[stderr]\nmessage written to stderr"  # by eye from the file


def test_more_xunit_fail_echoes_than_failing_results_is_a_run_error() -> None:
    # synthetic: xUnit echoed two failures, but only one result made it into the file
    echo = '<RunInfo outcome="Error"><Text>[xUnit.net 00:00:01.00]     Ns.C.{} [FAIL]</Text></RunInfo>'
    result = parse_bytes(synthetic_trx(
        '<UnitTestResult testName="Ns.C.A" outcome="Failed"/>',
        tail=f'<ResultSummary outcome="Failed"><RunInfos>{echo.format("A")}{echo.format("B")}</RunInfos>'
             "</ResultSummary>",
    ))
    (error,) = result.run_errors
    assert error.message.startswith("xUnit reported 2 failed test(s) but the file holds 1 failing result(s)")
    assert "Ns.C.B [FAIL]" in error.message


@pytest.mark.parametrize("path", [
    f"{ALLURE}gh-749.trx",
    f"{MSTEST_PLUGIN}JENKINS-17506.trx",
    f"{TRX2JUNIT}trx/mstest-datadriven-no-failures.trx",
    f"{TRX2JUNIT}trx/nunit-with-stdout.trx",
    f"{TRX2JUNIT}trx/nunit-with-stderr.trx",
])
def test_failed_run_outcome_with_no_reason_is_only_a_note(path: str) -> None:
    # By eye: outcome="Failed", every result Passed, no RunInfos, run output only an adapter
    # banner. VSTest writes that for green runs (reference §0.12); a RunError would start a fix
    # attempt for nothing, so it is a note.
    result = fixture(path)
    assert result.run_errors == []
    assert result.counts is not None and result.counts.failed == 0
    assert any("gives no reason; not reported as a run error" in n for n in result.notes)
