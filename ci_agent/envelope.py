"""Log envelopes, handled once before any log parser sees a line.

Decodes UTF-8 / UTF-16 (with or without BOM), splits lines (LF, CRLF, bare CR overwrites),
bounds line length so a newline-free gigabyte cannot exhaust memory, and strips what CI
systems and terminals wrap around tool output: ANSI SGR / cursor control, OSC-8 hyperlinks
and OSC progress, GitHub Actions timestamps and `##[group]` style commands, GitLab
`section_start` markers, Docker BuildKit `#N 1.23` prefixes, stray BOMs and NULs.
Node prefixes (`2>`, `3:6>`) are MSBuild's own and are left to the msbuild parser.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

CHUNK_BYTES = 1 << 20
MAX_LINE_CHARS = 64 * 1024
HEAD_BYTES = 64 * 1024

# CSI (colours, cursor), OSC (hyperlinks, progress; ended by BEL or ST), other 2-byte escapes.
_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_GHA_TIMESTAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
_GHA_COMMAND_RE = re.compile(r"^##\[(?:group|endgroup|section|command|debug|error|warning|notice|info)\]")
_BUILDKIT_STEP_RE = re.compile(r"^#\d+ \d+\.\d+ ")
_BUILDKIT_RECAP_RE = re.compile(r"^\d+\.\d+ ")
_GITLAB_SECTION_RE = re.compile(r"^section_(?:start|end):\d+:[^\s]*")
# C0 controls except TAB, plus DEL and the invisible format characters that hide text.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")


@dataclass(slots=True)
class EnvelopeInfo:
    """Facts about the envelope learned while reading (filled in as lines are produced)."""

    encoding: str = "utf-8"
    bom: bool = False
    crlf: bool = False
    ansi: bool = False
    buildkit: bool = False
    github_actions: bool = False
    truncated_lines: int = 0
    bytes_read: int = 0


def detect_encoding(head: bytes) -> tuple[str, int]:
    """Return (codec name, BOM length) from the first bytes of a file."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    sample = head[:4096]
    if len(sample) >= 4:
        even_nuls = sample[0::2].count(0)
        odd_nuls = sample[1::2].count(0)
        half = len(sample) // 2
        # ASCII text in UTF-16 has a NUL in every other byte; binary junk does not look like that.
        if odd_nuls > 0.7 * half and even_nuls < 0.1 * half:
            return "utf-16-le", 0
        if even_nuls > 0.7 * half and odd_nuls < 0.1 * half:
            return "utf-16-be", 0
    return "utf-8", 0


class LineCleaner:
    """Strips CI/terminal wrapping from one line. Stateful only to learn that a log is BuildKit's."""

    def __init__(self, info: EnvelopeInfo) -> None:
        self.info = info

    def clean(self, line: str) -> str:
        if "\r" in line:
            # A bare CR means the terminal overwrote the line: what remains visible is the last part.
            # GitLab's `\e[0Ksection_start:..\r\e[0KHeader` resolves to the header this way.
            parts = [p for p in line.split("\r") if _ANSI_RE.sub("", p).strip()]
            line = parts[-1] if parts else ""
        if "\x1b" in line or "\x9b" in line:
            self.info.ansi = True
            line = _ANSI_RE.sub("", line)
        if line[:2].isdigit() and line[:4].isdigit():
            m = _GHA_TIMESTAMP_RE.match(line)
            if m:
                self.info.github_actions = True
                line = line[m.end() :]
        if line.startswith("##["):
            m = _GHA_COMMAND_RE.match(line)
            if m:
                line = line[m.end() :]
        elif line.startswith("#"):
            m = _BUILDKIT_STEP_RE.match(line)
            if m:
                self.info.buildkit = True
                line = line[m.end() :]
        elif self.info.buildkit and line[:1].isdigit():
            m = _BUILDKIT_RECAP_RE.match(line)
            if m:
                line = line[m.end() :]
        if line.startswith("section_"):
            line = _GITLAB_SECTION_RE.sub("", line)
        if _CONTROL_RE.search(line):
            line = _CONTROL_RE.sub("", line)
        return line


def iter_raw_lines(stream: BinaryIO, info: EnvelopeInfo, max_bytes: int | None = None) -> Iterator[str]:
    """Decode and split a byte stream into lines (without line terminators), bounded in length."""
    first = stream.read(CHUNK_BYTES if max_bytes is None else min(CHUNK_BYTES, max_bytes))
    encoding, bom = detect_encoding(first)
    info.encoding, info.bom = encoding, bom > 0
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    pending = ""
    skipping_rest = False  # inside an over-long line whose head was already produced
    chunk = first[bom:]
    info.bytes_read = len(first)
    while True:
        final = not chunk
        text = decoder.decode(chunk, final=final)
        if text:
            pieces = text.split("\n")
            pieces[0] = pending + pieces[0]
            pending = pieces.pop()
            for piece in pieces:
                if skipping_rest:
                    skipping_rest = False
                    continue
                if piece.endswith("\r"):
                    info.crlf = True
                    piece = piece[:-1]
                if len(piece) > MAX_LINE_CHARS:
                    info.truncated_lines += 1
                    piece = piece[:MAX_LINE_CHARS]
                yield piece
            if len(pending) > MAX_LINE_CHARS:
                if not skipping_rest:
                    info.truncated_lines += 1
                    yield pending[:MAX_LINE_CHARS]
                    skipping_rest = True
                pending = ""
        if final:
            break
        if max_bytes is not None and info.bytes_read >= max_bytes:
            break
        want = CHUNK_BYTES if max_bytes is None else min(CHUNK_BYTES, max_bytes - info.bytes_read)
        chunk = stream.read(want)
        info.bytes_read += len(chunk)
    if pending and not skipping_rest:
        if pending.endswith("\r"):
            pending = pending[:-1]
        yield pending


def iter_log_lines(stream: BinaryIO, info: EnvelopeInfo | None = None) -> Iterator[str]:
    """Clean lines of a log, envelope removed. `info` (if given) is filled in while reading."""
    info = info if info is not None else EnvelopeInfo()
    cleaner = LineCleaner(info)
    for raw in iter_raw_lines(stream, info):
        yield cleaner.clean(raw)


def decode_head(head: bytes) -> list[str]:
    """Clean lines of the first bytes of a file, for sniffing the format."""
    import io

    info = EnvelopeInfo()
    cleaner = LineCleaner(info)
    return [cleaner.clean(line) for line in iter_raw_lines(io.BytesIO(head), info)]
