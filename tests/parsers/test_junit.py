"""JUnit XML parser: real files from the shared corpus, checked against EnricoMi's and dorny's
expected outputs, plus hostile inputs. Where we differ from a peer on purpose, the test says why."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import pytest

from ci_agent.parsers import parse_path, parse_stream
from ci_agent.parsers.junit import PARSER, UNNAMED
from ci_agent.parsers.xmlresults import MAX_STDOUT_CHARS
from ci_agent.report import Outcome, ParseResult, TestCase, TestCounts
from tests.conftest import LOCAL_FIXTURES, SHARED_FIXTURES
from tests.parsers.xmlresults_oracles import (
    DORNY,
    ENRICOMI,
    assert_counts_match_cases,
    dorny_snapshots,
    enricomi_inputs,
    enricomi_results,
)

SUREFIRE = LOCAL_FIXTURES / "junit" / "surefire-rerun"
LIQUID = SHARED_FIXTURES / "other/LiquidTestReports/test/LiquidTestReports.Cli.Tests/JUnitTestInput"
_JUNIT_ROOT_RE = re.compile(rb"<testsuites?[\s>/]")


def _dorny_junit_inputs() -> list[Path]:
    return sorted(
        p for p in (DORNY / "fixtures").rglob("*.xml") if _JUNIT_ROOT_RE.search(p.read_bytes()[:4096])
    )


ALL_INPUTS = [
    *sorted((ENRICOMI / "junit-xml").rglob("*.xml")),
    *_dorny_junit_inputs(),
    *sorted(LIQUID.glob("*.xml")),
    *sorted(SUREFIRE.glob("*.xml")),
]


def _id(path: Path) -> str:
    return str(path.relative_to(path.parents[2]))


def _junit(relative: str, keep_cases: bool = True) -> ParseResult:
    result = parse_path(ENRICOMI / "junit-xml" / relative, keep_cases=keep_cases)
    assert result.format == "junit"
    return result


def _case(cases: list[TestCase] | None, name: str) -> TestCase:
    assert cases is not None
    (found,) = [c for c in cases if c.name == name]
    return found


def test_the_corpus_is_there() -> None:
    assert len(ALL_INPUTS) >= 55


@pytest.mark.parametrize("path", ALL_INPUTS, ids=_id)
def test_every_input_parses_through_the_registry_without_raising(path: Path) -> None:
    result = parse_path(path, keep_cases=True)
    if path.name == "non-junit.xml":  # root <suites>: not JUnit, so not ours (sniffing is by root)
        assert result.format == "unknown" and result.run_errors
        return
    assert result.format == "junit"
    assert_counts_match_cases(result)  # JUnit has no inconclusive


# --- EnricoMi .results: per case, in file order ---------------------------------------------

_ENRICOMI_OUTCOME = {
    "success": Outcome.PASSED,
    "failure": Outcome.FAILED,
    "error": Outcome.ERROR,
    "skipped": Outcome.SKIPPED,
    "disabled": Outcome.SKIPPED,  # tst's status="disabled": not run, so skipped for us
}
# EnricoMi keeps a case only if it has a name or a classname (#91); we keep every <testcase>.
_ENRICOMI_DROPS_NAMELESS = {"no-attributes.xml"}


@pytest.mark.parametrize("path", enricomi_inputs("junit-xml"), ids=_id)
def test_cases_match_enricomi_results(path: Path) -> None:
    oracle = enricomi_results(path)
    expected = oracle["cases"]
    result = parse_path(path, keep_cases=True)
    if oracle["errors"]:  # non-junit.xml: EnricoMi says "Invalid format"; we say it is not JUnit
        assert expected == [] and result.run_errors and not result.failures
        return
    if path.name in _ENRICOMI_DROPS_NAMELESS:
        assert expected == []
        assert result.counts == TestCounts(total=4, passed=1, failed=2, skipped=1)
        return
    assert result.cases is not None
    assert len(result.cases) == len(expected)
    for ours, theirs in zip(result.cases, expected, strict=True):
        assert ours.name == theirs["test_name"]
        assert ours.classname == (theirs["class_name"] or None)  # jest-junit writes classname=""
        assert ours.outcome is _ENRICOMI_OUTCOME[theirs["result"]]
        assert ours.message == theirs["message"]
        assert ours.file == theirs["test_file"]
        assert ours.line == theirs["line"]
        assert ours.duration_s == theirs["time"]


def test_suite_counts_without_test_cases_make_no_phantom_tests() -> None:
    # EnricoMi PR #233: <testsuite tests="6" failures="1" skipped="2"> with no <testcase>.
    result = _junit("no-cases-but-tests.xml")
    assert enricomi_results(ENRICOMI / "junit-xml/no-cases-but-tests.xml")["suite_tests"] == 6
    assert result.counts == TestCounts()
    assert result.failures == [] and result.run_errors == []
    assert result.notes == ["the file declares 6 test(s); counted 0 test case(s)"]


# --- dorny snapshots: counts by result and the failing names ---------------------------------

_DORNY_OUTCOMES = {"success": "passed", "failed": "failed", "skipped": "skipped"}


def _words(text: str) -> str:
    # XML normalises newlines in attribute values to spaces (xml2js keeps them) and dorny trims.
    return " ".join(text.split())


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in _dorny_junit_inputs()
        if f"fixtures/{p.relative_to(DORNY / 'fixtures')}" in dorny_snapshots()
    ],
    ids=_id,
)
def test_counts_and_failing_names_match_dorny_snapshots(path: Path) -> None:
    expected = dorny_snapshots()[f"fixtures/{path.relative_to(DORNY / 'fixtures')}"]
    result = parse_path(path, keep_cases=True)
    assert result.cases is not None
    ours = Counter("failed" if c.outcome.is_failure else c.outcome.value for c in result.cases)
    assert ours == Counter(_DORNY_OUTCOMES[c.result] for c in expected)
    shape = _dorny_display_name if path.parent.name == "nette-tester" else _words
    assert sorted(shape(c.name) for c in result.failures) == sorted(
        _words(c.name) for c in expected if c.result == "failed"
    )


def _dorny_display_name(name: str) -> str:
    # dorny's tester-junit parser shows a Nette Tester case by its file name without the folder.
    return _words(name).rsplit("/", 1)[-1]


def test_snapshot_oracle_covers_the_dorny_junit_files() -> None:
    covered = [
        p
        for p in _dorny_junit_inputs()
        if f"fixtures/{p.relative_to(DORNY / 'fixtures')}" in dorny_snapshots()
    ]
    assert len(covered) >= 18


# --- behaviour, case by case -------------------------------------------------------------------


def test_nested_suites_are_flattened_at_every_depth() -> None:
    # EnricoMi #107 / dorny PR #701 lost nested cases; TestCase3 sits three suites deep,
    # TestCase5 directly in the outer suite beside the nested ones.
    result = _junit("testsuite-in-testsuite.xml")
    assert result.cases is not None
    assert [c.name for c in result.cases] == ["TestCase1", "TestCase2", "TestCase3", "TestCase4", "TestCase5"]
    assert result.counts == TestCounts(total=5, passed=5)


def test_the_most_severe_of_several_results_wins() -> None:
    result = _junit("junit.multiresult.xml")
    errors = _case(result.cases, "test that errors")  # <skipped/> + <failure> + <error>
    assert errors.outcome is Outcome.ERROR
    assert errors.message == "test teardown failure"
    assert errors.stack == "stdout\nAssertion failed"  # every failing body, worst first
    assert _case(result.cases, "test that fails").outcome is Outcome.FAILED  # <skipped/> + <failure>
    assert result.counts == TestCounts(total=4, passed=1, failed=2, skipped=1)


def test_an_empty_failure_element_is_still_a_failure() -> None:
    result = _junit("minimal-attributes.xml")
    failed = _case(result.cases, "failed_test")
    assert failed.outcome is Outcome.FAILED
    assert failed.message is None and failed.stack is None and failed.duration_s is None
    assert _case(result.cases, "error_test").outcome is Outcome.ERROR


def test_missing_name_classname_and_time_are_tolerated() -> None:
    result = _junit("no-attributes.xml")
    assert result.cases is not None
    assert all(c.name == UNNAMED and c.classname is None and c.duration_s is None for c in result.cases)
    assert [c.outcome for c in result.cases] == [
        Outcome.PASSED,
        Outcome.SKIPPED,
        Outcome.FAILED,
        Outcome.ERROR,
    ]


def test_file_line_message_and_stack_come_from_the_file() -> None:
    result = _junit("pytest/junit.fail.xml", keep_cases=False)
    (failure,) = result.failures
    assert (failure.classname, failure.name) == ("test.test_spark.SparkTests", "test_rsh_events")
    assert (failure.file, failure.line, failure.duration_s) == ("test/test_spark.py", 819, 7.541)
    assert failure.message is not None and failure.message.startswith("self = <test_spark.SparkTests")
    assert failure.stack is not None and "AssertionError: 143 != 0" in failure.stack


def test_without_a_message_attribute_the_first_body_line_is_the_message() -> None:
    # jest-junit writes no message attribute; the body starts with the error line.
    result = parse_path(DORNY / "fixtures/jest-junit.xml")
    first = result.failures[0]
    assert first.name == "Failing test"
    assert first.message == "Error: expect(received).toBeTruthy()"
    assert first.stack is not None and first.stack.startswith(
        "Error: expect(received).toBeTruthy()\n\nReceived: false"
    )


def test_system_out_is_kept_per_case() -> None:
    result = parse_path(DORNY / "fixtures/external/phpunit/phpcheckstyle-phpunit.xml")
    other = next(f for f in result.failures if f.name == "testOther")
    assert other.stdout is not None and other.stdout.startswith('File "./test/sample/bad_other.php" warning')


def test_status_disabled_counts_as_skipped() -> None:
    result = _junit("tst/disabled.xml")
    assert result.counts == TestCounts(total=31, passed=6, failed=20, skipped=5)
    assert _case(result.cases, "disabled_test").outcome is Outcome.SKIPPED


def test_entities_and_non_bmp_characters_are_decoded() -> None:
    entities = _junit("with-xml-entities.xml")
    amp = _case(entities.cases, "Test with & in the test name")
    assert (amp.outcome, amp.message, amp.stack) == (Outcome.ERROR, "A message with &", "Content with &")
    unicode = _junit("unsupported-unicode.xml")
    assert (
        _case(unicode.cases, "test 4").message == "Some unsupported unicode characters: 헴䜝헱홐㣇㿷䔭𒍺𡓿𠄉㦓"
    )


# --- Surefire reruns (local real fixtures, see tests/fixtures/junit/PROVENANCE.md) ------------


def test_flaky_failure_that_passed_on_rerun_is_a_pass_with_a_note() -> None:
    # EnricoMi #539 / #604: flaky tests reported as failures. Surefire says it passed on rerun.
    result = parse_path(SUREFIRE / "TEST-com.github.pihme.jenkinstestbed.module1.FlakyTest.xml")
    assert result.counts == TestCounts(total=1, passed=1)
    assert result.failures == [] and result.run_errors == []
    assert "1 flaky test(s) failed first and passed on a rerun (counted as passed): flakyTest" in result.notes
    assert "the file declares 2 test(s); counted 1 test case(s)" in result.notes  # Surefire counts runs


def test_a_test_failing_every_rerun_is_one_failure() -> None:
    result = parse_path(SUREFIRE / "TEST-com.github.pihme.jenkinstestbed.module1.FailingTest.xml")
    assert result.counts == TestCounts(total=1, failed=1)
    (failure,) = result.failures
    assert failure.name == "failAlways" and failure.message == "null"
    assert failure.stack is not None and failure.stack.startswith("java.lang.AssertionError: null")
    assert failure.stdout == "Failing test\n"
    assert not any("flaky" in note for note in result.notes)


# --- hostile and broken input ------------------------------------------------------------------


def test_truncated_file_keeps_what_was_read_and_says_where_it_broke() -> None:
    # EnricoMi rejects the whole file (corrupt-xml.exception); we keep the case before the cut
    # and, read in recover mode, the skipped case the cut went through.
    path = ENRICOMI / "junit-xml/pytest/corrupt-xml.xml"
    assert "Premature end of data" in path.with_suffix(".exception").read_text(encoding="utf-8")
    result = parse_path(path, keep_cases=True)
    assert result.counts == TestCounts(total=2, passed=1, skipped=1)
    (error,) = result.run_errors
    assert error.source == str(path)
    assert error.message.startswith(
        "truncated or malformed XML at line 11: Premature end of data in tag skipped"
    )


def test_a_large_real_file_cut_in_half() -> None:
    data = (DORNY / "fixtures/external/java/pulsar-test-report.xml").read_bytes()
    result = parse_stream(io.BytesIO(data[: len(data) // 2]), "half.xml", keep_cases=True)
    assert result.format == "junit"
    assert result.counts is not None and 0 < result.counts.total < 808
    assert len(result.run_errors) == 1 and result.run_errors[0].message.startswith(
        "truncated or malformed XML at line "
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("empty.xml", "the file is empty: no XML to read"),
        ("non-xml.xml", "truncated or malformed XML at line 1: Start tag expected, '<' not found"),
    ],
)
def test_inputs_enricomi_rejects_give_a_run_error_when_read_as_junit(name: str, message: str) -> None:
    # Through sniffing these are not XML at all (the registry's business); forced to junit, we
    # must still answer with a clear RunError rather than an exception.
    assert (ENRICOMI / "xml" / name).with_suffix(".exception").exists()
    result = parse_path(ENRICOMI / "xml" / name, forced="junit")
    assert result.counts == TestCounts()
    assert [e.message for e in result.run_errors] == [message]


def test_inputs_enricomi_rejects_do_not_raise_through_sniffing() -> None:
    empty = parse_path(ENRICOMI / "xml/empty.xml")
    assert [e.message for e in empty.run_errors] == ["the file is empty"]
    not_xml = parse_path(ENRICOMI / "xml/non-xml.xml")  # no '<': sniffed as a log, not as XML
    assert not_xml.format not in ("junit", "nunit", "xunit", "trx") and not_xml.failures == []


def test_a_non_junit_root_is_refused_when_forced() -> None:
    result = parse_path(ENRICOMI / "junit-xml/non-junit.xml", forced="junit")
    assert [e.message for e in result.run_errors] == [
        "root element <suites> is not JUnit XML (expected <testsuites> or <testsuite>)"
    ]


def _lol_bomb() -> bytes:
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE testsuites [{entities}]>\n'
        '<testsuites><testsuite name="s"><testcase name="a"><failure message="&lol9;">&lol9;</failure>'
        "</testcase></testsuite></testsuites>"
    ).encode()


def test_billion_laughs_is_refused_not_expanded() -> None:
    result = parse_stream(io.BytesIO(_lol_bomb()), "bomb.xml")
    assert result.format == "junit"
    assert len(result.run_errors) == 1 and "malformed XML" in result.run_errors[0].message
    assert "lollollol" not in repr(result)


def _nested(depth: int) -> bytes:
    return (
        b"<testsuites>"
        + b"<testsuite>" * depth
        + b'<testcase name="deep"/>'
        + b"</testsuite>" * depth
        + b"</testsuites>"
    )


def test_deep_nesting_within_the_parser_limit_is_read() -> None:
    result = parse_stream(io.BytesIO(_nested(1000)), "deep.xml", keep_cases=True)
    assert result.counts == TestCounts(total=1, passed=1) and result.run_errors == []


def test_ten_thousand_levels_do_not_blow_the_stack() -> None:
    # libxml2 stops at its depth limit: a RunError, never a RecursionError or a crash.
    result = parse_stream(io.BytesIO(_nested(10_000)), "deeper.xml")
    assert result.format == "junit"
    assert len(result.run_errors) == 1 and "Excessive depth" in result.run_errors[0].message


def test_illegal_control_characters_are_repaired_and_noted() -> None:
    doc = (
        b'<testsuites><testsuite><testcase name="a\x01b"><failure message="x&#x1;y"/>'
        b"</testcase></testsuite></testsuites>"
    )
    result = parse_stream(io.BytesIO(doc), "ctl.xml")
    (failure,) = result.failures
    assert failure.name == "ab" and failure.message == "x\ufffdy"
    assert result.notes == ["replaced 2 character(s) that are illegal in XML 1.0"]


def test_huge_system_out_is_bounded_to_its_tail() -> None:
    out = "x" * 1_000_000 + "THE END"
    doc = f'<testsuite><testcase name="t"><failure/><system-out>{out}</system-out></testcase></testsuite>'
    (failure,) = PARSER.parse(io.BytesIO(doc.encode()), "big.xml").failures
    assert failure.stdout is not None and failure.stdout.endswith("THE END")
    assert len(failure.stdout) < MAX_STDOUT_CHARS + 100


def test_utf16_files_read_like_utf8() -> None:
    # Windows tools write UTF-16 with a BOM; the same real file transcoded must parse the same.
    path = ENRICOMI / "junit-xml/unsupported-unicode.xml"
    text = path.read_text(encoding="utf-8").replace('encoding="utf-8"', 'encoding="utf-16"', 1)
    assert 'encoding="utf-16"' in text
    utf16 = parse_stream(io.BytesIO(text.encode("utf-16")), "utf16.xml", keep_cases=True)
    utf8 = parse_path(path, keep_cases=True)
    assert utf16.format == "junit" and utf16.run_errors == []
    assert utf16.cases == utf8.cases and utf16.counts == utf8.counts


def test_namespaced_elements_are_read_by_local_name() -> None:
    doc = (
        b'<j:testsuites xmlns:j="urn:x"><j:testsuite><j:testcase name="t"><j:error message="boom"/>'
        b"</j:testcase></j:testsuite></j:testsuites>"
    )
    result = parse_stream(io.BytesIO(doc), "ns.xml")
    assert result.format == "junit"
    assert [(f.name, f.outcome, f.message) for f in result.failures] == [("t", Outcome.ERROR, "boom")]


def test_a_failure_outside_any_test_case_is_a_run_error() -> None:
    doc = b'<testsuite name="S"><error message="could not load class"/><testcase name="t"/></testsuite>'
    result = PARSER.parse(io.BytesIO(doc), "suite.xml")
    assert result.counts == TestCounts(total=1, passed=1)
    assert [e.message for e in result.run_errors] == [
        "suite S reported a error outside any test case: could not load class"
    ]
