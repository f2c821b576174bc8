"""node --test output (TAP and spec reporters): failed tests with their error and frames.

The logs are the real captured outputs of fixbench's TypeScript cases
(bench/fixbench/cases/*/outputs); expected values were written by reading them.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from ci_agent.parsers import parse_path, parse_stream, sniff
from ci_agent.parsers.node_test import PARSER
from ci_agent.report import ParseResult, TestCounts

CASES = Path(__file__).parents[2] / "bench" / "fixbench" / "cases"


def _parse(text: str) -> ParseResult:
    return parse_stream(io.BytesIO(text.encode()), "node.log", "node_test")


def test_tap_failures_keep_error_location_and_frames_and_skip_the_suite() -> None:
    result = parse_path(CASES / "typescript-coupons-wrong-condition" / "outputs" / "build.log")
    assert result.format == "node_test"
    assert result.counts == TestCounts(total=3, passed=1, failed=2, skipped=0)
    first, second = result.failures
    root = "/tmp/fixbench-typescript-coupons-wrong-condition-qj967ad0/broken"
    assert (first.name, first.file, first.line) == (
        "applyCoupon > ignores an expired coupon", f"{root}/test/coupon.test.js", 16)
    assert first.message == ("Expected values to be strictly equal:\n"
                             "+ actual - expected\n+ 'BF20'\n- undefined")
    assert first.stack is not None
    assert first.stack.splitlines()[0] == f"at TestContext.<anonymous> ({root}/test/coupon.test.js:18:12)"
    assert second.name == "applyCoupon > ignores a cart below the minimum"


def test_spec_failures_are_read_once_despite_the_recap() -> None:
    result = parse_path(CASES / "typescript-latency-api-misuse" / "outputs" / "build.log")
    assert result.counts == TestCounts(total=3, passed=1, failed=2, skipped=0)
    assert [f.name for f in result.failures] == [
        "summary of a scrape window", "breaches name the missed targets"]
    first = result.failures[0]
    assert first.message is not None and first.message.splitlines() == [
        "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
        "+ actual - expected",
        "+ 'n=20 min=10ms p50=13ms p95=9ms p99=95ms max=95ms'",
        "- 'n=20 min=8ms p50=11ms p95=95ms p99=250ms max=250ms'",
    ]
    assert first.stack is not None and "generatedMessage" not in first.stack


def test_sniffs_node_test_output_only() -> None:
    assert sniff(b"TAP version 13\n# Subtest: a\nok 1 - a\n").formats == ("node_test",)
    assert not PARSER.sniff(["ok 1 - a", "# tests 3", "✖ no timing here"])


@pytest.mark.parametrize("line", [
    "✖ " + " (" * 50_000 + "ms)",
    "  location: '" + "a:1" * 50_000,
    "not ok " + "1 - " * 50_000,
    "# Subtest: " + " " * 100_000,
])
def test_hostile_lines_are_read_in_linear_time(line: str) -> None:
    log = f"# Subtest: a\nnot ok 1 - a\n  ---\n{line}\n{line}\n"
    started = time.perf_counter()
    _parse(log)
    assert time.perf_counter() - started < 2
