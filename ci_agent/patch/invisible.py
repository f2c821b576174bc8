"""Characters a reviewer cannot see, in lines a patch adds (Trojan Source, CVE-2021-42574, and
invisible payloads hidden in variation selectors or tag characters).

A bidirectional control makes code read differently from how the compiler reads it; a
zero-width character makes two identifiers look the same; tag characters and variation
selectors can carry a whole hidden program. An added line with one is rejected unless the file
already holds that character (an emoji sequence in a test), because then it is the project's
text, not the model's trick; a bidirectional control only where the hunk edits a line that had it
(a right-to-left UI string being reworded).

Markers (`⟦U+202E⟧`, `ci_agent.exact`) were turned back into characters before this check
(`markers.py`), so a model cannot smuggle one in by writing what it was shown.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from ci_agent.patch import lines
from ci_agent.patch.diff import FilePatch, Patch, Rejection

_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_INVISIBLE = {
    0x00AD,  # soft hyphen
    0x034F,  # combining grapheme joiner
    0x115F, 0x1160, 0x3164, 0xFFA0,  # Hangul fillers (blank "letters" valid in identifiers)
    0x17B4, 0x17B5, 0x180E,  # Khmer inherent vowels, Mongolian vowel separator
    *range(0x200B, 0x200E),  # zero-width space, non-joiner, joiner
    *range(0x2060, 0x2065),  # word joiner, invisible math operators
    0x2028, 0x2029,  # line / paragraph separator: a line break to JavaScript, not to the reader
    0xFEFF,  # zero-width no-break space (a byte-order mark only as a file's first character)
    *range(0xFFF9, 0xFFFC),  # interlinear annotations
    *range(0xE0000, 0xE0080),  # tag characters
    # variation selectors 1-14 and the supplement: VS15/VS16 (U+FE0E/FE0F) pick text or emoji
    # style for a symbol and are ordinary in strings; the others can carry a hidden payload
    *range(0xFE00, 0xFE0E), *range(0xE0100, 0xE01F0),
}
HIDDEN = frozenset(_BIDI | _INVISIBLE)


def _name(c: str) -> str:
    return f"U+{ord(c):04X} {unicodedata.name(c, 'invisible character')}"


def _hidden_in(text: str) -> set[str]:
    return {c for c in text if ord(c) in HIDDEN}


def _added_with_allowed(fp: FilePatch, before: str | None) -> list[tuple[lines.Line, set[str]]]:
    """Each added line (numbered as in the new file) with the hidden characters it may carry:
    an invisible character the file already holds; a bidirectional control only when a line
    the same hunk removes had it (the line being edited), since one anywhere else in the file
    could reorder how this line reads."""
    in_file = {c for c in _hidden_in(before or "") if ord(c) not in _BIDI}
    out: list[tuple[lines.Line, set[str]]] = []
    for hunk in fp.hunks:
        edited = {c for line in hunk.lines if line[:1] == "-" for c in _hidden_in(line) if ord(c) in _BIDI}
        number = hunk.new_start
        for line in hunk.lines:
            if line[:1] == "+":
                out.append((lines.Line(number, line[1:].rstrip("\r")), in_file | edited))
            if line[:1] in ("+", " "):
                number += 1
    return out


def file_rejections(fp: FilePatch, before: str | None) -> list[Rejection]:
    """The first added line of `fp` with a hidden character it may not add (`before`: the
    file's current text, None for a new file)."""
    for line, allowed in _added_with_allowed(fp, before):
        number, text = line.number, line.text
        bom = text[:1] == "\ufeff" and number == 1  # a byte-order mark is allowed where it belongs
        new = sorted(_hidden_in(text[1:] if bom else text) - allowed)
        if new:
            kind = "bidirectional control" if ord(new[0]) in _BIDI else "invisible character"
            names = ", ".join(_name(c) for c in new[:3])
            where = "the line it replaces" if ord(new[0]) in _BIDI else f"`{fp.path}`"
            return [Rejection("text.invisible", fp.path, f"Line {number} of `{fp.path}` adds a {kind} "
                              f"({names}) that {where} does not already contain. Such characters "
                              "make code read differently from how it runs. Remove it; if the text "
                              "really needs one, write it as an escape sequence (e.g. `\\u202e`).")]
    return []


def rejections(patch: Patch, read: Callable[[str], str | None]) -> list[Rejection]:
    """`read(path)` gives a file's current text (None: it does not exist yet)."""
    out: list[Rejection] = []
    for fp in patch.files:
        if fp.binary or fp.new_path is None:
            continue
        if any(_hidden_in(line) for h in fp.hunks for line in h.lines if line[:1] == "+"):
            out += file_rejections(fp, read(fp.old_path) if fp.old_path else None)
    return out
