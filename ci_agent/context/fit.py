"""Keep what fits in `max_bytes` once rendered: errors and failing frames, then the diff, then
warnings; what is left out is named in an "omitted" note the model can act on."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from ci_agent.config import ContextSettings
from ci_agent.context.render import SAY, render_context, render_diff, render_excerpt
from ci_agent.context.values import Context, Excerpt, GitContext
from ci_agent.gitfacts import split_file_diffs

_NOTES_RESERVE = 700  # bytes kept free for the headings and the omitted/notes section
_MAX_NOTES = 8
MIN_DIFF_BYTES = 256


def bound_diff(text: str, limit: int, first: Collection[str] = ()) -> tuple[str, str | None]:
    """The diff cut to at most `limit` bytes at a line boundary, and a note naming what was cut.
    Files in `first` (those the report names) go first, so the bound cuts the others."""
    if len(text.encode()) <= limit:
        return text, None
    sections = split_file_diffs(text) or [("", text)]
    sections.sort(key=lambda item: item[0] not in first)  # stable: git's order otherwise
    shown: list[str] = []
    used = 0
    cut: list[str] = []
    for path, section in sections:
        size = len(section.encode())
        if not cut and used + size <= limit:
            shown.append(section)
            used += size
            continue
        if not cut and limit - used >= MIN_DIFF_BYTES:
            head = section.encode()[: limit - used].decode("utf-8", errors="ignore")
            shown.append(head[: head.rfind("\n") + 1])
            used = limit
        cut.append(path)
    return "".join(shown), SAY("diff_cut", limit=limit, cut=cut)


def fit(excerpts: Sequence[Excerpt], notes: Sequence[str], git_ctx: GitContext | None,
        diff_text: str | None, settings: ContextSettings, named: Collection[str]) -> Context:
    """The context within `settings.max_bytes`; `named`: the files the report names (their part
    of the diff is kept first)."""
    limit = settings.max_bytes
    budget = limit - _NOTES_RESERVE - len(render_context(Context(git=git_ctx)).encode())
    kept: list[Excerpt] = []
    omitted: list[str] = []
    ordered = sorted(excerpts, key=lambda e: e.priority)

    def take(ex: Excerpt) -> None:
        nonlocal budget
        size = len(render_excerpt(ex).encode())
        if size <= budget:
            kept.append(ex)
            budget -= size
        else:
            omitted.append(f"{ex.path}:{ex.start}-{ex.end}")

    for ex in (e for e in ordered if e.priority == 0):
        take(ex)
    if git_ctx is not None and diff_text is not None:
        room = min(settings.diff_bytes, budget - 200)
        if room >= MIN_DIFF_BYTES:
            shown, note = bound_diff(diff_text, room, named)
            git_ctx = replace(git_ctx, diff=shown, diff_note=note)
            budget -= len(render_diff(git_ctx).encode())
        else:
            omitted.append(SAY("the_diff"))
    for ex in (e for e in ordered if e.priority > 0):
        take(ex)
    context = Context(tuple(_in_report_order(kept, excerpts)), git_ctx, _summarise(omitted, limit),
                      _capped_notes(notes))
    return _shrink(context, omitted, limit)


def _shrink(context: Context, omitted: list[str], limit: int) -> Context:
    """Last resort when the estimate was off: drop the least important excerpt, then the diff,
    then notes, until the rendering fits."""
    while len(render_context(context).encode()) > limit:
        if context.excerpts:
            worst = max(range(len(context.excerpts)), key=lambda i: (context.excerpts[i].priority, i))
            gone = context.excerpts[worst]
            omitted.append(f"{gone.path}:{gone.start}-{gone.end}")
            excerpts = context.excerpts[:worst] + context.excerpts[worst + 1:]
            context = replace(context, excerpts=excerpts, omitted=_summarise(omitted, limit))
        elif context.git is not None and context.git.diff:
            omitted.append(SAY("the_diff"))
            git_ctx = replace(context.git, diff_title=None, diff=None, diff_note=None)
            context = replace(context, git=git_ctx, omitted=_summarise(omitted, limit))
        elif context.notes:
            context = replace(context, notes=context.notes[:-1])
        else:
            break
    return context


def _in_report_order(kept: list[Excerpt], everything: Sequence[Excerpt]) -> list[Excerpt]:
    chosen = {id(e) for e in kept}
    return [e for e in everything if id(e) in chosen]


def _summarise(omitted: list[str], limit: int) -> tuple[str, ...]:
    return (SAY("omitted", limit=limit, items=omitted),) if omitted else ()


def _capped_notes(notes: Sequence[str]) -> tuple[str, ...]:
    unique = list(dict.fromkeys(notes))
    if len(unique) <= _MAX_NOTES:
        return tuple(unique)
    return (*unique[:_MAX_NOTES], SAY("more_notes", count=len(unique) - _MAX_NOTES))
