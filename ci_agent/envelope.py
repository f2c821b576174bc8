"""Log envelopes, handled once before any log parser sees a line.

Decodes UTF-8 / UTF-16 (with or without BOM), splits lines (LF, CRLF, and a bare CR: a classic
Mac line end, or a terminal overwrite whose every non-blank part is kept, so an error printed
before a progress bar overwrote it is still read),
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
# The wrappers below are removed from whole blocks of complete lines at once (`^` is each line's
# start), so the common case costs a few C-level passes per megabyte instead of Python work per line.
_GHA_TIMESTAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?", re.MULTILINE)
_GHA_COMMAND_RE = re.compile(
    r"^##\[(?:group|endgroup|section|command|debug|error|warning|notice|info)\]", re.MULTILINE
)
_BUILDKIT_STEP_RE = re.compile(r"^#\d+ \d+\.\d+ ", re.MULTILINE)
_BUILDKIT_RECAP_RE = re.compile(r"^\d+\.\d+ ", re.MULTILINE)
_GITLAB_SECTION_RE = re.compile(r"^section_(?:start|end):\d+:[^\s]*", re.MULTILINE)
# C0 controls except TAB and LF (which separates a block's lines), plus DEL and the invisible
# format characters that hide text.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")
_ASCII_CONTROLS = bytes([*range(0, 9), *range(11, 32), 127])


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
    """Strips CI/terminal wrapping from lines. Stateful only to learn that a log is BuildKit's."""

    def __init__(self, info: EnvelopeInfo) -> None:
        self.info = info

    def clean(self, line: str) -> str:
        """One line (no LF inside)."""
        return self.clean_block(line)

    def clean_block(self, block: str) -> str:
        """Complete lines joined by LF (no CR-LF pairs left); returns them cleaned, still LF-joined."""
        if "\r" in block:
            block = _split_overwrites(block.replace("\r\n", "\n"))
        if "\x1b" in block or "\x9b" in block:
            self.info.ansi = True
            block = _ANSI_RE.sub("", block)
        if "Z " in block or "Z\n" in block or block.endswith("Z"):
            block, n = _GHA_TIMESTAMP_RE.subn("", block)
            if n:
                self.info.github_actions = True
        if "##[" in block:
            block = _GHA_COMMAND_RE.sub("", block)
        if "#" in block:
            block, n = _BUILDKIT_STEP_RE.subn("", block)
            if n:
                self.info.buildkit = True
        if self.info.buildkit:
            block = _BUILDKIT_RECAP_RE.sub("", block)
        if "section_" in block:
            block = _GITLAB_SECTION_RE.sub("", block)
        if block.isascii():
            # Fast path for the common case: only C0/DEL can hide in ASCII, and bytes.translate finds them.
            ascii_bytes = block.encode("ascii")
            if len(ascii_bytes.translate(None, _ASCII_CONTROLS)) == len(ascii_bytes):
                return block
        return _CONTROL_RE.sub("", block)


def _split_overwrites(text: str) -> str:
    """Every bare CR ends a line: `error CS1002: ; expected\\rBuilding...` is two lines, both
    kept (a terminal shows only the last, but what was printed was printed). Blank parts (a CR
    before the LF, an erase-line escape alone) are dropped, and so is GitLab's section marker in
    its `\\e[0Ksection_start:..\\r\\e[0KHeader` idiom, which leaves the header."""
    return "\n".join(_overwrite_parts(line) if "\r" in line else line for line in text.split("\n"))


def _overwrite_parts(line: str) -> str:
    parts = [p for p in line.split("\r") if _ANSI_RE.sub("", p).strip()]
    shown = [p for i, p in enumerate(parts)
             if i == len(parts) - 1 or not _GITLAB_SECTION_RE.match(_ANSI_RE.sub("", p))]
    return "\n".join(shown)


def iter_raw_lines(stream: BinaryIO, info: EnvelopeInfo, max_bytes: int | None = None) -> Iterator[str]:
    """Decode and split a byte stream into lines (without line terminators), bounded in length."""
    for block in iter_raw_blocks(stream, info, max_bytes):
        yield from _split_bounded(block, info)


def iter_raw_blocks(stream: BinaryIO, info: EnvelopeInfo, max_bytes: int | None = None) -> Iterator[str]:
    """Decoded text in blocks of complete lines joined by LF (CR-LF folded).

    A line longer than MAX_LINE_CHARS with no LF in sight is produced cut, and its rest skipped,
    so memory stays bounded; shorter over-long lines are cut when the block is split.
    """
    first = stream.read(CHUNK_BYTES if max_bytes is None else min(CHUNK_BYTES, max_bytes))
    encoding, bom = detect_encoding(first)
    info.encoding, info.bom = encoding, bom > 0
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    pending = ""
    held_cr = False  # a CR at the end of the last chunk: the LF of a CR-LF may come next
    skipping_rest = False  # inside an over-long line whose head was already produced
    chunk = first[bom:]
    info.bytes_read = len(first)
    while True:
        final = not chunk
        text = decoder.decode(chunk, final=final)
        if text:
            text = pending + ("\r" if held_cr else "") + text
            held_cr = not final and text.endswith("\r")
            if held_cr:
                text = text[:-1]
            if "\r" in text:
                if "\r\n" in text:
                    info.crlf = True
                    text = text.replace("\r\n", "\n")
                if "\r" in text:
                    text = _split_overwrites(text)
            last_lf = text.rfind("\n")
            if last_lf == -1:
                pending = text
            else:
                pending, complete = text[last_lf + 1 :], text[:last_lf]
                if skipping_rest:
                    # The block starts with the tail of an over-long line whose head was produced.
                    skipping_rest = False
                    cut = complete.find("\n")
                    complete = "" if cut == -1 else complete[cut + 1 :]
                    if cut != -1:
                        yield _fold_block(complete, info)
                else:
                    yield _fold_block(complete, info)
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


def _fold_block(block: str, info: EnvelopeInfo) -> str:
    """CR-LF to LF for a block of complete lines."""
    if "\r\n" in block or block.endswith("\r"):
        info.crlf = True
        block = block.replace("\r\n", "\n")
        if block.endswith("\r"):
            block = block[:-1]
    return block


def _split_bounded(block: str, info: EnvelopeInfo) -> list[str]:
    """The block's lines, each cut at MAX_LINE_CHARS (max(map(len)) keeps the check in C)."""
    lines = block.split("\n")
    if len(block) > MAX_LINE_CHARS and max(map(len, lines)) > MAX_LINE_CHARS:
        for i, line in enumerate(lines):
            if len(line) > MAX_LINE_CHARS:
                info.truncated_lines += 1
                lines[i] = line[:MAX_LINE_CHARS]
    return lines


def iter_log_lines(stream: BinaryIO, info: EnvelopeInfo | None = None) -> Iterator[str]:
    """Clean lines of a log, envelope removed. `info` (if given) is filled in while reading."""
    info = info if info is not None else EnvelopeInfo()
    cleaner = LineCleaner(info)
    for block in iter_raw_blocks(stream, info):
        yield from _split_bounded(cleaner.clean_block(block), info)


def decode_head(head: bytes) -> list[str]:
    """Clean lines of the first bytes of a file, for sniffing the format."""
    import io

    return list(iter_log_lines(io.BytesIO(head)))
