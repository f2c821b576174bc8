"""Render the patch model as canonical git diff text: the only text git ever reads from us.

Names are C-quoted the way git writes them when they hold quotes, backslashes, control or
non-ASCII characters; counts come from the lines; new and deleted files get the mode lines
`git apply` needs.
"""

from __future__ import annotations

import re

from ci_agent.patch.diff import NULL_PATH, FilePatch, Hunk, Patch

_SAFE = re.compile(r"^[\x20-\x7e]*$")


def quote(name: str) -> str:
    """git's C-quoting, used when a name has a quote, backslash, control or non-ASCII char."""
    if _SAFE.match(name) and '"' not in name and "\\" not in name:
        return name
    out = ['"']
    for byte in name.encode("utf-8", errors="surrogateescape"):
        ch = chr(byte)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    out.append('"')
    return "".join(out)


def _side(prefix: str, name: str | None) -> str:
    if name is None:
        return NULL_PATH
    quoted = quote(prefix + name)
    # git ends a name containing a space with a tab so the name's end is unambiguous
    return quoted + "\t" if " " in quoted and not quoted.startswith('"') else quoted


def render_file(fp: FilePatch, index_mode: str | None = None) -> str:
    old = fp.old_path if fp.old_path is not None else fp.new_path
    new = fp.new_path if fp.new_path is not None else fp.old_path
    out = [f"diff --git {quote('a/' + (old or ''))} {quote('b/' + (new or ''))}"]
    if fp.is_new:
        out.append(f"new file mode {fp.new_mode or '100644'}")
    elif fp.is_deleted:
        out.append(f"deleted file mode {fp.old_mode or index_mode or '100644'}")
    elif fp.old_mode and fp.new_mode and fp.old_mode != fp.new_mode:
        out += [f"old mode {fp.old_mode}", f"new mode {fp.new_mode}"]
    # The policy rejects copies and binary patches; they are still rendered faithfully so the
    # text can never mean something other than the model (exactly these names do).
    verb = "copy" if fp.copy else "rename"
    if (fp.rename or fp.copy) and not fp.is_new and not fp.is_deleted:
        out += [f"{verb} from {quote(fp.old_path or '')}", f"{verb} to {quote(fp.new_path or '')}"]
    if fp.binary:
        out.append(f"Binary files {_side('a/', fp.old_path)} and {_side('b/', fp.new_path)} differ")
    if fp.hunks:
        out.append(f"--- {_side('a/', fp.old_path)}")
        out.append(f"+++ {_side('b/', fp.new_path)}")
        for hunk in fp.hunks:
            out.append(_hunk_header(fp, hunk))
            out.extend(hunk.lines)
    return "\n".join(out) + "\n"


def _hunk_header(fp: FilePatch, hunk: Hunk) -> str:
    old_start, new_start = max(hunk.old_start, 0), max(hunk.new_start, 0)
    if fp.is_new:
        old_start, new_start = 0, 1 if hunk.new_count else 0
    elif fp.is_deleted:
        old_start, new_start = 1 if hunk.old_count else 0, 0
    section = hunk.section if hunk.section.startswith(" ") or not hunk.section else " " + hunk.section
    return f"@@ -{old_start},{hunk.old_count} +{new_start},{hunk.new_count} @@{section}"


def render_patch(patch: Patch, index_modes: dict[str, str] | None = None) -> str:
    modes = index_modes or {}
    return "".join(render_file(fp, modes.get(fp.old_path or "")) for fp in patch.files)
