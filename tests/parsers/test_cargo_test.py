"""cargo test (libtest) output: failed tests located where they panicked, with the panic's text.

The logs are the real captured outputs of fixbench's Rust cases (bench/fixbench/cases/*/outputs);
expected values were written by reading them.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from ci_agent.parsers import parse_path, parse_stream, sniff
from ci_agent.parsers.cargo_test import PARSER
from ci_agent.report import Outcome, ParseResult, TestCounts

CASES = Path(__file__).parents[2] / "bench" / "fixbench" / "cases"


def _parse(text: str) -> ParseResult:
    return parse_stream(io.BytesIO(text.encode()), "cargo.log", "cargo_test")


def test_assertion_panics_keep_left_and_right_and_their_location() -> None:
    result = parse_path(CASES / "rust-installments-assertion-after-refactor" / "outputs" / "build.log")
    assert result.format == "cargo_test"
    assert result.counts == TestCounts(total=3, passed=1, failed=2, skipped=0)
    first, second = result.failures
    assert (first.name, first.file, first.line, first.outcome) == (
        "money::tests::parts_add_up_and_the_first_carry_the_rest", "src/money.rs", 33, Outcome.FAILED)
    assert first.message == ("assertion `left == right` failed\n"
                             "  left: [Cents(3333), Cents(3333), Cents(3334)]\n"
                             " right: [Cents(3334), Cents(3333), Cents(3333)]")
    assert first.stack == "at src/money.rs:33:9"
    assert (second.name, second.file, second.line) == ("schedule::tests::three_monthly_installments",
                                                       "src/schedule.rs", 28)


def test_counts_sum_every_test_binary() -> None:
    result = parse_path(CASES / "rust-iniconf-off-by-one" / "outputs" / "build.log")
    assert result.counts == TestCounts(total=3, passed=1, failed=2, skipped=0)
    assert [(f.name, f.file, f.line) for f in result.failures] == [
        ("duplicate_keys_are_rejected", "tests/parse.rs", 35),
        ("errors_name_the_line_an_editor_shows", "tests/parse.rs", 28),
    ]


def test_unwrap_panics_name_the_library_line() -> None:
    result = parse_path(CASES / "rust-contacts-option-unwrap" / "outputs" / "build.log")
    assert {(f.file, f.line, f.message) for f in result.failures} == {
        ("src/contact.rs", 12, "called `Option::unwrap()` on a `None` value")}


def test_rust_before_1_73_panic_shape_and_quiet_output() -> None:
    log = "\n".join([
        "running 2 tests",
        ".F",
        "failures:",
        "",
        "---- tests::adds stdout ----",
        "computing",
        "thread 'tests::adds' panicked at 'assertion failed: `(left == right)`', src/lib.rs:9:9",
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        "",
        "",
        "failures:",
        "    tests::adds",
        "",
        "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
    ])
    (case,) = _parse(log).failures
    assert (case.name, case.file, case.line) == ("tests::adds", "src/lib.rs", 9)
    assert case.message == "assertion failed: `(left == right)`"
    assert case.stdout == "computing"


def test_a_backtrace_adds_its_frames_after_the_panic_location() -> None:
    log = "\n".join([
        "---- t stdout ----",
        "thread 't' panicked at src/a.rs:3:5:",
        "boom",
        "stack backtrace:",
        "   0: app::f",
        "             at ./src/a.rs:3:5",
        "",
        "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
    ])
    (case,) = _parse(log).failures
    assert case.message == "boom"
    assert case.stack == "at src/a.rs:3:5\n   0: app::f\n             at ./src/a.rs:3:5"


def test_a_failed_test_without_output_block_is_still_a_failure() -> None:
    result = _parse("running 1 test\ntest slow ... FAILED\n")
    assert [(f.name, f.message) for f in result.failures] == [("slow", None)]
    assert result.counts == TestCounts(total=1, passed=0, failed=1, skipped=0)


def test_sniffs_libtest_and_not_other_logs() -> None:
    assert PARSER.sniff(["   Compiling a v0.1.0", "running 3 tests"])
    assert sniff(b"running 3 tests\ntest a ... ok\n").formats == ("cargo_test",)
    assert not PARSER.sniff(["test session starts", "running tests", "ok  \texample.com/a\t0.01s"])


@pytest.mark.parametrize("line", [
    "thread '" + "'" * 50_000 + " panicked at " + "a:" * 50_000,
    "thread 'x' panicked at '" + "', a" * 50_000,
    "---- " + "x" * 100_000,
    "test " + " ... " * 50_000,
    "test result: FAILED. " + "1" * 100_000,
])
def test_hostile_lines_are_read_in_linear_time(line: str) -> None:
    log = f"running 1 test\n---- t stdout ----\n{line}\n"
    started = time.perf_counter()
    _parse(log)
    assert time.perf_counter() - started < 2
