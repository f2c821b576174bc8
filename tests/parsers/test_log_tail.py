"""A log no parser can read still reaches the model: its bounded last lines (issue 15)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]

from ci_agent.distill import Input, distill
from ci_agent.parsers import parse_stream
from ci_agent.parsers.log_tail import TAIL_BYTES, TAIL_LINE_CHARS, TAIL_LINES, bounded_tail
from ci_agent.render import render
from ci_agent.report import Report, SourceInfo

CASES = Path(__file__).parents[2] / "bench" / "fixbench" / "cases"
SCHEMA = json.loads((Path(__file__).parents[2] / "ci_agent" / "schemas" / "report-v1.json").read_text())


def _report_of(data: bytes, name: str = "build.log") -> Report:
    result = parse_stream(io.BytesIO(data), name)
    return distill([Input(SourceInfo(name, result.format, len(data)), result)], None)


def test_an_unknown_log_reaches_the_llm_text_json_and_markdown() -> None:
    # Before `vet: ` was read (tests/parsers/test_compilers.py), fixbench's
    # go-shortener-rename-half-done log was such a log; this one's tool no parser knows.
    line = "linkcheck: docs/guide.md line 46 links to api.md#lookup, which no longer exists"
    result = parse_stream(io.BytesIO(f"# example.com/shorty/docs\n{line}\n".encode()), "build.log")
    assert result.format == "unknown" and result.tail == ["# example.com/shorty/docs", line]
    report = distill([Input(SourceInfo("build.log", result.format, 100), result)], None)
    assert "LOG TAIL" in render(report, "llm") and f"    {line}\n" in render(report, "llm")
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, SCHEMA)
    assert data["log_tails"] == [{"source": "build.log", "lines": ["# example.com/shorty/docs", line]}]
    markdown = render(report, "markdown")
    assert "<details><summary><code>build.log</code> (2 lines)</summary>" in markdown and line in markdown


def test_a_log_that_told_something_has_no_tail_and_its_json_no_key() -> None:
    report = _report_of(b"src/a.c:3:5: error: 'x' undeclared\nmake: *** [all] Error 1\n")
    assert report.log_tails == ()
    assert "log_tails" not in json.loads(render(report, "json"))
    assert "LOG TAIL" not in render(report, "llm")


def test_a_passing_test_log_has_no_tail() -> None:
    summary = b"=" * 29 + b" 3 passed in 0.01s " + b"=" * 29 + b"\n"
    result = parse_stream(io.BytesIO(summary), "pytest.log")
    assert result.counts is not None and result.counts.failed == 0
    assert result.tail is None


def test_the_tail_is_the_end_cleaned_of_ansi_and_bounded() -> None:
    body = b"".join(b"\x1b[31mline %d\x1b[0m\n" % i for i in range(1000)) + b"\n\n"
    report = _report_of(body)
    (tail,) = report.log_tails
    assert len(tail.lines) == TAIL_LINES
    assert tail.lines[0] == "line 960" and tail.lines[-1] == "line 999"


def test_a_huge_line_without_breaks_is_cut_and_read_quickly() -> None:
    # Hostile: 20 MB on one line (`a:` repeated, the shape that backtracks in naive patterns).
    body = b"a:" * 10_000_000
    started = time.perf_counter()
    report = _report_of(body)
    assert time.perf_counter() - started < 20
    (tail,) = report.log_tails
    assert len(tail.lines) == 1 and len(tail.lines[0]) <= TAIL_LINE_CHARS + 6


def test_bounded_tail_keeps_at_most_the_byte_budget_and_drops_blank_edges() -> None:
    lines = ["", *("x" * 200 for _ in range(40)), "", ""]
    kept = bounded_tail(lines)
    assert sum(len(line) + 1 for line in kept) <= TAIL_BYTES
    assert kept and all(kept)


def test_control_characters_and_invisible_text_do_not_reach_the_tail() -> None:
    report = _report_of("FAIL \u202eevil\u200b\x07 thing\n".encode())
    (tail,) = report.log_tails
    assert tail.lines == ("FAIL evil thing",)


def test_utf16_logs_are_decoded_in_the_tail() -> None:
    body = "\ufeff" + "".join(f"step {i}\r\n" for i in range(3000))
    report = _report_of(body.encode("utf-16-le"))
    (tail,) = report.log_tails
    assert tail.lines[-1] == "step 2999" and tail.lines[0].startswith("step ")


def test_a_pipe_that_cannot_seek_has_no_tail() -> None:
    class Pipe(io.BytesIO):
        def seekable(self) -> bool:
            return False

    result = parse_stream(Pipe(b"something odd happened\n"), "<stdin>")
    assert result.tail is None
