"""go test output: failed tests and subtests with their t.Error lines, and panics with frames.

The logs are the real captured outputs of fixbench's Go cases (bench/fixbench/cases/*/outputs);
expected values were written by reading them.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from ci_agent.distill import Input, distill
from ci_agent.parsers import parse_path, parse_stream, sniff
from ci_agent.parsers.go_test import PARSER
from ci_agent.report import ParseResult, SourceInfo

CASES = Path(__file__).parents[2] / "bench" / "fixbench" / "cases"


def _parse(text: str) -> ParseResult:
    return parse_stream(io.BytesIO(text.encode()), "go.log", "go_test")


def test_failed_tests_carry_their_lines_and_package() -> None:
    result = parse_path(CASES / "go-certs-wrong-condition" / "outputs" / "build.log")
    assert result.format == "go_test"
    first, second = result.failures
    assert (first.name, first.classname, first.file, first.line) == (
        "example.com/certwatch/renew.TestNeedsRenewal", "example.com/certwatch/renew", "renew_test.go", 23)
    assert first.message is not None and first.message.splitlines() == [
        f"renew_test.go:23: {days} days left: NeedsRenewal = {got}, want {want}"
        for days, got, want in [(90, "true", "false"), (31, "true", "false"), (30, "false", "true"),
                                (10, "false", "true"), (-2, "false", "true")]]
    assert (second.name, second.line) == ("example.com/certwatch/renew.TestDueSoonestFirst", 31)


def test_failed_subtests_are_reported_and_their_parent_is_not() -> None:
    result = parse_path(CASES / "go-static-api-misuse" / "outputs" / "build.log")
    assert [(f.name, f.message) for f in result.failures] == [
        ("example.com/statusboard/web.TestStaticAssets//static/style.css",
         'server_test.go:46: got 404 "404 page not found\\n", want 200 "body{}"'),
        ("example.com/statusboard/web.TestStaticAssets//static/app.js",
         'server_test.go:46: got 404 "404 page not found\\n", want 200 "void 0"'),
    ]


def test_a_panic_fails_the_running_test_and_locates_it_in_the_repository() -> None:
    path = CASES / "go-quota-nil-map" / "outputs" / "build.log"
    result = parse_path(path)
    (case,) = result.failures
    assert case.name == "example.com/quotad/quota.TestLimitPerTenant"
    assert case.message == (
        "panic: assignment to entry in nil map [recovered]\npanic: assignment to entry in nil map")
    root = "/tmp/fixbench-go-quota-nil-map-cybj1h4r/broken"
    assert case.stack is not None
    assert case.stack.splitlines()[3:5] == [
        f"at example.com/quotad/quota.(*Tracker).Allow in {root}/quota/quota.go:56",
        f"at example.com/quotad/quota.TestLimitPerTenant in {root}/quota/quota_test.go:15",
    ]
    report = distill([Input(SourceInfo("go.log", result.format, 982), result)], root)
    (failure,) = report.failures
    assert (failure.file, failure.line) == ("quota/quota.go", 56)
    assert failure.frames == ("at example.com/quotad/quota.(*Tracker).Allow in quota/quota.go:56",
                              "at example.com/quotad/quota.TestLimitPerTenant in quota/quota_test.go:15")


def test_verbose_lines_printed_before_the_fail_line_belong_to_that_test() -> None:
    log = "\n".join([
        "=== RUN   TestA",
        "=== RUN   TestA/empty",
        "    a_test.go:9: got 1, want 0",
        "--- FAIL: TestA (0.00s)",
        "    --- FAIL: TestA/empty (0.00s)",
        "=== RUN   TestB",
        "--- PASS: TestB (0.00s)",
        "FAIL",
        "FAIL\texample.com/a\t0.01s",
    ])
    (case,) = _parse(log).failures
    assert (case.name, case.message, case.file, case.line) == (
        "example.com/a.TestA/empty", "a_test.go:9: got 1, want 0", "a_test.go", 9)


def test_sniffs_go_test_and_not_other_logs() -> None:
    assert sniff(b"ok  \texample.com/a\t0.003s\n--- FAIL: TestX (0.00s)\n").formats == ("go_test",)
    assert not PARSER.sniff(["--- FAIL: something else", "ok  a 0.01s", "FAIL: test_x (tests.T)"])


@pytest.mark.parametrize("line", [
    "--- FAIL: " + "x" * 100_000 + " (",
    "    " + "a.go:" * 50_000,
    "\t" + ".go:1" * 50_000,
    "FAIL\t" + "\t" * 100_000,
    "=== RUN " + " " * 100_000,
])
def test_hostile_lines_are_read_in_linear_time(line: str) -> None:
    log = f"--- FAIL: TestA (0.00s)\npanic: boom\n\ngoroutine 1 [running]:\nf()\n{line}\n{line}\n"
    started = time.perf_counter()
    _parse(log)
    assert time.perf_counter() - started < 2
