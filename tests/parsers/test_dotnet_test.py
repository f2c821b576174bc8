"""dotnet_test parser: conformance on the shared corpus, every real fixture in
tests/fixtures/dotnet_test (expected values read from the samples, see PROVENANCE.md), and hostile input.

Unit-test lines are real (copied from the fixtures or quoted public output) unless a comment says
they were shaped after a printer's resource string.
"""

# ruff: noqa: E501  (real log lines are long)
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci_agent.envelope import HEAD_BYTES, decode_head, iter_log_lines
from ci_agent.parsers import LOG_PARSERS, dotnet_test, parse_path, parse_stream, sniff
from ci_agent.parsers.dotnet_test import PARSER
from ci_agent.parsers.dotnet_test_lines import MAX_BLOCK_LINES, mtp_result, parse_duration, vs_result
from ci_agent.report import Outcome, ParseResult, TestCounts
from tests.conftest import LOCAL_FIXTURES, shared_fixture

FIXTURES = LOCAL_FIXTURES / "dotnet_test"
SHARED_TEST_LOGS = ("dotnet-logs/vstest-xunit-7-failures-utf16.log", "dotnet-logs/dotnet-test-build-errors-then-passed.log")


def feed(*lines: str) -> ParseResult:
    consumer = PARSER.consumer("test.log")
    for line in lines:
        consumer.feed(line)
    return consumer.finish()


def lines_of(path: Path) -> list[str]:
    with open(path, "rb") as fh:
        return list(iter_log_lines(fh))


def first_line(text: str | None) -> str | None:
    return text.splitlines()[0].strip() if text else None


# -- conformance: the shared corpus --------------------------------------------------------------

@pytest.mark.parametrize("relative", SHARED_TEST_LOGS)
def test_shared_logs_match_expected_failed_tests_and_summary(relative: str) -> None:
    path = shared_fixture(relative)
    expected = json.loads(Path(f"{path}.expected.json").read_text(encoding="utf-8"))
    result = parse_path(path)
    got = [(f.name, first_line(f.message)) for f in result.failures if f.outcome.is_failure]
    assert got == [(t["name"], t["message_first_line"]) for t in expected["failed_tests"]]
    summary = expected["test_summary"]
    assert result.counts == TestCounts(summary["total"], summary["passed"], summary["failed"], summary["skipped"])


def test_shared_xunit_log_keeps_whole_stack_and_message() -> None:
    result = parse_path(shared_fixture(SHARED_TEST_LOGS[0]))
    first = result.failures[0]
    assert first.message == "System.NullReferenceException : Object reference not set to an instance of an object."
    assert first.stack is not None and first.stack.splitlines() == [
        r"at PvpAnalytics.Tests.Auth.IdentityServiceUnitTests.GenerateSecureRefreshToken_ProducesHashMatchingComputeRefreshTokenHash() in C:\Users\User\Documents\GitHub\PvpAnalytics\Tests\PvpAnalytics.Tests\Auth\IdentityServiceUnitTests.cs:line 52",
        "at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments, Signature sig, Boolean isConstructor)",
        "at System.Reflection.MethodBaseInvoker.InvokeWithNoArgs(Object obj, BindingFlags invokeAttr)",
    ]
    assert first.duration_s == pytest.approx(0.039)
    # async traces keep their `--- End of stack trace ---` separators (printed at column 0)
    assert "--- End of stack trace from previous location ---" in (result.failures[1].stack or "")


def test_build_errors_then_passed_is_not_all_green_for_us_to_decide() -> None:
    """We report what the test runner said (23 passed); the CS1061 errors are the msbuild parser's."""
    result = parse_path(shared_fixture(SHARED_TEST_LOGS[1]))
    assert not [f for f in result.failures if f.outcome.is_failure]
    assert result.counts == TestCounts(23, 23, 0, 0)


# -- conformance: our real fixtures --------------------------------------------------------------

@dataclass(frozen=True)
class Expect:
    failures: tuple[tuple[str, str], ...]  # (name as printed, first line of the message)
    counts: TestCounts | None
    run_error: str | None = None
    where: tuple[tuple[str, int], ...] = ()  # (file, line) per failure, terminal-logger only


NUNIT_TL = r"D:\DotnetTokenKiller\samples\SampleApp.Tests.NUnit\FailingTests.cs"
MSTEST_TL = r"D:\DotnetTokenKiller\samples\SampleApp.Tests.MSTest\FailingTests.cs"
MSTEST_MTP_MSG = "Assert.AreEqual failed. Expected:<-1>. Actual:<1>. 'expected' expression: 'expected', 'actual' expression: 'actual'."
XUNIT_FAILING = ("MyFirstUnitTests.UnitTest1.FailingTest", "Assert.Equal() Failure: Values differ")
XUNIT_THEORY = ("MyFirstUnitTests.UnitTest1.MyFirstTheory(value: 6)", "Assert.True() Failure")

EXPECTED: dict[str, Expect] = {
    "vstest-nunit-one-failure.txt": Expect((("Test1", "Expected: False"),), TestCounts(1, 0, 1, 0)),
    "vstest-xunit-fail-lines.txt": Expect((XUNIT_FAILING, XUNIT_THEORY), TestCounts(5, 3, 2, 0)),
    "vstest-two-assemblies-passed.txt": Expect((), TestCounts(2, 2, 0, 0)),
    "vstest-ptbr-passed.txt": Expect((), TestCounts(15, 15, 0, 0)),
    "vstest-ptbr-failed-summary.txt": Expect((), TestCounts(15, 8, 7, 0)),
    "tl-testerror-xunit-inline.txt": Expect((XUNIT_THEORY, XUNIT_FAILING), TestCounts(5, 3, 2, 0),
                                            where=(("UnitTest1.cs", 28), ("UnitTest1.cs", 14))),
    "tl-testerror-nunit.txt": Expect(
        (("SampleApp.Tests.NUnit.FailingTests.Equality_Fails", "Assert.That(actual, Is.EqualTo(expected))"),
         ("SampleApp.Tests.NUnit.FailingTests.Collection_Should_Contain_Missing_Item", 'Assert.That(list, Does.Contain("delta"))'),
         ("SampleApp.Tests.NUnit.FailingTests.Unexpected_Exception", "System.InvalidOperationException : Intentional exception from NUnit test")),
        TestCounts(8, 5, 3, 0), where=((NUNIT_TL, 11), (NUNIT_TL, 18), (NUNIT_TL, 25))),
    "tl-testerror-mstest.txt": Expect(
        (("SampleApp.Tests.MSTest.FailingTests.Equality_Fails", "Assert.AreEqual failed. Expected:<100>. Actual:<42>."),
         ("SampleApp.Tests.MSTest.FailingTests.Null_Check_Fails", "Assert.IsNotNull failed."),
         ("SampleApp.Tests.MSTest.FailingTests.Wrong_Exception_Type", "Test method threw exception System.InvalidOperationException, but exception System.ArgumentException was expected. Exception message: Thrown intentionally.")),
        TestCounts(8, 5, 3, 0), where=((MSTEST_TL, 11), (MSTEST_TL, 18), (MSTEST_TL, 24))),
    "tl-summary-norwegian-semicolon.txt": Expect((), TestCounts(1, 1, 0, 0)),
    "mtp-xunitv3-two-assemblies.log": Expect(
        (("HPRobot.Mcp.Server.Tests.SeedExecutionTests.Timeout_InformsModelThatChangesMayHavePersisted", "Assert.True() Failure"),),
        TestCounts(294, 293, 1, 0)),
    "mtp-xunitv3-single-assembly.txt": Expect((XUNIT_FAILING, XUNIT_THEORY), TestCounts(5, 3, 2, 0)),
    "mtp-vstest-bridge-msbuild-summary.txt": Expect((), TestCounts(5, 3, 2, 0)),
    "mtp-mstest-one-failure.txt": Expect((("Parse_Negative_ReturnsValue", MSTEST_MTP_MSG),), TestCounts(3, 2, 1, 0)),
    "mtp-mstest-multiproject-skipped.txt": Expect((("Parse_Negative_ReturnsValue", MSTEST_MTP_MSG),), TestCounts(7, 5, 1, 1)),
    "mtp-zero-tests-ran.txt": Expect((), TestCounts(0, 0, 0, 0), run_error="non-success exit code 8"),
}


def test_every_fixture_has_expectations() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.name != "PROVENANCE.md"}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_through_registry(name: str) -> None:
    expect = EXPECTED[name]
    result = parse_path(FIXTURES / name)  # registry + sniffing + envelope, as the CLI does it
    failures = [f for f in result.failures if f.outcome.is_failure]
    assert [(f.name, first_line(f.message)) for f in failures] == list(expect.failures)
    assert all(f.outcome is Outcome.FAILED for f in failures)
    assert result.counts == expect.counts
    ours = [e.message for e in result.run_errors if "exit code" in e.message or "abort" in e.message.lower()]
    if expect.run_error is None:
        assert ours == []
    else:
        assert len(ours) == 1 and expect.run_error in ours[0]
    if expect.where:
        assert [(f.file, f.line) for f in failures] == list(expect.where)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_sniffs_as_dotnet_test(name: str) -> None:
    head = (FIXTURES / name).read_bytes()[:HEAD_BYTES]
    assert "dotnet_test" in sniff(head).formats


def test_plain_build_log_does_not_sniff_as_dotnet_test() -> None:
    """The parser's own sniff says no to a build log; the registry still runs it beside msbuild
    (the .NET family, see test_registry), which costs little and finds nothing here."""
    head = shared_fixture("dotnet-logs/cs-errors-multi-win.log").read_bytes()[:HEAD_BYTES]
    assert not LOG_PARSERS["dotnet_test"].sniff(decode_head(head))
    result = parse_path(shared_fixture("dotnet-logs/cs-errors-multi-win.log"))
    assert result.failures == [] and result.counts is None


def test_vstest_message_keeps_unindented_continuations() -> None:
    """VSTest indents only the first message line; xUnit's `Expected:`/`Actual:` follow at column 0."""
    failing = parse_path(FIXTURES / "vstest-xunit-fail-lines.txt").failures[0]
    assert failing.message == "Assert.Equal() Failure: Values differ\nExpected: 5\nActual:   4"
    assert failing.stack == "at MyFirstUnitTests.UnitTest1.FailingTest() in UnitTest1.cs:line 14"
    assert failing.duration_s == pytest.approx(0.011)


def test_nunit_message_is_nunits_own_text() -> None:
    """NUnit's message is `  Expected: False\\n  But was:  True`; VSTest adds 3 spaces to line one only."""
    test1 = parse_path(FIXTURES / "vstest-nunit-one-failure.txt").failures[0]
    assert test1.message == "  Expected: False\n  But was:  True"
    assert test1.stack == r"at ProfilesAppTests.Tests.Test1() in c:\dev\platfom-test-se2\ProfilesAppTests\UnitTest1.cs:line 15"


def test_terminal_logger_body_separates_message_and_stack() -> None:
    equality = parse_path(FIXTURES / "tl-testerror-nunit.txt").failures[0]
    assert equality.message == "Assert.That(actual, Is.EqualTo(expected))\n  Expected: 100\n  But was:  42"
    assert equality.stack is not None and equality.stack.splitlines()[0] == (
        r"at SampleApp.Tests.NUnit.FailingTests.Equality_Fails() in D:\DotnetTokenKiller\samples\SampleApp.Tests.NUnit\FailingTests.cs:line 11")
    assert equality.duration_s == pytest.approx(0.005)
    inline = parse_path(FIXTURES / "tl-testerror-xunit-inline.txt").failures[0]
    assert inline.message == "Assert.True() Failure\nExpected: True\nActual:   False"
    assert inline.stack == "at MyFirstUnitTests.UnitTest1.MyFirstTheory(Int32 value) in UnitTest1.cs:line 28"


def test_mtp_message_printed_twice_is_kept_once() -> None:
    """Newer MTP prints the message before and after `from <dll>`; the first copy loses its indentation."""
    failure = parse_path(FIXTURES / "mtp-xunitv3-two-assemblies.log").failures[0]
    assert failure.message == "Assert.True() Failure\nExpected: True\nActual:   False"
    assert failure.stack is not None
    assert failure.stack.splitlines()[-1] == "--- End of stack trace from previous location ---"
    assert len(failure.stack.splitlines()) == 3
    assert failure.duration_s == pytest.approx(0.231)


def test_xunit_fail_lines_count_only_when_vstest_is_silent() -> None:
    """Quiet console logger: only xUnit's own [FAIL] blocks are printed (lines from the TL fixture)."""
    xunit_lines = [x for x in lines_of(FIXTURES / "tl-testerror-xunit-inline.txt") if x.startswith("[xUnit.net")]
    result = feed(*xunit_lines)
    assert [(f.name, first_line(f.message)) for f in result.failures] == [XUNIT_THEORY, XUNIT_FAILING]
    assert result.failures[0].message == "Assert.True() Failure\nExpected: True\nActual:   False"
    assert result.failures[0].stack == "UnitTest1.cs(28,0): at MyFirstUnitTests.UnitTest1.MyFirstTheory(Int32 value)"
    assert result.counts is None


def test_two_runs_in_one_log_sum_their_summaries() -> None:
    both = lines_of(FIXTURES / "tl-testerror-nunit.txt") + lines_of(FIXTURES / "vstest-xunit-fail-lines.txt")
    result = feed(*both)
    assert result.counts == TestCounts(13, 8, 5, 0)
    assert len(result.failures) == 5


# -- run-level errors ------------------------------------------------------------------------------

def test_host_crash_is_one_run_error() -> None:
    # Quoted from a public note that reproduced the crash deliberately (dotnet test, VSTest, WPF tests).
    result = feed(
        "The active test run was aborted. Reason: Test host process crashed :",
        "Unhandled exception. System.InvalidOperationException: Cannot create more than",
        "one System.Windows.Application instance in the same AppDomain.",
        "   at System.Windows.Application..ctor()",
        "",
        "Test Run Aborted.",
    )
    assert [e.message for e in result.run_errors] == ["The active test run was aborted. Reason: Test host process crashed :"]
    assert result.counts is None and result.failures == []


def test_no_test_available_is_a_run_error() -> None:
    # Shaped after vstest's resource string `NoTestsAvailableInSource` (no real paste was found).
    line = "No test is available in C:\\src\\Tests\\bin\\Debug\\net8.0\\Tests.dll. Make sure that test discoverer & executors are registered and platform & framework version settings are appropriate and try again."
    assert [e.message for e in feed(line).run_errors] == [line]


def test_mtp_non_success_exit_with_failures_is_not_a_run_error() -> None:
    assert parse_path(FIXTURES / "mtp-mstest-one-failure.txt").run_errors == []


# -- helpers ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "seconds"), [
    ("39 ms", 0.039), ("< 1 ms", 0.0), ("6s 764ms", 6.764), ("1m 45s 448ms", 105.448), ("0,8s", 0.8),
    ("7m 7s", 427.0), ("abc", None), ("", None), ("1" * 100, None),
])
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_result_line_helpers() -> None:
    assert vs_result("  Failed Ns.C.M(a: [1, 2]) [12 ms]") == ("Failed", "Ns.C.M(a: [1, 2])", "12 ms")
    assert vs_result("  X This_test_should_fail [134ms]") == ("X", "This_test_should_fail", "134ms")
    assert vs_result("  Failed to download package 'X' [NU1301]") is None
    assert mtp_result("failed Shop.Tests.A(x: \"(1)\") (270ms)") == (0, "failed", 'Shop.Tests.A(x: "(1)")', "270ms")
    assert mtp_result("skipped Divide_ByZero_Throws") == (0, "skipped", "Divide_ByZero_Throws", None)
    assert mtp_result("failed to restore package") is None  # no duration: not an MTP result line


# -- hostile input -----------------------------------------------------------------------------------

def test_failed_line_without_message() -> None:
    # Shaped after the VSTest resources: a result line, then directly the per-assembly summary.
    result = feed("  Failed Ns.C.NoMessage [1 ms]", "",
                  "Failed!  - Failed:     1, Passed:     0, Skipped:     0, Total:     1, Duration: 1 ms - T.dll (net8.0)")
    assert [(f.name, f.message, f.stack) for f in result.failures] == [("Ns.C.NoMessage", None, None)]
    assert result.counts == TestCounts(1, 0, 1, 0)


def test_truncated_mid_stack_trace_keeps_what_was_read() -> None:
    lines = lines_of(shared_fixture(SHARED_TEST_LOGS[0]))
    cut = next(i for i, x in enumerate(lines) if x.startswith("   at System.RuntimeMethodHandle.InvokeMethod"))
    result = feed(*lines[: cut + 1])
    assert len(result.failures) == 1
    assert result.failures[0].stack is not None and len(result.failures[0].stack.splitlines()) == 2
    assert result.counts is None  # no summary was printed before the cut


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if EXPECTED[n].failures))
def test_every_fixture_cut_anywhere_never_invents_a_test(name: str) -> None:
    """A log cut at any line: no exception, and every named failure is one the full log has."""
    lines = lines_of(FIXTURES / name)
    names = {n for n, _ in EXPECTED[name].failures}
    for cut in range(len(lines) + 1):
        result = feed(*lines[:cut])
        assert {f.name for f in result.failures if not f.name.startswith("(unnamed")} <= names


def test_terminal_logger_header_without_body() -> None:
    result = feed("    UnitTest1.cs(28): error TESTERROR:")  # the log ends right after the header
    assert [(f.name, f.file, f.line) for f in result.failures] == [("(unnamed test failure at UnitTest1.cs(28))", "UnitTest1.cs", 28)]


def test_name_with_control_and_colon_characters() -> None:
    raw = b"  Failed Ns::C.M\x07(a::b, \"\x1b[31mred\x1b[0m\") [1 ms]\r\n  Error Message:\r\n   boom\r\n"
    result = parse_stream(io.BytesIO(raw), "ctrl.log", forced="dotnet_test")
    assert [(f.name, f.message) for f in result.failures] == [('Ns::C.M(a::b, "red")', "boom")]


def test_hundred_thousand_failed_lines() -> None:
    result = feed(*(f"  Failed Ns.C.Test{i} [1 ms]" for i in range(100_000)))
    assert len(result.failures) == 100_000
    assert result.failures[-1].name == "Ns.C.Test99999"


def test_failure_cap_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dotnet_test, "MAX_FAILURES", 10)
    result = feed(*(f"  Failed Ns.C.Test{i} [1 ms]" for i in range(25)))
    assert len(result.failures) == 10
    assert any("15 further failed test(s)" in n for n in result.notes)


def test_endless_message_is_capped() -> None:
    result = feed("  Failed Ns.C.Big [1 ms]", "  Error Message:", *(f"line {i}" for i in range(50_000)))
    message = result.failures[0].message
    assert message is not None and len(message.splitlines()) == MAX_BLOCK_LINES
    assert any("cut at" in n for n in result.notes)


@pytest.mark.parametrize("line", [
    "  Failed x" + " " * 60_000 + "y [1 ms]",
    "  Failed a [" + "1" * 60_000 + " [1 ms]",
    "failed x" + " " * 60_000 + "y)",
    " " * 30_000 + "x" * 30_000 + " error TESTERROR: ",
    "Test summary: " + "a" * 60_000,
    "Failed! - " + "a: 1, " * 10_000,
], ids=["vs-space-run", "vs-digit-run", "mtp-space-run", "tl-indent-run", "summary-letters", "summary-pairs"])
def test_pathological_lines_are_linear(line: str) -> None:
    """Each would take minutes with a backtracking regex; here they finish at once (by construction)."""
    feed(line, line)


def test_mtp_canceled_and_duration_less_results() -> None:
    # Shaped after testfx TerminalTestReporter.RenderTestCompleted: Canceled and Timeout both print
    # `failed (canceled)`, and newer versions print the duration only when it is known.
    result = feed(
        "failed to restore package Foo",  # prose before any MTP output: not a test result
        "Running tests from bin/Debug/net8.0/T.dll (net8.0|x64)",
        "failed (canceled) T.Slow (30s 1ms)",
        "  Test execution was canceled.",
        "failed T.NoDuration",
        "  Assert.Fail failed.",
        "  Stack Trace:",
        "    at T.NoDuration() in /src/T.cs:12",
    )
    assert [(f.name, f.outcome, f.message, f.stack) for f in result.failures] == [
        ("T.Slow", Outcome.ABORTED, "Test execution was canceled.", None),
        ("T.NoDuration", Outcome.FAILED, "Assert.Fail failed.", "at T.NoDuration() in /src/T.cs:12"),
    ]
    assert result.failures[0].duration_s == pytest.approx(30.001)


def test_ci_step_running_dotnet_test_sniffs_before_any_test_output() -> None:
    """GitHub Actions prints the step command first; the test output may start after the sniffed head."""
    head = b"2026-09-21T10:00:00.0000000Z ##[group]Run dotnet test --no-build -c Release\n" + b"  A -> /src/A/bin/A.dll\n" * 3
    assert "dotnet_test" in sniff(head).formats
