"""Safe, streaming XML input for the result-file parsers (TRX, JUnit, NUnit, xUnit).

Real result files break strict parsers: .NET writes illegal XML 1.0 character references
(`&#x2;`, `&#x1F;`) into obfuscated stack traces, NUnit files carry raw control bytes, some
files are UTF-16, and a damaged file has a stray `<` or `&`, a tag cut off, invalid UTF-8.
`SanitizingReader` repairs what it can on the fly, chunk by chunk, so memory stays flat, and
caps every field (`xmlrepair.FieldCapper`): a 400 MB message costs 64 KiB. `iterparse` runs
libxml2 in recover mode, so one bad byte never ends the parse (the tests after it are still
read; `damage()` says where it was), never resolves entities, loads DTDs or touches the network
(no XXE, no billion laughs) and allows huge text nodes (multi-MB CDATA is real).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import IO, Any, BinaryIO

from lxml import etree

from ci_agent.parsers.xmlrepair import FieldCapper, StrayLtEscaper

CHUNK_BYTES = 1 << 20
# Illegal in XML 1.0: C0 controls other than TAB, LF, CR. As raw bytes and as character references.
_ILLEGAL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 13))
# Also surrogate halves (U+D800-DFFF), U+FFFE/FFFF and beyond U+10FFFF, which libxml2 refuses
# just the same ("invalid xmlChar value") and a .NET writer with CheckCharacters off emits.
_ILLEGAL_CHARREF_RE = re.compile(
    rb"&#(?:[xX]0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F]|[dD][89a-fA-F][0-9a-fA-F]{2}|[fF]{3}[eEfF]"
    rb"|1[1-9a-fA-F][0-9a-fA-F]{4}|[2-9a-fA-F][0-9a-fA-F]{5}|[1-9a-fA-F][0-9a-fA-F]{6,})"
    rb"|0*(?:[0-8]|1[124-9]|2[0-9]|3[01]|5529[6-9]|55[3-9][0-9]{2}|56[0-9]{3}|57[0-2][0-9]{2}"
    rb"|573[0-3][0-9]|5734[0-3]|6553[45]|111411[2-9]|11141[2-9][0-9]|1114[2-9][0-9]{2}"
    rb"|111[5-9][0-9]{3}|11[2-9][0-9]{4}|1[2-9][0-9]{5}|[2-9][0-9]{6}|[1-9][0-9]{7,}));"
)
_REPLACEMENT_REF = b"&#xFFFD;"
# A character reference is at most ~12 bytes; keep a tail that might be one cut in half.
_CARRY = 16
# Bytes before the root that are not markup end the parse even in recover mode ("Start tag
# expected"): junk before the XML declaration, or between it and the first `<`.
# Junk: text, a `<` that starts no markup, a tag cut off by the next `<`. Possessive: linear.
_JUNK = rb"(?:[^<]++|<(?![A-Za-z_:!?\x80-\xff])|<[A-Za-z_:\x80-\xff][^<>\"']*+(?=<))*+"
_PROLOG_RE = re.compile(rb"(" + _JUNK + rb")(<\?xml(?:[^?<>]|\?(?!>))*+\?>)?(" + _JUNK + rb")(?=<)")
_XML_DECL_ENCODING_RE = re.compile(rb"^(<\?xml[^>]*?encoding\s*=\s*)([\"'])[^\"']*\2")


class SanitizingReader:
    """A read()-able byte stream that repairs what real result files get wrong.

    Counts what it changed in `repairs` so callers can say that recovery happened.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._chunks = self._source_chunks()
        self._buffer = b""
        self._pos = 0
        self._carry = b""
        self._eof = False
        self.repairs = 0
        self.prolog_junk = 0  # bytes dropped before the root element
        self._first = True
        self.capper = FieldCapper()
        self._escaper = StrayLtEscaper()
        self.bytes_read = 0
        self.transcoded_from: str | None = None

    def _read_raw(self) -> bytes:
        chunk = self._raw.read(CHUNK_BYTES)
        self.bytes_read += len(chunk)
        return chunk

    def _source_chunks(self) -> Iterator[bytes]:
        chunk = self._read_raw()
        if chunk.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            # Transcode UTF-16 to UTF-8 (and say so in the declaration) so byte-level cleaning is safe.
            self.transcoded_from = "utf-16"
            decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
            first = True
            while True:
                data = decoder.decode(chunk, final=not chunk).encode("utf-8")
                if first and data:
                    first = False
                    data = _XML_DECL_ENCODING_RE.sub(rb'\1"utf-8"', data, count=1)
                if data:
                    yield data
                if not chunk:
                    return
                chunk = self._read_raw()
        if chunk.startswith(codecs.BOM_UTF8):
            chunk = chunk[3:]
        while chunk:
            yield chunk
            chunk = self._read_raw()

    def _fill(self) -> None:
        while not self._eof and not self._buffer:
            chunk = next(self._chunks, None)
            data = self._carry + (chunk or b"")
            if chunk is None:
                self._eof = True
                self._carry = b""
            else:
                # Keep back a tail that may be a character reference (or a `<`) cut in half.
                cut = data.rfind(b"&", max(0, len(data) - _CARRY))
                if cut != -1 and b";" not in data[cut:]:
                    data, self._carry = data[:cut], data[cut:]
                elif data.endswith(b"<"):
                    data, self._carry = data[:-1], b"<"
                else:
                    self._carry = b""
            if self._first and data:
                self._first = False
                data = self._prolog(data)
            cleaned = data.translate(None, _ILLEGAL_BYTES)
            self.repairs += len(data) - len(cleaned)
            cleaned, n = _ILLEGAL_CHARREF_RE.subn(_REPLACEMENT_REF, cleaned)
            self.repairs += n
            cleaned = self.capper.feed(cleaned)
            if self._eof:
                cleaned += self.capper.finish()
            self._buffer = self._escaper.feed(cleaned)

    def _prolog(self, data: bytes) -> bytes:
        found = _PROLOG_RE.match(data)
        if found is None:
            return data
        lead, declaration, gap = found.groups()
        if not lead.strip() and not gap.strip() and not (lead and declaration):
            return data
        self.prolog_junk += len(lead.strip()) + len(gap.strip())
        kept = declaration + b"\n" if declaration else b""
        return kept + data[found.end():]

    @property
    def escaped(self) -> int:
        """Stray `<` and `&` turned into text."""
        return self._escaper.escaped

    @property
    def first_escape_at(self) -> int | None:
        return self._escaper.first_at

    def read(self, size: int = -1) -> bytes:
        if self._pos >= len(self._buffer):
            self._buffer, self._pos = b"", 0
        self._fill()
        start = self._pos
        # Hand out slices by offset: re-slicing the rest of a 1 MiB buffer on every 32 KiB read
        # copied ~16 MiB per MiB of input.
        end = len(self._buffer) if size < 0 else min(len(self._buffer), start + size)
        self._pos = end
        return self._buffer[start:end]


def iterparse(stream: IO[bytes] | SanitizingReader, events: tuple[str, ...] = ("start", "end")) -> Any:
    """lxml iterparse (an iterator of (event, element); `damage()` reads what it recovered from)
    with every dangerous feature off, in recover mode. Still raises etree.XMLSyntaxError when
    there is no XML at all (an empty file, no root element)."""
    return etree.iterparse(
        stream,
        events=events,
        huge_tree=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
        recover=True,
    )


_POSITION_RE = re.compile(r",? line \d+, column \d+\s*$")


def damage(parser: Any) -> str | None:
    """What recover mode stepped over, as one sentence (None when the file was whole): the
    first problem's line and message and how many more (lxml keeps the first 100)."""
    errors = [e for e in parser.error_log if e.level_name in ("ERROR", "FATAL")]
    if not errors:
        return None
    first = errors[0]
    message = _POSITION_RE.sub("", (first.message or "").strip()) or "unknown problem"
    if getattr(parser, "root", None) is None:  # not one element read: nothing went on after it
        return f"truncated or malformed XML at line {first.line}: {message}"
    more = f" and {len(errors) - 1}{'+' if len(errors) >= 100 else ''} more problem(s) after it" \
        if len(errors) > 1 else ""
    return (f"truncated or malformed XML at line {first.line}: {message}{more}; "
            f"the tests after it were still read")


def repair_notes(reader: SanitizingReader) -> list[str]:
    """What the reader changed before parsing, one note each."""
    notes = []
    if reader.prolog_junk:
        notes.append(f"the file is damaged: dropped {reader.prolog_junk} byte(s) that were not markup before "
                     "the root element")
    if reader.escaped:
        notes.append(f"the file is damaged: escaped {reader.escaped} stray '<' or '&' that would have ended "
                     f"the parse (the first at byte {reader.first_escape_at} of the repaired text)")
    if reader.capper.fields_cut:
        notes.append(f"cut {reader.capper.fields_cut} field(s) longer than {reader.capper.limit} bytes "
                     f"({reader.capper.bytes_cut} bytes left out, each marked '… [truncated N bytes]')")
    return notes


def local_name(tag: object) -> str:
    """`{namespace}Name` -> `Name`; comments/PIs (non-str tags) -> ''."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def clear_element(elem: Any) -> None:
    """Free a finished element and the already-processed siblings before it (flat memory)."""
    elem.clear(keep_tail=False)
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


def text_of(elem: Any) -> str:
    """All text inside an element (CDATA included), or ''."""
    return "".join(elem.itertext())
