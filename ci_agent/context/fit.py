"""Keep what fits in `max_bytes` once rendered: errors and failing frames, then the history
section (commit messages, changed files, diff: `history.bound_change`), then warnings; what is
left out is named in an "omitted" note the model can act on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ci_agent.config import ContextSettings
from ci_agent.context.history import Change, bound_change
from ci_agent.context.render import SAY, render_context, render_diff, render_excerpt
from ci_agent.context.values import Context, Excerpt, GitContext

_NOTES_RESERVE = 700  # bytes kept free for the headings and the omitted/notes section
_MAX_NOTES = 8
MIN_DIFF_BYTES = 512  # less room than this: no history section at all, named as omitted


def with_history(git_ctx: GitContext, change: Change, limit: int) -> GitContext:
    """`git_ctx` with the history section of `change` within `limit` bytes once rendered (the
    pieces are bounded first, then shrunk by what the headings and notes took beyond that)."""
    room = limit
    for _ in range(4):
        shown = _history_pieces(git_ctx, change, room, limit)
        over = len(render_diff(shown).encode()) - limit
        if over <= 0:
            return shown
        room -= over + 32
    return replace(shown, messages="", listing="", diff="")


def _history_pieces(git_ctx: GitContext, change: Change, room: int, limit: int) -> GitContext:
    shown = bound_change(change, room)
    notes: list[str] = []
    if change.summary_only:
        notes.append(SAY("diff_import", why=change.import_reason, count=len(change.files)))
    elif not change.files and not change.skipped:
        notes.append(SAY("diff_empty"))
    if shown.cut:
        notes.append(SAY("diff_cut", limit=limit, cut=list(shown.cut)))
    items = [f"{path} ({why})" for path, why in change.skipped]
    skipped = SAY("skipped", items=items) if items else ""
    return replace(git_ctx, diff_title=change.title, diff=shown.diff, diff_note="; ".join(notes) or None,
                   messages=shown.messages, listing=shown.listing, skipped=skipped)


def fit(excerpts: Sequence[Excerpt], notes: Sequence[str], git_ctx: GitContext | None,
        change: Change | None, settings: ContextSettings) -> Context:
    """The context within `settings.max_bytes`; `change`: the change under test, ranked
    (`history_read`), of which the history section keeps what fits `settings.diff_bytes`."""
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
    if git_ctx is not None and change is not None:
        room = min(settings.diff_bytes, budget - 200)
        if room >= MIN_DIFF_BYTES:
            git_ctx = with_history(git_ctx, change, room)
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
        elif context.git is not None and context.git.diff_title is not None:
            omitted.append(SAY("the_diff"))
            git_ctx = GitContext(context.git.summary)
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
