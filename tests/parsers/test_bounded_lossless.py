"""Result parsers stay bounded and lossless on odd input (issue 12).

- One bad byte never ends the parse: real result files from ../shared/fixtures with one byte (or a
  few) damaged at several places: every failed test of the whole file is still reported, and a
  RunError or note says the file was damaged and where.
- Per-field caps with an explicit marker: a 400 MB message costs megabytes, measured as the
  child process's own peak RSS (VmHWM).
- Bare CR is a line end and an overwrite hides no error: real MSBuild lines.
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_agent.envelope import iter_log_lines
from ci_agent.parsers import junit, nunit, parse_stream, trx, xunit
from ci_agent.parsers.base import XmlParser
from ci_agent.parsers.caps import FIELD_BYTES, NAME_BYTES, cap, cap_end
from ci_agent.report import ParseResult, TestCounts
from tests.conftest import PEAK_RSS_SNIPPET, REPO_ROOT, shared_fixture

MSTEST = "other/mstest-plugin/src/test/resources/hudson/plugins/mstest"
REAL: dict[str, tuple[XmlParser, str]] = {  # each with many failures spread through the file
    "trx": (trx.PARSER, f"{MSTEST}/DATAFEED.Tests.trx"),  # 116 failed of 317
    "junit": (junit.PARSER, f"{MSTEST}/DATAFEED.Tests.xml"),  # the same run converted: 116 failed
    "nunit": (nunit.PARSER, "enricomi/nunit/nunit3/jenkins/NUnit-issue44527.xml"),  # 144 failed
    "xunit": (xunit.PARSER, "enricomi/xunit/mstest/fixie.xml"),  # 3 failed
}
DAMAGE = {
    "invalid-utf8": b"\xff\xfe\xc3",
    "stray-amp": b" & ",
    "undeclared-entity": b"&nosuch;",
    "control-char": b"\x01",
    "stray-lt": b" < ",
    "truncated-tag": b"<UnitTestResult testName=",
}
SAYS_DAMAGED = ("malformed XML at line", "the file is damaged", "illegal in XML 1.0", "illegal XML character")


def _failed(result: ParseResult) -> list[str]:
    return sorted(f"{f.classname}.{f.name}" for f in result.failures)


def _damaged(data: bytes, fraction: float, junk: bytes) -> bytes:
    at = data.index(b">", int(len(data) * fraction)) + 1  # between markup: after a tag ends
    return data[:at] + junk + data[at:]


@pytest.mark.parametrize("fraction", [0.2, 0.5, 0.8])
@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("fmt", list(REAL))
def test_one_bad_byte_never_ends_the_parse(fmt: str, kind: str, fraction: float) -> None:
    parser, relative = REAL[fmt]
    data = shared_fixture(relative).read_bytes()
    whole = parser.parse(io.BytesIO(data), "whole")
    assert whole.run_errors == [] and len(whole.failures) >= 3

    damaged = parser.parse(io.BytesIO(_damaged(data, fraction, DAMAGE[kind])), "damaged")

    assert _failed(damaged) == _failed(whole), "a failed test went missing after the damage"
    said = [e.message for e in damaged.run_errors] + damaged.notes
    assert any(s in line for line in said for s in SAYS_DAMAGED), said
    where = [line for line in said if "at line" in line or "at byte" in line]
    assert where or kind == "control-char", said  # control bytes are dropped and counted only


def test_damage_in_a_cdata_section_leaves_its_text_alone() -> None:
    doc = (b'<testsuite><testcase name="a"><failure><![CDATA[assert a < b && c]]></failure></testcase>'
           b'<testcase name="b"><failure message="x < y"/></testcase>'
           b'<testcase name="c"><failure message="after"/></testcase></testsuite>')
    result = junit.PARSER.parse(io.BytesIO(doc), "cdata.xml")
    assert [f.name for f in result.failures] == ["a", "b", "c"]
    assert result.failures[0].stack == "assert a < b && c"
    assert result.failures[1].message == "x < y"  # the stray `<` escaped, read as text


def test_caps_cut_whole_characters_with_the_marker() -> None:
    assert cap("é" * 10, 7) == "ééé… [truncated 14 bytes]"
    assert cap_end("abcdef", 4) == "… [truncated 2 bytes]\ncdef"
    assert cap("short", 100) == "short" and cap("", 5) is None


def test_a_long_name_message_and_stack_are_capped_with_the_marker() -> None:
    name, message, stack = "N" * 20_000, "M" * 200_000, "at X.Y() in /s/X.cs:line 3\n" + "S" * 200_000
    doc = (f'<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>'
           f'<UnitTestResult testName="{name}" outcome="Failed"><Output><ErrorInfo><Message>{message}'
           f'</Message><StackTrace>{stack}</StackTrace></ErrorInfo></Output></UnitTestResult>'
           f'<UnitTestResult testName="after" outcome="Failed"/></Results></TestRun>').encode()
    result = trx.PARSER.parse(io.BytesIO(doc), "long.trx")
    big, after = result.failures
    assert after.name == "after"
    assert big.name.startswith("N" * 1000) and big.name.endswith(" bytes]")
    assert len(big.name.encode()) <= NAME_BYTES + 40
    assert big.message is not None and "… [truncated " in big.message
    assert len(big.message.encode()) <= FIELD_BYTES + 100
    assert big.stack is not None and big.file == "/s/X.cs" and big.line == 3


_HUGE_FIELD_CHILD = textwrap.dedent(
    r"""
    import io, sys
    from ci_agent.parsers import junit, trx

    class Generated(io.RawIOBase):
        # The file produced on the fly: (byte, count) parts are repeated, never held whole.
        def __init__(self, parts):
            self.parts, self.cur = list(parts), b""
        def readable(self):
            return True
        def readinto(self, buffer):
            while not self.cur and self.parts:
                part = self.parts.pop(0)
                if isinstance(part, tuple):
                    byte, left = part
                    n = min(left, 1 << 20)
                    self.parts[:0] = [byte * n] + ([(byte, left - n)] if left > n else [])
                else:
                    self.cur = part
            n = min(len(buffer), len(self.cur))
            buffer[:n], self.cur = self.cur[:n], self.cur[n:]
            return n

    size = int(sys.argv[1]) << 20
    trx_doc = [b'<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>'
               b'<UnitTestResult testName="huge" outcome="Failed"><Output><ErrorInfo><Message>', (b"m", size),
               b'</Message><StackTrace>at A.B() in /src/A.cs:line 7</StackTrace></ErrorInfo></Output>'
               b'</UnitTestResult><UnitTestResult testName="after" outcome="Failed"/></Results></TestRun>']
    junit_doc = [b'<testsuite><testcase name="huge"><failure message="', (b"a", size // 4), b'">',
                 (b"s", size // 4),
                 b'</failure></testcase><testcase name="after"><failure/></testcase></testsuite>']
    for parser, doc in ((trx.PARSER, trx_doc), (junit.PARSER, junit_doc)):
        result = parser.parse(io.BufferedReader(Generated(doc), 1 << 20), "huge")
        print(parser.name, [f.name for f in result.failures],
              max(len(f.message or "") + len(f.stack or "") for f in result.failures))
    print(peak_rss_kib())
    """
)


@pytest.mark.slow
def test_a_400_mb_message_costs_megabytes() -> None:
    """A TRX whose failure message is 400 MB of text, and a JUnit file with a 100 MB message
    attribute and a 100 MB body, parsed in a child process: its own peak RSS stays under 120 MiB
    (before the caps, libxml2 and Python each held the whole text: gigabytes)."""
    done = subprocess.run([sys.executable, "-c", PEAK_RSS_SNIPPET + _HUGE_FIELD_CHILD, "400"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=True)
    trx_line, junit_line, rss = done.stdout.strip().splitlines()
    assert trx_line.startswith("trx ['huge', 'after']") and junit_line.startswith("junit ['huge', 'after']")
    assert all(int(line.rsplit(" ", 1)[1]) < 3 * FIELD_BYTES for line in (trx_line, junit_line))
    assert int(rss) < 120 * 1024, f"peak RSS {int(rss) // 1024} MiB"


# --- bare CR ------------------------------------------------------------------------------------

MSBUILD_LINES = (
    b"  Restored /w/src/App/App.csproj (in 1.2 sec).\n"
    b"/w/src/App/Program.cs(12,5): error CS1002: ; expected [/w/src/App/App.csproj]\n"
    b"/w/src/App/Calc.cs(3,17): error CS0103: The name 'y' does not exist in the current context "
    b"[/w/src/App/App.csproj]\n"
    b"Build FAILED.\n"
)


def _codes(data: bytes) -> list[str]:
    result = parse_stream(io.BytesIO(data), "build.log", "msbuild")
    return sorted(d.code or "" for d in result.diagnostics)


def test_bare_cr_line_ends_read_like_lf() -> None:
    assert _codes(MSBUILD_LINES) == ["CS0103", "CS1002"]
    assert _codes(MSBUILD_LINES.replace(b"\n", b"\r")) == ["CS0103", "CS1002"]  # classic Mac
    assert _codes(MSBUILD_LINES.replace(b"\n", b"\r\n")) == ["CS0103", "CS1002"]


def test_a_cr_overwrite_never_hides_an_error_that_was_printed() -> None:
    overwritten = MSBUILD_LINES.replace(b"expected [/w/src/App/App.csproj]\n",
                                        b"expected [/w/src/App/App.csproj]\r  Building...  45%\r\n")
    assert _codes(overwritten) == ["CS0103", "CS1002"]
    lines = list(iter_log_lines(io.BytesIO(b"error CS1002: ; expected\rBuilding...\n")))
    assert lines == ["error CS1002: ; expected", "Building..."]


def test_a_cr_split_across_chunks_is_one_line_end() -> None:
    from ci_agent.envelope import CHUNK_BYTES

    data = b"x" * (CHUNK_BYTES - 1) + b"\r\nnext\rlast\n"
    lines = list(iter_log_lines(io.BytesIO(data)))
    assert lines[1:] == ["next", "last"] and len(lines) == 3


# --- any single bad byte, anywhere between markup (hypothesis) -----------------------------------

SMALL = {  # small real files, so many examples stay fast
    "trx": (trx.PARSER, "dorny/fixtures/dotnet-trx.trx"),
    "junit": (junit.PARSER, "dorny/fixtures/jest-junit.xml"),
    "nunit": (nunit.PARSER, "dorny/fixtures/dotnet-nunit.xml"),
    "xunit": (xunit.PARSER, "enricomi/xunit/mstest/fixie.xml"),
}


@pytest.mark.parametrize("fmt", list(SMALL))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1),
       junk=st.one_of(st.binary(min_size=1, max_size=1), st.sampled_from(list(DAMAGE.values()))))
def test_any_bad_byte_after_a_tag_loses_no_failed_test(fmt: str, where: float, junk: bytes) -> None:
    parser, relative = SMALL[fmt]
    data = shared_fixture(relative).read_bytes()
    ends = [i for i in range(len(data)) if data[i:i + 1] == b">"]
    at = ends[min(len(ends) - 1, int(where * len(ends)))] + 1
    damaged = parser.parse(io.BytesIO(data[:at] + junk + data[at:]), "damaged")
    assert _failed(damaged) == _failed(parser.parse(io.BytesIO(data), "whole"))


# A document per format whose one failing case holds an external entity naming a local file.
XXE_DOCS = {
    "junit": '<?xml version="1.0"?>\n<!DOCTYPE testsuites [<!ENTITY xxe SYSTEM "{uri}">]>\n'
    '<testsuites><testsuite name="s"><testcase name="leak"><failure message="m">&xxe;</failure>'
    "</testcase></testsuite></testsuites>",
    "xunit": '<?xml version="1.0"?>\n<!DOCTYPE assemblies [<!ENTITY xxe SYSTEM "{uri}">]>\n'
    '<assemblies><assembly><collection><test name="T" result="Fail"><failure><message>&xxe;</message>'
    "</failure></test></collection></assembly></assemblies>",
}


@pytest.mark.parametrize("keep_cases", [True, False])
@pytest.mark.parametrize("name", sorted(XXE_DOCS))
def test_external_entities_are_never_read(tmp_path: Path, name: str, keep_cases: bool) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT", encoding="utf-8")
    doc = XXE_DOCS[name].replace("{uri}", secret.as_uri()).encode()
    result = parse_stream(io.BytesIO(doc), "xxe.xml", keep_cases=keep_cases)
    assert result.format == name
    assert "TOP-SECRET-CONTENT" not in repr(result)
    assert result.counts == TestCounts(total=1, failed=1)
