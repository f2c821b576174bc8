"""A lenient parser of the unified diffs models write, into the typed model of diff.py.

The engine never hands git the text it received: it parses it into the model, polices the
model, and renders the model back (render.py). So git can only act on what the policy has
seen: a header line this parser does not know is dropped, never obeyed.

Hunk line counts in `@@` headers are recomputed from the lines (models often get them wrong);
the declared counts are only used to tell hunk lines from prose that follows the last hunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ci_agent.patch.diff import NULL_PATH, UNKNOWN_START, FilePatch, Hunk, Patch


class PatchParseError(ValueError):
    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


_HUNK_HEADER = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? ?(?:@@+(.*))?$")
_BARE_HUNK_HEADER = re.compile(r"^@@+\s*(?:@@+)?\s*$")
_MODE = re.compile(r"^[0-7]{6}$")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(text: str) -> tuple[str, str]:
    """Split a C-quoted name (git's core.quotePath form) off the front of `text`."""
    out = bytearray()
    i = 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", errors="surrogateescape"), text[i + 1 :]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in _C_ESCAPES:
                out.append(_C_ESCAPES[nxt])
                i += 2
                continue
            octal = text[i + 1 : i + 4]
            if re.fullmatch(r"[0-3][0-7]{2}", octal):
                out.append(int(octal, 8))
                i += 4
                continue
            raise PatchParseError(f"bad escape in quoted path {text!r}")
        out += ch.encode("utf-8", errors="surrogateescape")
        i += 1
    raise PatchParseError(f"unterminated quoted path {text!r}")


def _clean_path(name: str) -> str:
    while name.startswith("./"):
        name = name[2:]
    return re.sub(r"/{2,}", "/", name)


def _header_name(rest: str) -> str | None:
    """The name on a ---/+++ line: quoted, or up to a tab (GNU diff timestamps follow one)."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        name, _ = unquote(rest)
    else:
        name = rest.split("\t", 1)[0].rstrip(" ")
    return None if name == NULL_PATH else name


def _plain_name(rest: str) -> str:
    rest = rest.rstrip("\r")
    return unquote(rest)[0] if rest.startswith('"') else rest.rstrip(" ")


def _git_line_names(rest: str) -> tuple[str, str] | None:
    """Names on a `diff --git` line; only unambiguous when quoted or both names are equal."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        first, tail = unquote(rest)
        tail = tail.lstrip(" ")
        second = unquote(tail)[0] if tail.startswith('"') else tail
        return first, second
    if len(rest) % 2 == 1:  # "X Y" with X == Y: both halves around the middle space
        half = len(rest) // 2
        first, second = rest[:half], rest[half + 1 :]
        if rest[half] == " " and first.removeprefix("a/") == second.removeprefix("b/"):
            return first, second
    parts = rest.split(" ")
    if len(parts) == 2 and '"' not in parts[1]:
        return parts[0], parts[1]
    return None


def _strip_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    """Drop git's a/ b/ prefixes when the patch has them; keep names as they are otherwise."""
    old_ok = old is None or old.startswith("a/")
    new_ok = new is None or new.startswith("b/")
    if old_ok and new_ok and (old is not None or new is not None):
        return (old[2:] if old else None), (new[2:] if new else None)
    return old, new


def _is_hunk_line(line: str) -> bool:
    return line == "" or line[0] in " +-\\"


def _starts_file(lines: list[str], i: int) -> bool:
    line = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if line.startswith("diff --git "):
        return True
    if line.startswith("diff -"):  # `diff -u old new` from diff(1), if its --- line follows
        return nxt.startswith("--- ")
    return line.startswith("--- ") and nxt.startswith("+++ ")


def _take_hunk(lines: list[str], i: int, declared: tuple[int, int] | None) -> tuple[list[str], int]:
    """Collect the lines of one hunk starting at lines[i]; return them and the next index.

    The run of hunk-looking lines ends at the next header. When the declared counts fit the run
    (give or take blank lines at its end, which are usually just spacing before prose) they
    decide; otherwise every line of the run is taken and the counts are recomputed.
    """
    run: list[str] = []
    old = new = 0
    j = i
    while j < len(lines):
        line = lines[j]
        counts_met = declared is not None and old >= declared[0] and new >= declared[1]
        if line.startswith("@@") or (not _is_hunk_line(line)):
            break
        if (counts_met or declared is None) and _starts_file(lines, j):
            break
        run.append(line)
        if line == "" or line[0] in " -":
            old += 1
        if line == "" or line[0] in " +":
            new += 1
        j += 1
    end = len(run)
    while end and run[end - 1] == "":
        end -= 1
    if declared is not None:
        o = n = 0
        for k, line in enumerate(run):
            if line == "" or line[0] in " -":
                o += 1
            if line == "" or line[0] in " +":
                n += 1
            if (o, n) == declared and k + 1 >= end:
                end = k + 1
                if end < len(run) and run[end].startswith("\\"):
                    end += 1
                break
    body = [" " if line == "" else line for line in run[:end]]
    return body, i + len(run)


@dataclass
class _FileBuilder:
    old: str | None = None
    new: str | None = None
    git_names: tuple[str, str] | None = None
    have_minus_plus: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    new_file: bool = False
    deleted: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    copy: bool = False
    binary: bool = False
    hunks: list[Hunk] | None = None

    def build(self) -> FilePatch:
        mentioned: list[str] = []
        old, new = self.old, self.new
        if self.have_minus_plus:
            old, new = _strip_prefixes(old, new)
            mentioned += [p for p in (old, new) if p is not None]
        if self.git_names is not None:
            g_old, g_new = _strip_prefixes(*self.git_names)
            mentioned += [p for p in (g_old, g_new) if p is not None]
            if not self.have_minus_plus:
                old, new = g_old, g_new
        if self.rename_from is not None or self.rename_to is not None:
            old = self.rename_from if self.rename_from is not None else old
            new = self.rename_to if self.rename_to is not None else new
            mentioned += [p for p in (self.rename_from, self.rename_to) if p is not None]
        if self.new_file:
            old = None
        if self.deleted:
            new = None
        if old is None and new is None:
            raise PatchParseError("a file header names no file (both sides are /dev/null)")
        if not (self.new_file or self.deleted) and (self.old_mode is None) != (self.new_mode is None):
            raise PatchParseError("`old mode` and `new mode` must come together", new or old or "")
        old = _clean_path(old) if old is not None else None
        new = _clean_path(new) if new is not None else None
        hunks = tuple(self.hunks or ())
        if not hunks and not (self.binary or self.copy or self.new_file or self.deleted
                              or old != new or self.old_mode != self.new_mode):
            raise PatchParseError(f"no hunks for {new or old}", new or old or "")
        return FilePatch(
            old_path=old,
            new_path=new,
            hunks=hunks,
            old_mode=self.old_mode,
            new_mode=self.new_mode,
            # different names on the two sides are a rename whatever the headers say: git
            # applies `diff --git a/x b/y` as one, so the policy must see it as one too
            rename=old is not None and new is not None and old != new and not self.copy,
            copy=self.copy,
            binary=self.binary,
            mentioned=tuple(dict.fromkeys(_clean_path(p) for p in mentioned)),
        )


def _header_line(fb: _FileBuilder, line: str) -> bool:
    """Apply one extended header line to `fb`; False when it is not one we know."""
    line = line.rstrip("\r")
    key, _, value = line.partition(" ")
    if line.startswith(("old mode ", "new mode ", "new file mode ", "deleted file mode ")):
        mode = line.rsplit(" ", 1)[1]
        if not _MODE.match(mode):
            raise PatchParseError(f"bad file mode in {line!r}")
        if line.startswith("old mode ") or line.startswith("deleted file mode "):
            fb.old_mode = mode
        else:
            fb.new_mode = mode
        fb.new_file = fb.new_file or line.startswith("new file mode ")
        fb.deleted = fb.deleted or line.startswith("deleted file mode ")
        return True
    if line.startswith(("rename from ", "rename old ", "copy from ")):
        fb.rename_from = _plain_name(line.split(" ", 2)[2])
        fb.copy = fb.copy or line.startswith("copy ")
        return True
    if line.startswith(("rename to ", "rename new ", "copy to ")):
        fb.rename_to = _plain_name(line.split(" ", 2)[2])
        fb.copy = fb.copy or line.startswith("copy ")
        return True
    if line.startswith("GIT binary patch") or (line.startswith("Binary files ") and line.endswith(" differ")):
        fb.binary = True
        return True
    return key in ("index", "similarity", "dissimilarity") and bool(value)


def parse_patch(text: str) -> Patch:
    """Parse every file patch in `text`, skipping prose before, between and after them."""
    lines = text.split("\n")
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        if not _starts_file(lines, i):
            i += 1
            continue
        fb = _FileBuilder()
        line = lines[i]
        if line.startswith("diff --git "):
            fb.git_names = _git_line_names(line[len("diff --git ") :])
            i += 1
        elif line.startswith("diff -"):
            i += 1  # `diff -u old new` as printed by diff(1): the ---/+++ lines follow
        while i < len(lines):
            line = lines[i]
            if (fb.hunks is None and not fb.have_minus_plus and line.startswith("--- ")
                    and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
                fb.old = _header_name(line[4:])
                fb.new = _header_name(lines[i + 1][4:])
                fb.have_minus_plus = True
                i += 2
                continue
            if line.startswith("@@"):
                fb.hunks = fb.hunks or []
                hunk, i = _parse_hunk(lines, i, fb.new or fb.old or "")
                fb.hunks.append(hunk)
                continue
            if fb.hunks is None and not fb.have_minus_plus and _header_line(fb, line):
                i += 1
                continue
            break
        if fb.git_names is None and not fb.have_minus_plus and fb.rename_from is None:
            raise PatchParseError(
                "a `diff --git` line whose file names cannot be read; quote names with spaces"
            )
        files.append(fb.build())
    return Patch(tuple(files))


def _parse_hunk(lines: list[str], i: int, path: str) -> tuple[Hunk, int]:
    header = lines[i].rstrip("\r")
    match = _HUNK_HEADER.match(header)
    if match:
        old_start, new_start = int(match[1]), int(match[3])
        # an omitted count means 1 (`@@ -3 +3 @@`)
        declared: tuple[int, int] | None = (
            int(match[2]) if match[2] is not None else 1,
            int(match[4]) if match[4] is not None else 1,
        )
        section = match[5] or ""
    elif _BARE_HUNK_HEADER.match(header):
        old_start = new_start = UNKNOWN_START  # located against the file on disk later
        declared, section = None, ""
    else:
        raise PatchParseError(f"unreadable hunk header {header!r}", path)
    body, nxt = _take_hunk(lines, i + 1, declared)
    if not any(line[:1] in (" ", "+", "-") for line in body):
        raise PatchParseError(f"empty hunk after {header!r}", path)
    return Hunk(old_start, new_start, tuple(body), section), nxt
