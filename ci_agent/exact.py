"""A file's text as the model is shown it: exact, with what cannot be seen marked, reversibly.

Excerpts (`ci_agent.context`) and the read-only tools (`ci_agent.llm.tools`) show repository
files through `show_file`/`mark`, and the patch engine turns the markers of a submitted diff
back with `unmark`, so a line copied from what the model saw applies to the real file.

- Characters a reader cannot see or tell apart are written as `⟦U+XXXX⟧`, one marker per
  character: control characters (a CR that is not part of a CRLF line ending too), format
  characters (a byte-order mark, zero-width spaces and joiners, bidi overrides and isolates, tag
  characters), variation selectors, blank letters (Hangul fillers), odd spaces (no-break, em,
  ideographic), line and paragraph separators, lone surrogates and unassigned code points.
  Tabs and plain spaces are shown as they are.
- `⟦` itself is marked, so every `⟦U+XXXX⟧` in shown text is a marker: `unmark(mark(x)) == x`.
- The `<` that would open or close our `<untrusted-data>` fence is marked too: a file cannot
  end the fence it is shown in, and the line still copies back exactly.
- A file whose every line ends with CRLF is shown without the CRs (`ShownFile.crlf`); the patch
  engine gives a diff for such a file CRLF endings again (`patch.extract.fit_file`).
- Secrets are redacted (`[REDACTED:...]`) before marking; the lines that changed are listed in
  `ShownFile.redacted`, since they are not the file's text and cannot serve as diff context.

Text that is not UTF-8 is decoded with replacement characters: those lines do not copy back.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ci_agent.redact import FENCE_TAG

OPEN, CLOSE = "\u27e6", "\u27e7"  # ⟦ ⟧ (mathematical white square brackets)

# Visible in most fonts' eyes as nothing, or as a space, yet categorised as letters or marks.
_BLANK = frozenset({
    0x034F,  # combining grapheme joiner
    0x115F, 0x1160, 0x3164, 0xFFA0,  # Hangul fillers
    0x17B4, 0x17B5,  # Khmer inherent vowels
    *range(0x180B, 0x1810),  # Mongolian variation selectors and vowel separator
    0x2800,  # braille pattern blank
    *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0),  # variation selectors
})
_SPECIAL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp", "Zs"})
# Everything but a tab and printable ASCII goes to `_shown` for a closer look; a `<` only when
# it starts one of our fence tags (the same shape `redact.fence` neutralises).
_CANDIDATE_RE = re.compile(rf"[^\t\x20-\x7e]|<(?=[ \t]*/?[ \t]*(?i:{FENCE_TAG}))")
_MARKER_RE = re.compile(rf"{OPEN}U\+([0-9A-F]{{4,6}}){CLOSE}")


@lru_cache(maxsize=4096)
def is_special(char: str) -> bool:
    """Whether `char` is shown as a marker (see the module docstring)."""
    code = ord(char)
    if char in ("\t", " "):
        return False
    return (code in _BLANK or char == OPEN or unicodedata.category(char) in _SPECIAL_CATEGORIES)


def marker(char: str) -> str:
    return f"{OPEN}U+{ord(char):04X}{CLOSE}"


def _shown(m: re.Match[str]) -> str:
    char = m.group(0)
    return marker(char) if char == "<" or is_special(char) else char


def mark(line: str) -> str:
    """One line of a file (no line break) with its special characters marked."""
    return _CANDIDATE_RE.sub(_shown, line)


def _original(m: re.Match[str]) -> str:
    code = int(m.group(1), 16)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF or code == 0x0A:
        return m.group(0)  # not a character a line can hold: the model's own text
    char = chr(code)
    return char if char == "<" or is_special(char) else m.group(0)


def unmark(text: str) -> str:
    """`text` with every marker `mark` could have written turned back into its character."""
    return _MARKER_RE.sub(_original, text) if OPEN in text else text


# --------------------------------------------------------------------------- whole files


@dataclass(frozen=True, slots=True)
class ShownFile:
    lines: tuple[str, ...]  # marked, index 0 = line 1
    redacted: frozenset[int] = frozenset()  # 1-based numbers of lines a secret was cut from
    crlf: bool = False  # every line ended with CRLF; the CRs are not shown


def split_lines(text: str) -> tuple[list[str], bool]:
    """The file's lines as git counts them (split at LF only) and whether all end in CRLF,
    in which case the CRs are dropped (any other CR stays, to be marked)."""
    lines = text.split("\n")
    terminated = len(lines) - 1
    if lines[-1] == "":
        lines.pop()
    crlf = terminated > 0 and all(line.endswith("\r") for line in lines[:terminated])
    if crlf:
        lines[:terminated] = [line[:-1] for line in lines[:terminated]]
    return lines, crlf


def _redacted_lines(lines: list[str], redact: Callable[[str], str]) -> list[str]:
    # Whole text at once, so a secret spanning lines is found; the redactor keeps the number
    # of lines, but fall back to one line at a time if some odd separator changed it.
    whole = redact("\n".join(lines)).split("\n")
    out = whole if len(whole) == len(lines) else [redact(line).replace("\n", " ") for line in lines]
    for k, line in enumerate(out):
        # A secret broken up by an invisible character is still a secret.
        if line == lines[k] and _CANDIDATE_RE.search(line):
            plain = "".join(c for c in line if not is_special(c))
            if plain != line and (cut := redact(plain)) != plain:
                out[k] = cut
    return out


def show_lines(lines: list[str], redact: Callable[[str], str], first: int = 1) -> tuple[list[str], set[int]]:
    """`lines` (numbered from `first`) redacted and marked, and the numbers of redacted lines."""
    cut = _redacted_lines(lines, redact)
    redacted = {first + k for k, (was, now) in enumerate(zip(lines, cut, strict=True)) if was != now}
    return [mark(line) for line in cut], redacted


def show_file(text: str, redact: Callable[[str], str]) -> ShownFile:
    """A whole file's text as the model is shown it."""
    lines, crlf = split_lines(text)
    shown, redacted = show_lines(lines, redact)
    return ShownFile(tuple(shown), frozenset(redacted), crlf)


def fence(label: str, shown: str) -> str:
    """Shown text (already marked, so it cannot close the fence) in the block the system prompt
    calls data; the label is tamed as `redact.fence` tames it."""
    clean_label = re.sub(r"[^\w .,:/@+-]", "_", label)[:200]
    body = shown if shown.endswith("\n") else shown + "\n"
    return f'<{FENCE_TAG} source="{clean_label}">\n{body}</{FENCE_TAG}>'
