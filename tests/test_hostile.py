"""Hostile input across every registered parser: a clear error or a partial report, never a
crash, a hang or unbounded memory (issue 2, Part 4)."""

from __future__ import annotations

import io
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_agent.parsers import LOG_PARSERS, XML_PARSERS, parse_path, parse_stream
from ci_agent.report import ParseResult
from tests.conftest import PEAK_RSS_SNIPPET, REPO_ROOT, SHARED_FIXTURES

REAL_XML_SAMPLES = [
    "dorny/fixtures/dotnet-trx.trx",
    "dorny/fixtures/jest-junit.xml",
    "dorny/fixtures/dotnet-nunit.xml",
    "enricomi/xunit/mstest/fixie.xml",
]
REAL_LOG_SAMPLES = [
    "dotnet-logs/cs-errors-multi-win.log",
    "dotnet-logs/vstest-xunit-7-failures-utf16.log",
    "dotnet-logs/gha-docker-buildkit-cs0023.log",
]


def _parse_bytes(data: bytes, name: str = "input", forced: str | None = None) -> ParseResult:
    return parse_stream(io.BytesIO(data), name, forced)


def _existing(paths: list[str]) -> list[Path]:
    return [SHARED_FIXTURES / p for p in paths if (SHARED_FIXTURES / p).exists()]


def test_empty_file_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    result = parse_path(empty)
    assert result.run_errors and "empty" in result.run_errors[0].message
    assert result.run_errors[0].source == str(empty)


@pytest.mark.parametrize("name", sorted(XML_PARSERS))
def test_every_xml_parser_reports_an_empty_document_without_raising(name: str) -> None:
    result = _parse_bytes(b"", forced=name)
    assert result.counts is None or result.counts.total == 0
    assert result.run_errors, f"{name}: an empty result file must be reported, not read as 'no tests'"


_JUNK = [b"\x00" * 70_000, bytes(range(256)) * 300, b"\x7fELF\x02\x01\x01" + b"\x00" * 5000]


@pytest.mark.parametrize("junk", _JUNK)
def test_binary_junk_is_a_clear_error(junk: bytes) -> None:
    result = _parse_bytes(junk)
    assert result.run_errors
    assert "binary" in result.run_errors[0].message
    assert not result.diagnostics and not result.failures


@pytest.mark.parametrize("name", sorted(XML_PARSERS))
def test_xml_parsers_survive_truncation_at_every_tenth(name: str) -> None:
    samples = [p for p in _existing(REAL_XML_SAMPLES)]
    assert samples, "no real XML samples found"
    for sample in samples:
        data = sample.read_bytes()
        for cut in range(1, 10):
            part = data[: len(data) * cut // 10]
            result = _parse_bytes(part, sample.name, forced=name)  # must not raise
            assert isinstance(result, ParseResult)


def test_truncated_result_file_keeps_what_was_read_and_says_so() -> None:
    sample = SHARED_FIXTURES / "dorny/fixtures/dotnet-trx.trx"
    data = sample.read_bytes()
    full = _parse_bytes(data, "full.trx")
    half = _parse_bytes(data[: len(data) * 2 // 3], "half.trx")
    assert full.counts is not None and full.counts.total > 0
    assert any("malformed" in e.message or "truncated" in e.message for e in half.run_errors), half.run_errors
    assert half.counts is not None and 0 < half.counts.total <= full.counts.total


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(max_size=300), max_size=40))
def test_log_parsers_never_raise_on_arbitrary_text(lines: list[str]) -> None:
    data = "\n".join(lines).encode("utf-8", errors="surrogatepass")
    for name in LOG_PARSERS:
        result = _parse_bytes(data, forced=name)
        assert isinstance(result, ParseResult)


_DIAGNOSTIC_SHAPES = st.sampled_from(
    [
        "{p}({n},{n}): error CS{n}: {t} [{p}]",
        "{p}({n}): warning {t}: {t}",
        "  {n}>{p} : error NU{n}: {t}",
        "MSBUILD : error MSB{n}: {t}",
        "  Failed {t} [{n} ms]",
        "  Error Message:",
        "   {t}",
        "  Stack Trace:",
        "     at {t}() in {p}:line {n}",
        "failed {t} ({n}ms)",
        "Failed!  - Failed: {n}, Passed: {n}, Skipped: {n}, Total: {n}, Duration: {n} s",
        "    {p}({n}): error TESTERROR:",
        "{p}:{n}:{n}: error: {t}",
        "FAILED {p}::{t} - {t}",
        "=== {n} failed, {n} passed in {n}s ===",
        "Test summary: total: {n}, failed: {n}, succeeded: {n}, skipped: {n}, duration: {n}s",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            _DIAGNOSTIC_SHAPES,
            st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60),
            st.integers(min_value=-5, max_value=10**12),
            st.text(alphabet="abc/\\:. ()[],>-", max_size=40),
        ),
        max_size=30,
    )
)
def test_log_parsers_never_raise_on_mangled_real_shapes(rows: list[tuple[str, str, int, str]]) -> None:
    text = "\n".join(shape.format(t=t, n=n, p=p) for shape, t, n, p in rows)
    result = _parse_bytes(text.encode("utf-8", errors="replace"))
    assert isinstance(result, ParseResult)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_xml_parsers_never_raise_on_mutated_real_files(data: st.DataObject) -> None:
    samples = _existing(REAL_XML_SAMPLES)
    sample = data.draw(st.sampled_from(samples))
    raw = bytearray(sample.read_bytes())
    for _ in range(data.draw(st.integers(min_value=1, max_value=8))):
        pos = data.draw(st.integers(min_value=0, max_value=len(raw) - 1))
        raw[pos] = data.draw(st.integers(min_value=0, max_value=255))
    result = _parse_bytes(bytes(raw), sample.name)
    assert isinstance(result, ParseResult)


def test_log_mutations_of_real_logs_never_raise() -> None:
    rng = random.Random(20261202)
    for sample in _existing(REAL_LOG_SAMPLES):
        raw = sample.read_bytes()
        for _ in range(30):
            mutated = bytearray(raw)
            for _ in range(rng.randint(1, 50)):
                mutated[rng.randrange(len(mutated))] = rng.randrange(256)
            assert isinstance(_parse_bytes(bytes(mutated), sample.name), ParseResult)


_BIG_LOG_CHILD = textwrap.dedent(
    r"""
    import resource, sys
    from ci_agent.parsers import parse_stream

    # Mostly noise, as real big logs are, with a diagnostic (printed twice, as MSBuild does) every 50 lines.
    NOISE = b"  Copying file from obj/Debug/net8.0/App.dll to bin/Debug/net8.0/App.dll (attempt 1 of 10).\n"
    DIAG = (b"  src/App/Program.cs(12,5): warning CS8618: Non-nullable property 'Name' must contain "
            b"a non-null value when exiting constructor. [/w/src/App/App.csproj]\n")
    LINE = (NOISE * 49 + DIAG) * 20

    class Generated:
        # A log of `total` bytes produced on the fly: nothing of it is ever on disk or in memory at once.
        def __init__(self, total: int) -> None:
            self.left = total
        def read(self, size: int = -1) -> bytes:
            if self.left <= 0:
                return b""
            size = self.left if size < 0 else min(size, self.left)
            reps = size // len(LINE) + 1
            out = (LINE * reps)[:size]
            self.left -= len(out)
            return out

    total = int(sys.argv[1])
    result = parse_stream(Generated(total), "generated.log")
    print(len(result.diagnostics), result.printed_diagnostics, peak_rss_kib())
    """
)


@pytest.mark.slow
def test_a_one_gigabyte_log_is_read_in_flat_memory() -> None:
    """1 GiB of real-shaped log through the whole log path in a child process: memory stays flat
    (peak RSS of a 1 GiB run close to that of a 16 MiB run), every printed line is counted."""

    def run(total: int) -> tuple[int, int, int]:
        out = subprocess.run(
            [sys.executable, "-c", PEAK_RSS_SNIPPET + _BIG_LOG_CHILD, str(total)],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, check=True,
        ).stdout.split()
        return int(out[0]), int(out[1]), int(out[2])

    _, small_printed, small_rss_kb = run(16 << 20)
    _, big_printed, big_rss_kb = run(1 << 30)
    assert big_printed > small_printed > 0
    # One unique text repeated: the parser must not keep one object per printed line forever...
    # ...but it may keep each printed diagnostic until distill dedupes; bound the growth instead.
    assert big_rss_kb < small_rss_kb + 200 * 1024, (small_rss_kb, big_rss_kb)


_LAUGHS_CHILD = r"""
import io, sys
from ci_agent.parsers import parse_stream
depth = int(sys.argv[1])
entities = b"".join(
    b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
    for i in range(1, depth + 1)
)
doc = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' + entities
       + b']><testsuite name="x"><testcase name="a"><failure message="&lol%d;"/>' % depth
       + b"</testcase></testsuite>")
result = parse_stream(io.BytesIO(doc), "lol.xml")
longest = max((len(f.message or "") for f in result.failures), default=0)
print(longest, peak_rss_kib())
"""


def test_xml_billion_laughs_is_not_expanded() -> None:
    """10^9 'lol's if expanded (~3 GB): the child's peak memory matches that of a 10-lol document."""

    def run(depth: int) -> tuple[int, int]:
        out = subprocess.run(
            [sys.executable, "-c", PEAK_RSS_SNIPPET + _LAUGHS_CHILD, str(depth)],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True,
        ).stdout.split()
        return int(out[0]), int(out[1])

    small_longest, small_kib = run(1)
    big_longest, big_kib = run(9)
    assert big_longest < 10_000  # never the expansion
    assert big_kib < small_kib + 50 * 1024, (small_kib, big_kib)
    assert small_longest >= 0
