"""The pytest_console parser against real pytest / Python output (tests/fixtures/pytest_console).

Expected values were written by reading each log (see its PROVENANCE.md), not from our output.
Counts map pytest's words explicitly: `error(s)` are failures (outcome error), `xfailed` is
skipped and `xpassed` passed (as pytest's own JUnit XML does), `deselected` and `warnings`
are not test cases.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ci_agent.envelope import HEAD_BYTES
from ci_agent.parsers import parse_path, parse_stream, sniff
from ci_agent.parsers.pytest_console import PARSER
from ci_agent.report import Outcome, ParseResult, Severity, TestCounts
from tests.conftest import LOCAL_FIXTURES, REPO_ROOT, SHARED_FIXTURES

FIXTURES = LOCAL_FIXTURES / "pytest_console"
CALC = "tests/check_calc.py"
F, ERR = Outcome.FAILED, Outcome.ERROR
# (node id, outcome, file, line, first line of the message) as printed in the logs.
Row = tuple[str, Outcome, str | None, int | None, str | None]

SMALL = (f"{CALC}::TestAdd::test_small", F, CALC, 10, "assert 3 == 2")
ZERO = (f"{CALC}::TestAdd::test_zero", F, CALC, 13, "assert 1 == 0")
PARAM = (f"{CALC}::TestAdd::test_param[1-2-3]", F, CALC, 17, "assert 4 == 3")
# The exception is raised in app/calc.py; the last frame inside the test file is the call at line 21.
DIVIDE = (f"{CALC}::test_divide_by_zero", F, CALC, 21, "ZeroDivisionError: division by zero")
# The summary line cuts this message ("...base 10..."); the E line in the block has it whole.
RATIO = (f"{CALC}::test_parse_ratio", F, CALC, 25, "ValueError: invalid literal for int() with base 10: 'x'")
STRINGS = (f"{CALC}::test_strings", F, CALC, 58, "AssertionError: assert 'hello world' == 'hello there'")
RESOURCE = (f"{CALC}::test_uses_resource", ERR, CALC, 50, "RuntimeError: database unavailable")
COLLECT = ("tests/check_broken_import.py", ERR, "tests/check_broken_import.py", 1,
           "ImportError: cannot import name 'multiply' from 'app.calc' "
           "(/work/main/tests/fixtures/pytest_console/sample/app/calc.py)")

# Failures in the order of the short test summary; counts from the final line of each log.
EXPECTED: dict[str, tuple[list[Row], TestCounts]] = {
    # 6 failed, 5 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 warning, 1 error
    "pytest-default.log": ([SMALL, ZERO, PARAM, DIVIDE, RATIO, STRINGS, RESOURCE], TestCounts(15, 6, 7, 2)),
    # 6 failed, 5 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 warning, 2 errors (-rA lists ERROR first)
    "pytest-rA.log": (
        [COLLECT, RESOURCE, SMALL, ZERO, PARAM, DIVIDE, RATIO, STRINGS], TestCounts(16, 6, 8, 2)
    ),
    # 1 error (the session was interrupted: no test ran)
    "pytest-collection-error.log": ([COLLECT], TestCounts(1, 0, 1, 0)),
    # -q: 5 failed, 5 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, 1 warning, 1 error
    "pytest-quiet-deselect.log": ([SMALL, ZERO, PARAM, DIVIDE, RATIO, RESOURCE], TestCounts(14, 6, 6, 2)),
    # -v --tb=short: 6 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 warning, 1 error
    "pytest-tb-short-verbose.log": (
        [SMALL, ZERO, PARAM, DIVIDE, RATIO, RESOURCE, STRINGS], TestCounts(13, 4, 7, 2)
    ),
}


def rows(result: ParseResult) -> list[Row]:
    return [
        (f.name, f.outcome, f.file, f.line, f.message.splitlines()[0] if f.message else None)
        for f in result.failures
    ]


def parse_text(text: str, forced: str | None = "pytest_console") -> ParseResult:
    return parse_stream(io.BytesIO(text.encode("utf-8")), "inline.log", forced)


def test_every_pytest_fixture_log_is_covered() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.log")) == sorted([*EXPECTED, "python-traceback.log"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_log_sniffs_and_gives_the_printed_failures_and_counts(name: str) -> None:
    failures, counts = EXPECTED[name]
    result = parse_path(FIXTURES / name)
    assert result.format == "pytest_console"
    assert rows(result) == failures
    assert result.counts == counts
    assert result.counts is not None and result.counts.failed == len(result.failures)
    assert result.diagnostics == []


def test_full_messages_keep_every_e_line_dedented() -> None:
    result = parse_path(FIXTURES / "pytest-default.log")
    by_name = {f.name: f for f in result.failures}
    assert by_name[SMALL[0]].message == "assert 3 == 2\n +  where 3 = add(1, 1)"
    assert by_name[STRINGS[0]].message == (
        "AssertionError: assert 'hello world' == 'hello there'\n\n  - hello there\n  + hello world"
    )
    assert by_name[SMALL[0]].classname == "TestAdd"
    assert by_name[DIVIDE[0]].classname is None
    stack = by_name[DIVIDE[0]].stack or ""
    assert "tests/check_calc.py:21: " in stack and "app/calc.py:6: ZeroDivisionError" in stack


def test_an_interrupted_session_is_also_a_run_error() -> None:
    result = parse_path(FIXTURES / "pytest-collection-error.log")
    assert [e.message for e in result.run_errors] == [
        "pytest stopped early: Interrupted: 1 error during collection"
    ]
    assert parse_path(FIXTURES / "pytest-rA.log").run_errors == []


def test_bare_python_traceback_is_an_error_at_its_last_frame() -> None:
    result = parse_path(FIXTURES / "python-traceback.log")
    assert result.format == "pytest_console"
    (diag,) = result.diagnostics
    assert diag.severity is Severity.ERROR
    assert (diag.file, diag.line) == ("/work/main/tests/fixtures/pytest_console/sample/crash.py", 7)
    assert (diag.code, diag.message, diag.origin) == ("KeyError", "'timeout'", "python")
    assert diag.detail is not None and diag.detail.count('File "') == 3
    assert result.failures == [] and result.counts is None


def test_blocks_without_summary_lines_still_give_node_ids() -> None:
    # The real default log with its short test summary removed (as with `-r N` or a cut log):
    # node ids are rebuilt from the block title and the block's first frame.
    lines = (FIXTURES / "pytest-default.log").read_text().splitlines()
    kept = [line for line in lines if not line.startswith(("FAILED ", "ERROR "))]
    result = parse_text("\n".join(kept))
    assert sorted(rows(result)) == sorted([SMALL, ZERO, PARAM, DIVIDE, RATIO, STRINGS, RESOURCE])


def test_summary_lines_alone_give_failures_with_their_messages() -> None:
    result = parse_text(
        "FAILED tests/a.py::TestX::test_y[a::b - c] - AssertionError: x - y\n"
        "ERROR tests/b.py::test_z\n"
        "= 1 failed, 1 error in 2.50s (0:00:02) =\n"
    )
    # ` - ` separates node and message, except inside the node's [parameter ids].
    assert rows(result) == [
        ("tests/a.py::TestX::test_y[a::b - c]", F, "tests/a.py", None, "AssertionError: x - y"),
        ("tests/b.py::test_z", ERR, "tests/b.py", None, None),
    ]
    assert result.counts == TestCounts(2, 0, 2, 0)


def test_double_colons_in_parameter_ids_keep_class_and_title_right() -> None:
    text = (
        "=== FAILURES ===\n"
        "___ TestX.test_y[a::b] ___\n"
        "E   assert False\n"
        "tests/a.py:7: AssertionError\n"
        "=== short test summary info ===\n"
        "FAILED tests/a.py::TestX::test_y[a::b] - assert False\n"
        "=== 1 failed in 0.01s ===\n"
    )
    (case,) = parse_text(text).failures
    assert (case.name, case.classname, case.file, case.line, case.message) == (
        "tests/a.py::TestX::test_y[a::b]", "TestX", "tests/a.py", 7, "assert False"
    )


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: Could not find a version that satisfies the requirement foo",
        "FAILED to connect to http://x:80: timeout",
        "ERROR Failed building wheel for lxml",
        "12:34:56 FAILED tests/a.py::test_b",
        "=== not a counts line in 1.0 ===",
        "_ " * 50,
        "a:" * 10000,
        "x" * 200_000,
        "_" * 200_000,
        "=" * 200_000,
        "FAILED " + "a::" * 10000,
        "E   assert 1 == 2",
        "tests/a.py:12: AssertionError",
    ],
    ids=lambda s: s[:40],
)
def test_hostile_lines_outside_pytest_sections_yield_nothing(line: str) -> None:
    consumer = PARSER.consumer("hostile.log")  # straight to the consumer: no 64 KiB envelope cut
    consumer.feed(line)
    result = consumer.finish()
    assert result.diagnostics == [] and result.counts is None
    if not line.startswith("FAILED a::"):
        assert result.failures == []


def test_many_separators_in_a_summary_line_are_tried_a_bounded_number_of_times() -> None:
    consumer = PARSER.consumer("hostile.log")
    consumer.feed("FAILED tests/a.py::t[" + " - " * 50_000)
    (case,) = consumer.finish().failures
    assert case.name == "tests/a.py::t["  # unbalanced brackets: falls back to the first separator


def test_chained_tracebacks_give_one_error_each_and_bare_exception_names_work() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "app/a.py", line 3, in load\n'
        "    open(path)\n"
        "FileNotFoundError: [Errno 2] No such file or directory: 'x'\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "app/b.py", line 9, in main\n'
        "    load()\n"
        "KeyboardInterrupt\n"
    )
    result = parse_text(text)
    assert [(d.file, d.line, d.code, d.message) for d in result.diagnostics] == [
        ("app/a.py", 3, "FileNotFoundError", "[Errno 2] No such file or directory: 'x'"),
        ("app/b.py", 9, "KeyboardInterrupt", "KeyboardInterrupt"),
    ]


def test_a_traceback_cut_by_the_end_of_the_log_gives_nothing_and_no_crash() -> None:
    result = parse_text('Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n    x()\n')
    assert result.diagnostics == [] and result.run_errors == []


def test_pytest_sniff() -> None:
    assert PARSER.sniff(["x", "============ test session starts ============"])
    assert PARSER.sniff(["FAILED tests/a.py::test_b - boom"])
    assert PARSER.sniff(["Traceback (most recent call last):"])
    assert not PARSER.sniff(["FAILED to build", "ERROR: nope", "12:34:56 error"])


def _other_logs() -> list[Path]:
    dotnet = SHARED_FIXTURES / "dotnet-logs"
    logs = [p for p in dotnet.iterdir() if not p.name.endswith((".json", ".md"))]
    return sorted(logs) + sorted((LOCAL_FIXTURES / "compilers").glob("*.log"))


@pytest.mark.parametrize("log", _other_logs(), ids=lambda p: p.name)
def test_dotnet_and_compiler_logs_are_not_pytest(log: Path) -> None:
    assert "pytest_console" not in sniff(log.read_bytes()[:HEAD_BYTES]).formats
    forced = parse_path(log, forced="pytest_console")
    assert forced.failures == [] and forced.counts is None and forced.diagnostics == []


def test_the_sample_project_is_never_collected_by_our_own_test_run() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/fixtures"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert "check_" not in result.stdout, result.stdout
    assert result.returncode == 5, result.stdout + result.stderr  # 5: no tests collected


def test_failures_are_capped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    import ci_agent.parsers.pytest_console as pytest_console

    monkeypatch.setattr(pytest_console, "MAX_FAILURES", 2)
    result = parse_text("\n".join(f"FAILED tests/a.py::test_{n} - boom" for n in range(5)))
    assert [f.name for f in result.failures] == ["tests/a.py::test_0", "tests/a.py::test_1"]
    assert result.notes == ["3 further failure block(s) or summary line(s) not kept (cap 2)"]


def test_verbose_result_lines_name_failures_when_nothing_else_does() -> None:
    # The real -v log without its FAILURES/ERRORS sections and summary (as with `--tb=no -rN`).
    lines = (FIXTURES / "pytest-tb-short-verbose.log").read_text().splitlines()
    kept = [line for line in lines if line.startswith("tests/") and "%]" in line]
    assert len(kept) == 13  # one result line per collected test
    result = parse_text("\n".join(kept))
    expected = EXPECTED["pytest-tb-short-verbose.log"][0]
    assert [(f.name, f.outcome, f.message) for f in result.failures] == [(r[0], r[1], None) for r in expected]
    xdist = parse_text("[gw1] [ 50%] FAILED tests/a.py::test_b\n[gw0] [100%] PASSED tests/a.py::test_c")
    assert [(f.name, f.outcome) for f in xdist.failures] == [("tests/a.py::test_b", F)]
