"""Turn the markers of what the model was shown back into the file's characters.

Excerpts and tool results show invisible and special characters as `⟦U+XXXX⟧` (`ci_agent.exact`),
and a model copies them into its diff as it saw them: a BOM before `using System;`, a `<` that
would have closed our data fence, a CR of a file with mixed line endings. Every hunk line (context,
removed and added) gets its characters back before anything polices or applies the patch, so
context matches the file and an added invisible character is judged as what it is
(`invisible.py`).
"""

from __future__ import annotations

from dataclasses import replace

from ci_agent.exact import unmark
from ci_agent.patch.diff import FilePatch, Hunk, Patch


def _hunk(hunk: Hunk) -> Hunk:
    lines = tuple(line[:1] + unmark(line[1:]) if line[:1] in (" ", "+", "-") else line
                  for line in hunk.lines)
    return hunk if lines == hunk.lines else replace(hunk, lines=lines)


def _file(fp: FilePatch) -> FilePatch:
    return replace(fp, hunks=tuple(_hunk(h) for h in fp.hunks)) if fp.hunks else fp


def unmark_patch(patch: Patch) -> Patch:
    """`patch` with the markers in its hunk lines turned back into characters."""
    return Patch(tuple(_file(fp) for fp in patch.files))
