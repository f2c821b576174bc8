"""Reading a log for infrastructure signals: bounded in bytes and time, whatever the log holds.

A log is decoded and cleaned by the same envelope reader the parsers use (`ci_agent.envelope`:
UTF-8/UTF-16, CRLF and bare CR, ANSI, GitHub timestamps and `##[error]` prefixes, GitLab
sections, NULs, lines cut at 64 KiB). A log larger than `MAX_SCAN_BYTES` is read at its head and
its tail only (half each): the environment's failure is what stopped the job, so it is near the
end, and a restore or setup failure is near the start. Blocks of lines go through one prefilter
keywords (`infra_signals.KEYWORDS`, found by `str.find` at C speed); only the lines holding one
are cleaned and matched against each signal.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from ci_agent.envelope import EnvelopeInfo, LineCleaner, detect_encoding, iter_raw_blocks
from ci_agent.triage.infra_signals import KEYWORDS, Category, match_signal

MAX_SCAN_BYTES = 16 << 20
MAX_HITS_PER_LOG = 20  # enough to know the categories and show a few lines
# Lines the prefilter finds that no signal matches (a test printing "Killed" on every line):
# past this many the log has told what it will, and the scan stops (bounded time).
MAX_CANDIDATES_PER_LOG = 20_000
EVIDENCE_CHARS = 200


@dataclass(frozen=True, slots=True)
class Hit:
    category: Category
    line: str  # cleaned, cut to EVIDENCE_CHARS (untrusted text)
    source: str


def scan_log(path: Path, max_bytes: int = MAX_SCAN_BYTES) -> list[Hit]:
    """The signals in one log (at most MAX_HITS_PER_LOG); an unreadable file has none."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            return list(_hits(_window(fh, size, max_bytes), path.name))
    except OSError:
        return []


def _hits(stream: BinaryIO, source: str) -> Iterator[Hit]:
    info = EnvelopeInfo()
    cleaner = LineCleaner(info)
    count = candidates = 0
    for block in iter_raw_blocks(stream, info):
        for line in candidate_lines(block):
            found = match_signal(cleaner.clean(line).strip())
            if found is None:
                candidates += 1
                if candidates >= MAX_CANDIDATES_PER_LOG:
                    return
                continue
            signal, where = found
            yield Hit(signal.category, evidence_text(where.string, where.start()), source)
            count += 1
            if count >= MAX_HITS_PER_LOG:
                return


def candidate_lines(block: str) -> list[str]:
    """The lines of a block (LF-joined) that hold a keyword, in order, each once."""
    starts: set[int] = set()
    for keyword in KEYWORDS:
        pos = block.find(keyword)
        while pos != -1:
            start = block.rfind("\n", 0, pos) + 1
            starts.add(start)
            end = block.find("\n", pos)
            if end == -1 or len(starts) > MAX_CANDIDATES_PER_LOG:
                break
            pos = block.find(keyword, end)
    lines = []
    for start in sorted(starts):
        end = block.find("\n", start)
        lines.append(block[start:end if end != -1 else len(block)])
    return lines


def evidence_text(text: str, focus: int = 0) -> str:
    """One line of untrusted text, at most EVIDENCE_CHARS long and showing the part at `focus`
    (where the signal is); control characters become spaces."""
    start = 0 if focus < EVIDENCE_CHARS // 2 else focus - EVIDENCE_CHARS // 4
    cut = text[start:start + EVIDENCE_CHARS + 1]
    flat = "".join(ch if ch.isprintable() else " " for ch in cut).strip()
    if start:
        flat = "…" + flat
    return flat if len(flat) <= EVIDENCE_CHARS else flat[:EVIDENCE_CHARS - 1] + "…"


def _window(fh: BinaryIO, size: int, max_bytes: int) -> BinaryIO:
    """The whole file when it fits, else its head and tail joined by a line break."""
    if size <= max_bytes:
        return fh
    half = max_bytes // 2
    head = fh.read(half)
    encoding, _ = detect_encoding(head[:4096])
    utf16 = encoding.startswith("utf-16")
    tail_start = size - half
    if utf16 and tail_start % 2:  # stay on a code unit boundary
        tail_start += 1
    if utf16 and len(head) % 2:
        head = head[:-1]
    fh.seek(tail_start)
    tail = fh.read(half)
    joint = "\n".encode(encoding)
    # BytesIO of ≤ max_bytes: bounded memory, and the envelope reader decodes it in one go.
    return cast(BinaryIO, io.BytesIO(head + joint + tail))
