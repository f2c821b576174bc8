"""Subtests in pytest console output, against real logs (tests/fixtures/pytest_console/subtests).

Three printers, one sample (see that folder's PROVENANCE.md): pytest 9's built-in subtests,
pytest-subtests 0.15 on pytest 8 and pytest-subtests 0.10 on pytest 7 (its summary lines carry
no description). Expected values were written by reading each log, not from our output.

How subtests are counted (issue 15, defect 9): as test cases of their own in the totals, the
way pytest's own JUnit XML of the same run counts them (`tests="23" failures="6"`). A failed
subtest is a failure named `node description`, as pytest's `-v` lines name it.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest

from ci_agent.parsers import parse_path, parse_stream
from ci_agent.parsers.pytest_console import PARSER
from ci_agent.parsers.pytest_lines import counts_line, split_subtest, subtest_summary_line
from ci_agent.report import Outcome, ParseResult, TestCounts
from tests.conftest import LOCAL_FIXTURES

FIXTURES = LOCAL_FIXTURES / "pytest_console" / "subtests"
CHECK = "tests/check_subtests.py"
F = Outcome.FAILED
Row = tuple[str, str | None, int | None, str | None]  # name, classname, line, first message line

EVEN = [(f"{CHECK}::TestParsing::test_even [case] (i={i})", "TestParsing", 12, "AssertionError: 1 != 0")
        for i in (1, 3, 5)]
SQUARE = (f"{CHECK}::test_squares [case 3] (i=3)", None, 18, "assert (3 * 3) != 9")
DIGITS = (f"{CHECK}::test_digits[2] (n=5)", None, 25,
          "ValueError: invalid literal for int() with base 2: '5'")
PLAIN = (f"{CHECK}::test_plain", None, 36, "assert (1 + 1) == 3")
# pytest 9 also fails the parent of a failed `subtests` subtest (not of a unittest subTest).
SQUARE_PARENT = (f"{CHECK}::test_squares", None, None, "contains 1 failed subtest")
DIGITS_PARENT = (f"{CHECK}::test_digits[2]", None, None, "contains 1 failed subtest")

SUMMARY_ORDER = [*EVEN, SQUARE, DIGITS, PLAIN]
# (failures in log order, counts from the log's final line)
EXPECTED: dict[str, tuple[list[Row], TestCounts]] = {
    # 6 failed, 5 passed, 1 skipped, 11 subtests passed
    "pytest8-subtests015.log": (SUMMARY_ORDER, TestCounts(23, 16, 6, 1)),
    "pytest8-subtests015-quiet.log": (SUMMARY_ORDER, TestCounts(23, 16, 6, 1)),
    # -v prints the `subtests` fixture's results first (unittest's subTest results are not printed)
    "pytest8-subtests015-verbose.log": ([SQUARE, DIGITS, PLAIN, *EVEN], TestCounts(23, 16, 6, 1)),
    # 6 failed, 5 passed, 1 skipped, 8 subtests passed; `SUBFAIL node` lines name no subtest:
    # each takes its description from the next block of that test
    "pytest7-subtests010.log": (SUMMARY_ORDER, TestCounts(20, 13, 6, 1)),
    # 8 failed, 3 passed (passed and skipped subtests are only counted under -v)
    "pytest9-builtin.log": (
        [*EVEN, SQUARE, SQUARE_PARENT, DIGITS, DIGITS_PARENT, PLAIN], TestCounts(11, 3, 8, 0)
    ),
    # 8 failed, 3 passed, 1 skipped, 11 subtests passed
    "pytest9-builtin-verbose.log": (
        [SQUARE, SQUARE_PARENT, DIGITS, DIGITS_PARENT, PLAIN, *EVEN], TestCounts(23, 14, 8, 1)
    ),
}


def rows(result: ParseResult) -> list[Row]:
    return [(f.name, f.classname, f.line, f.message.splitlines()[0] if f.message else None)
            for f in result.failures]


def parse_text(text: str) -> ParseResult:
    return parse_stream(io.BytesIO(text.encode("utf-8")), "inline.log", "pytest_console")


def junit_totals(name: str) -> TestCounts:
    """What pytest's own --junitxml of the same run says, from its <testsuite> attributes."""
    suite = ET.parse(FIXTURES / name).getroot().find("testsuite")
    assert suite is not None
    total, failed, errors, skipped = (int(suite.get(k, "0"))
                                      for k in ("tests", "failures", "errors", "skipped"))
    return TestCounts(total, total - failed - errors - skipped, failed + errors, skipped)


def test_every_subtest_fixture_log_is_covered() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.log")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_failed_subtests_are_failures_with_their_description_and_counts_add_up(name: str) -> None:
    failures, counts = EXPECTED[name]
    result = parse_path(FIXTURES / name)
    assert result.format == "pytest_console"
    assert rows(result) == failures
    assert all(f.outcome is F and f.file == CHECK for f in result.failures)
    assert result.counts == counts
    assert result.counts is not None and result.counts.failed == len(result.failures)


def test_counts_are_those_of_pytests_junit_xml_of_the_same_run() -> None:
    # pytest-subtests: the console line and the XML agree to the test.
    assert junit_totals("pytest8-subtests015.xml") == TestCounts(23, 16, 6, 1)
    assert parse_path(FIXTURES / "pytest8-subtests015.log").counts == junit_totals("pytest8-subtests015.xml")
    # pytest 9 prints passed subtests only under -v; without it the failures still agree.
    quiet = parse_path(FIXTURES / "pytest9-builtin.log").counts
    assert quiet is not None and quiet.failed == junit_totals("pytest9-builtin.xml").failed == 8
    assert parse_path(FIXTURES / "pytest9-builtin-verbose.log").counts == junit_totals("pytest9-builtin.xml")


@pytest.mark.parametrize(
    ("line", "counts"),
    [
        ("1 failed, 26 passed, 80 subtests passed in 3.21s", TestCounts(107, 106, 1, 0)),
        ("= 2 failed, 3 subtests failed in 0.50s =", TestCounts(5, 0, 5, 0)),
        ("1 passed, 2 subtests xfailed, 1 subtests xpassed, 1 subtests skipped in 1.00s",
         TestCounts(5, 2, 0, 3)),
        ("1 failed, 26 passed, 80 subtests passed, 2 warnings in 3.21s (0:00:03)",
         TestCounts(107, 106, 1, 0)),
    ],
)
def test_subtest_words_of_the_counts_line_count(line: str, counts: TestCounts) -> None:
    assert counts_line(line.strip("= ")) == counts
    assert parse_text(f"===== {line.strip('= ')} =====").counts == counts


@pytest.mark.parametrize(
    ("line", "node", "description", "message"),
    [
        ("SUBFAILED[case 3] (i=3) tests/a.py::test_x - assert 9 != 9",
         "tests/a.py::test_x", "[case 3] (i=3)", "assert 9 != 9"),
        ("SUBFAILED(<subtest>) tests/a.py::T::test_x[p - q] - boom", "tests/a.py::T::test_x[p - q]",
         "(<subtest>)", "boom"),
        ("[a::b - c] (s='x y') SUBFAIL tests/a.py::test_x - E", "tests/a.py::test_x",
         "[a::b - c] (s='x y')", "E"),
        ("SUBFAIL tests/a.py::test_x", "tests/a.py::test_x", None, None),
    ],
)
def test_subtest_summary_dialects(line: str, node: str, description: str | None, message: str | None) -> None:
    found = subtest_summary_line(line)
    assert found is not None
    assert (found.node, found.description, found.message) == (node, description, message)


@pytest.mark.parametrize(
    "line",
    ["SUBFAILED", "SUBFAIL to build", "SUBFAILED[x] no node here - boom", "ran SUBFAIL tests", "SUBFAIL ::x",
     "SUBFAILED" + " x" * 50_000, " SUBFAIL " * 20_000, "tests/a.py::t SUBFAIL" + " " * 50_000,
     "SUBFAIL" + " " * 65_000 + "x"],
    ids=lambda s: s[:30],
)
@pytest.mark.timeout(10)  # a long run of spaces once made the `-v` line search quadratic (30 s)
def test_hostile_subtest_lines_yield_no_failure(line: str) -> None:
    consumer = PARSER.consumer("hostile.log")
    consumer.feed(line)
    assert consumer.finish().failures == []


def test_split_subtest_keeps_spaces_inside_parameter_ids() -> None:
    assert split_subtest("a.py::t[x y] [case 3] (i=3)") == ("a.py::t[x y]", "[case 3] (i=3)")
    assert split_subtest("T.test_b[p] (n=1.5)") == ("T.test_b[p]", "(n=1.5)")
    assert split_subtest("a.py::t[unbalanced x") == ("a.py::t[unbalanced x", None)
    assert split_subtest("a.py::t") == ("a.py::t", None)


def test_a_subtest_block_without_summary_line_is_named_from_its_title() -> None:
    # The real pytest-subtests log without its short summary (as with `-r N`): node ids are
    # rebuilt from the block title and its first frame; the description stays whole.
    lines = (FIXTURES / "pytest8-subtests015.log").read_text().splitlines()
    kept = [line for line in lines if " SUBFAIL " not in line and not line.startswith("FAILED ")]
    result = parse_text("\n".join(kept))
    assert rows(result) == SUMMARY_ORDER


def test_a_description_with_dots_and_colons_is_not_taken_for_the_class() -> None:
    text = (
        "=== FAILURES ===\n"
        "___ test_ratio (x=1.5, y='a::b') ___\n"
        "E   assert False\n"
        "tests/a.py:7: AssertionError\n"
        "=== 1 failed, 1 passed, 2 subtests passed in 0.01s ===\n"
    )
    (case,) = parse_text(text).failures
    assert (case.name, case.classname, case.line) == ("tests/a.py::test_ratio (x=1.5, y='a::b')", None, 7)
