"""The last lines of a log that no parser could read.

A log in a shape no parser knows (`vet: main.go:46:19: ...`, a linker we never saw, a script's
own `FAIL` line) used to reach the model as nothing but "not a format ci-agent reads": the one
line that named the broken file was lost. The end of a failed log is where tools print why they
stopped, so a bounded tail of it is kept instead (issue 15).

The tail is read by seeking to the end of the input afterwards, not by remembering lines while
parsing: the hot loop that reads millions of lines pays nothing for it. Lines are cleaned like
every parsed line (the CI envelope and ANSI escapes removed by `iter_log_lines`), then bounded:
at most `TAIL_LINES` lines, `TAIL_BYTES` bytes, `TAIL_LINE_CHARS` characters a line.
"""

from __future__ import annotations

import io
import os
from typing import BinaryIO

from ci_agent.envelope import detect_encoding, iter_log_lines

TAIL_LINES = 40
TAIL_BYTES = 3000
TAIL_LINE_CHARS = 300
_READ_BYTES = 8192  # read from the end; enough for TAIL_BYTES of text in any encoding we read


def bounded_tail(lines: list[str], max_lines: int = TAIL_LINES, max_bytes: int = TAIL_BYTES) -> list[str]:
    """The last lines, trailing blank ones dropped, each cut to TAIL_LINE_CHARS, within the bounds."""
    while lines and not lines[-1].strip():
        lines.pop()
    kept: list[str] = []
    used = 0
    for line in reversed(lines[-max_lines:]):
        if len(line) > TAIL_LINE_CHARS:
            line = line[:TAIL_LINE_CHARS] + " [...]"
        used += len(line.encode("utf-8", errors="replace")) + 1
        if used > max_bytes and kept:
            break
        kept.append(line)
    kept.reverse()
    while kept and not kept[0].strip():
        kept.pop(0)
    return kept


def read_tail(stream: BinaryIO, head: bytes) -> list[str]:
    """The clean, bounded last lines of `stream` (whose first bytes were `head`); [] when the
    stream cannot seek (a pipe read directly: its bytes are gone)."""
    try:
        if not stream.seekable():
            return []
        end = stream.seek(0, os.SEEK_END)
        encoding, bom = detect_encoding(head)
        start = max(bom, end - _READ_BYTES)
        prefix = b""
        if encoding.startswith("utf-16"):
            start += (start - bom) % 2  # stay on a code unit boundary
            prefix = head[:bom] if bom else b""
        stream.seek(start)
        data = stream.read(end - start)
    except (OSError, ValueError):
        return []
    if encoding.startswith("utf-16") and not prefix:
        # No BOM to tell the decoder the byte order: give it the one detect_encoding found.
        prefix = b"\xff\xfe" if encoding == "utf-16-le" else b"\xfe\xff"
    lines = list(iter_log_lines(io.BytesIO(prefix + data)))
    if start > bom and len(lines) > 1:
        lines = lines[1:]  # the first line began before what was read (unless it is the only one)
    return bounded_tail(lines)
