"""The safe XML layer: SanitizingReader repairs, and hostile XML through parse_path (TRX).

Hostile inputs are built in-test (they are attacks, not tool output); real-file cases start
from the shared corpus.
"""

from __future__ import annotations

import codecs
import io
import random
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from ci_agent.parsers import parse_path
from ci_agent.parsers.xmlsafe import CHUNK_BYTES, SanitizingReader, iterparse
from ci_agent.report import Outcome
from tests.conftest import PEAK_RSS_SNIPPET, shared_fixture

NS = "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"
MSTEST_TRX = "other/trx2junit/tests/trx2junit.Core.Tests/data/trx/mstest.trx"


def read_all(reader: SanitizingReader, size: int = 32768) -> bytes:
    out = []
    while chunk := reader.read(size):
        out.append(chunk)
    return b"".join(out)


def failing_trx(message: str, prolog: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?>{prolog}<TestRun xmlns="{NS}"><Results>'
        f'<UnitTestResult testName="T" outcome="Failed"><Output><ErrorInfo><Message>{message}</Message>'
        "</ErrorInfo></Output></UnitTestResult></Results></TestRun>"
    ).encode()


# --- SanitizingReader -----------------------------------------------------------------------

@pytest.mark.parametrize("offset", range(-7, 2))
def test_illegal_charref_split_across_the_chunk_boundary(offset: int) -> None:
    head = b'<TestRun><Results><UnitTestResult testName="T" outcome="Failed"><Output><ErrorInfo><Message>'
    need = CHUNK_BYTES + offset - len(head)  # `&#x1F;` starts `offset` bytes from the boundary
    unit = b"<x/>" + b"a" * 60  # short text runs: a field over 64 KiB would be cut (caps.FIELD_BYTES)
    pad = unit * (need // len(unit)) + b"a" * (need % len(unit))
    tail = b"</Message></ErrorInfo></Output></UnitTestResult></Results></TestRun>"
    reader = SanitizingReader(io.BytesIO(head + pad + b"&#x1F;z" + tail))
    out = read_all(reader)
    assert out == head + pad + b"&#xFFFD;z" + tail
    assert reader.repairs == 1
    assert etree.fromstring(out) is not None  # what lxml refused before is now well-formed


def test_charrefs_survive_a_trickling_stream() -> None:
    class Trickle(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self._data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            return self._data.read(3)  # short reads cut every reference somewhere

    data = b"<a>" + b"x&#x2;y&#8;z&#31;&amp;&#x9;&#10;" * 50 + b"</a>"
    reader = SanitizingReader(Trickle(data))  # type: ignore[arg-type]
    out = read_all(reader)
    assert out == b"<a>" + b"x&#xFFFD;y&#xFFFD;z&#xFFFD;&amp;&#x9;&#10;" * 50 + b"</a>"
    assert reader.repairs == 150


def test_raw_control_bytes_are_stripped_and_counted() -> None:
    reader = SanitizingReader(io.BytesIO(b"<a>x\x01y\x0c\x00z\tw\r\n</a>"))
    assert read_all(reader) == b"<a>xyz\tw\r\n</a>"
    assert reader.repairs == 3


def test_raw_control_bytes_in_a_trx_are_a_noted_repair(tmp_path: Path) -> None:
    path = tmp_path / "ctrl.trx"
    path.write_bytes(failing_trx("bad\x00 byte\x1b here"))
    result = parse_path(path)
    assert [c.message for c in result.failures] == ["bad byte here"]
    assert "repaired 2 illegal XML character(s) or character reference(s)" in result.notes


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom(tmp_path: Path, codec: str) -> None:
    """A real TRX re-encoded as UTF-16 with a BOM (what PowerShell's Out-File writes)."""
    original = shared_fixture(MSTEST_TRX).read_bytes().decode("utf-8-sig")
    bom = codecs.BOM_UTF16_LE if codec == "utf-16-le" else codecs.BOM_UTF16_BE
    path = tmp_path / "utf16.trx"
    path.write_bytes(bom + original.replace('encoding="utf-8"', 'encoding="utf-16"').encode(codec))
    result = parse_path(path)
    expected = parse_path(shared_fixture(MSTEST_TRX))
    assert result.format == "trx"
    assert result.counts == expected.counts
    assert result.failures == expected.failures
    assert "transcoded from utf-16" in result.notes


def test_utf16_declaration_is_rewritten_for_the_transcoded_bytes() -> None:
    data = codecs.BOM_UTF16_LE + '<?xml version="1.0" encoding="utf-16"?><a>é</a>'.encode("utf-16-le")
    reader = SanitizingReader(io.BytesIO(data))
    out = read_all(reader)
    assert out == '<?xml version="1.0" encoding="utf-8"?><a>é</a>'.encode()
    assert reader.transcoded_from == "utf-16"


# --- hostile XML through parse_path ---------------------------------------------------------

def test_billion_laughs_is_not_expanded(tmp_path: Path) -> None:
    entities = "".join(
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
    )
    path = tmp_path / "lol.trx"
    path.write_bytes(failing_trx("&lol9;", prolog=f'<!DOCTYPE TestRun [<!ENTITY lol0 "lol">{entities}]>'))
    result = parse_path(path)
    assert result.format == "trx"
    texts = [c.message or "" for c in result.failures] + [e.message for e in result.run_errors]
    assert all("lollol" not in t for t in texts)  # never expanded, not even partly
    # libxml2 refuses the amplification outright: a clear RunError, not a hang or 3 GB of "lol"
    assert result.failures or result.run_errors


def test_external_entity_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    path = tmp_path / "xxe.trx"
    path.write_bytes(failing_trx("a&x;b", prolog=f'<!DOCTYPE TestRun [<!ENTITY x SYSTEM "file://{secret}">]>'))
    result = parse_path(path, keep_cases=True)
    everything = repr(result)
    assert "TOP-SECRET-CONTENT" not in everything
    assert result.counts is not None and result.counts.failed == 1


def test_etc_passwd_entity_is_never_read(tmp_path: Path) -> None:
    path = tmp_path / "passwd.trx"
    path.write_bytes(failing_trx("&x;", prolog='<!DOCTYPE TestRun [<!ENTITY x SYSTEM "file:///etc/passwd">]>'))
    assert "root:" not in repr(parse_path(path, keep_cases=True))


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback port that records connection attempts (nothing may connect)."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    srv.close()


def _nobody_connected(srv: socket.socket) -> bool:
    try:
        conn, _ = srv.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


@pytest.mark.parametrize("prolog", [
    '<!DOCTYPE TestRun SYSTEM "http://127.0.0.1:{port}/evil.dtd">',
    '<!DOCTYPE TestRun [<!ENTITY % ext SYSTEM "http://127.0.0.1:{port}/evil.dtd"> %ext;]>',
    '<!DOCTYPE TestRun [<!ENTITY x SYSTEM "http://127.0.0.1:{port}/x.txt">]>',
])
def test_no_network_for_external_dtds_or_entities(
    tmp_path: Path, listener: socket.socket, prolog: str
) -> None:
    port = listener.getsockname()[1]
    path = tmp_path / "dtd.trx"
    path.write_bytes(failing_trx("&x;" if "ENTITY x" in prolog else "m", prolog=prolog.format(port=port)))
    result = parse_path(path)  # a fetch would block on the silent listener: this must return
    assert result.format == "trx"
    assert _nobody_connected(listener)


def test_truncated_trx(tmp_path: Path) -> None:
    data = failing_trx("first")[:-60]
    path = tmp_path / "cut.trx"
    path.write_bytes(data)
    result = parse_path(path)
    assert result.format == "trx"
    assert [e.message.split(":")[0] for e in result.run_errors] == ["truncated or malformed XML at line 1"]


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.trx"
    path.write_bytes(b"")
    result = parse_path(path)
    assert [e.message for e in result.run_errors] == ["the file is empty"]


def test_nul_only_file(tmp_path: Path) -> None:
    path = tmp_path / "nul.trx"
    path.write_bytes(b"\x00" * 100_000)
    result = parse_path(path)
    assert [e.message for e in result.run_errors] == [
        "the file is binary, not a text log or an XML result file"
    ]
    assert result.failures == []


def test_binary_junk(tmp_path: Path) -> None:
    junk = random.Random(7).randbytes(300_000)
    path = tmp_path / "junk.trx"
    path.write_bytes(junk)
    result = parse_path(path)
    assert len(result.run_errors) == 1
    assert result.failures == []


def test_binary_junk_after_a_trx_root(tmp_path: Path) -> None:
    junk = random.Random(11).randbytes(50_000)
    path = tmp_path / "junk-root.trx"
    path.write_bytes(f'<TestRun xmlns="{NS}"><Results>'.encode() + junk)
    result = parse_path(path)
    assert result.format == "trx"
    assert len(result.run_errors) == 1
    assert result.run_errors[0].message.startswith("truncated or malformed XML at line ")


_STREAMING_SCRIPT = r"""
import io, resource, sys
from ci_agent.parsers import parse_stream

N = 200_000
NS = "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"

class Generated(io.RawIOBase):
    # The TRX is produced piece by piece while it is read: it never exists whole in memory.
    def __init__(self):
        self._parts = self._gen()
        self._buf = bytearray()
    def _gen(self):
        yield f'<?xml version="1.0" encoding="utf-8"?><TestRun xmlns="{NS}"><Results>'.encode()
        for i in range(N):
            outcome = "Failed" if i % 1000 == 0 else "Passed"
            out = ("<Output><ErrorInfo><Message>boom %d</Message><StackTrace>   at C.M() in /_/C.cs:line %d"
                   "</StackTrace></ErrorInfo></Output>" % (i, i)) if outcome == "Failed" else ""
            yield (f'<UnitTestResult testId="{i:032x}" testName="M{i}" duration="00:00:00.001" '
                   f'outcome="{outcome}">{out}<Output><StdOut>{"x" * 60}</StdOut></Output>'
                   f'</UnitTestResult>').encode()
        yield b"</Results><TestDefinitions>"
        for i in range(N):
            yield (f'<UnitTest id="{i:032x}"><Execution id="e{i}"/>'
                   f'<TestMethod className="Ns.C{i % 50}" name="M{i}"/></UnitTest>').encode()
        yield b"</TestDefinitions></TestRun>"
    def readable(self):
        return True
    def readinto(self, b):
        while len(self._buf) < len(b):
            part = next(self._parts, None)
            if part is None:
                break
            self._buf += part
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        del self._buf[:n]
        return n

result = parse_stream(io.BufferedReader(Generated(), 1 << 16), "generated.trx")
c = result.counts
first, last = result.failures[0], result.failures[-1]
print(c.total, c.passed, c.failed, len(result.failures), first.classname, last.line)
print(peak_rss_kib() // 1024)
"""


def test_200k_results_stream_with_flat_memory() -> None:
    """200k results and 200k definitions (~75 MB of XML), generated while read, in a fresh process.

    Keeping the parsed tree takes ~590 MiB on this input (plain lxml iterparse, measured);
    streaming with cleared elements stays near the interpreter's own ~30 MiB.
    """
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS_SNIPPET + _STREAMING_SCRIPT],
        capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent.parent,
    )
    counts_line, rss_line = done.stdout.strip().splitlines()
    assert counts_line.split() == ["200000", "199800", "200", "200", "Ns.C0", str(199000)]
    assert int(rss_line) < 100  # MiB; DESIGN.md §6 allows 150 MB for a 100 MB file


def test_iterparse_refuses_dtd_and_entity_tricks_directly() -> None:
    data = b'<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>'
    texts = [elem.text or "" for event, elem in iterparse(io.BytesIO(data), events=("end",))]
    assert all("root:" not in t for t in texts)


def test_outcome_of_repaired_file_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "charref.trx"
    path.write_bytes(failing_trx("obfuscated &#x2;&#x1F; frame"))
    result = parse_path(path)
    expected = [(Outcome.FAILED, "obfuscated \ufffd\ufffd frame")]
    assert [(c.outcome, c.message) for c in result.failures] == expected
    assert any(n.startswith("repaired 2 ") for n in result.notes)


ILLEGAL_REFS = ["&#x0;", "&#x8;", "&#xB;", "&#x1F;", "&#31;", "&#xD800;", "&#xdfff;", "&#55296;", "&#xFFFE;",
                "&#65535;", "&#x110000;", "&#1114112;", "&#x0000001F;"]
LEGAL_REFS = ["&#x9;", "&#xA;", "&#xD;", "&#10;", "&#x7F;", "&#x85;", "&#xD7FF;", "&#xE000;", "&#xFFFD;",
              "&#x1F600;", "&#1114111;", "&#x10FFFF;"]


@pytest.mark.parametrize("ref", ILLEGAL_REFS)
def test_every_kind_of_illegal_reference_is_replaced(ref: str) -> None:
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(f"<a>{ref}</a>".encode())  # libxml2 refuses it as written
    reader = SanitizingReader(io.BytesIO(f"<a>{ref}</a>".encode()))
    out = read_all(reader)
    assert out == b"<a>&#xFFFD;</a>" and reader.repairs == 1
    assert etree.fromstring(out).text == "\ufffd"


@pytest.mark.parametrize("ref", LEGAL_REFS)
def test_legal_references_are_untouched(ref: str) -> None:
    reader = SanitizingReader(io.BytesIO(f"<a>{ref}</a>".encode()))
    assert read_all(reader) == f"<a>{ref}</a>".encode() and reader.repairs == 0
