"""The context as Markdown for the user turn; repository text only inside fences.

The words are `ci_agent/templates/context.md.j2`; `fit` measures the same pieces to keep the
rendering within its byte budget, so each piece has its own function here.
"""

from __future__ import annotations

import re

from ci_agent import exact
from ci_agent.context.values import Context, Excerpt, GitContext
from ci_agent.redact import fence, sanitize_untrusted
from ci_agent.render.prose import Prose

SAY = Prose("context.md.j2")


def plain(text: str) -> str:
    """Text from the repository put outside a fence (headings): one line, tame characters."""
    return re.sub(r"[^\w .,:;/@+()#'=*?!-]", "_", sanitize_untrusted(text).replace("\n", " "))[:300]


def render_excerpt(ex: Excerpt) -> str:
    width = len(str(ex.end))
    body = "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(ex.lines, ex.start))
    # The lines are the file's exact text, specials marked (`exact`): not sanitised again here.
    return SAY("excerpt", path=plain(ex.path), whole_file=ex.whole_file, start=ex.start, end=ex.end,
               reasons=plain("; ".join(ex.reasons)), redacted=ex.redacted,
               body=exact.fence(f"{ex.path}:{ex.start}-{ex.end}", body))


def render_diff(git_ctx: GitContext) -> str:
    if git_ctx.diff_title is None or git_ctx.diff is None:
        return ""
    return SAY("diff", title=plain(git_ctx.diff_title),
               messages=fence("commit messages", git_ctx.messages) if git_ctx.messages else "",
               listing=fence("changed files", git_ctx.listing) if git_ctx.listing else "",
               skipped=plain(git_ctx.skipped) if git_ctx.skipped else "",
               body=exact.fence("git diff", git_ctx.diff) if git_ctx.diff else "",  # marked: as is
               note=plain(git_ctx.diff_note) if git_ctx.diff_note else "")


def render_context(ctx: Context) -> str:
    """The context as Markdown for the user turn; "" when there is nothing to show."""
    parts: list[str] = []
    if ctx.excerpts:
        parts.append(SAY("excerpts_heading"))
        parts.extend(render_excerpt(ex) for ex in ctx.excerpts)
    if ctx.git is not None:
        parts.append(SAY("git", status=fence("git status", ctx.git.summary)))
        parts.append(render_diff(ctx.git))
    if ctx.omitted or ctx.notes:
        parts.append(SAY("notes_heading"))
        parts.extend(SAY("note", text=plain(line)) for line in (*ctx.omitted, *ctx.notes))
    return "".join(parts).rstrip("\n") + "\n" if parts else ""
