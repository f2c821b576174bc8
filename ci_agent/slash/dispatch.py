"""Slash commands on change requests (`/ci-agent fix|explain|retry|stop|resume|status|apply|help`).

Everything a command may do is decided here, in code, before any model call: the comment is
re-read from the forge (a payload's copy may be stale), gated (`ci_agent.slash.decide`: people
with write access, no bots, not ourselves, no edits, a per-change-request rate limit), and
claimed with our 👀 reaction, which both forges make atomic — so a comment delivered twice runs
once. The answer goes into the status comment. `fix`, `explain` and `retry` then run the fix cycle
on the latest failed run of the change request's head commit; `apply` applies exactly the patch a
mode-propose run posted, after checking it against the hash the marker kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ci_agent.engine import state, texts
from ci_agent.engine.budget import Budget, assess
from ci_agent.engine.forge import ChangeRequest, CommandForge, Forge, Permission
from ci_agent.engine.marker import ForgeState, events, fetch_fix_branch, read_chain, retry
from ci_agent.engine.platform import Platform
from ci_agent.engine.runner import Result, repo_root, run_cycle
from ci_agent.engine.types import FIX_BRANCH_PREFIX, ActionInputs, Trigger
from ci_agent.errors import ExitCode, UsageError
from ci_agent.redact import sanitize_untrusted
from ci_agent.slash import CommentFacts, SlashCommand, decide, help_text

if TYPE_CHECKING:
    from ci_agent.llm.client import ModelClient


@dataclass(frozen=True)
class CommandRequest:
    """Which comment to act on. Only ids come from the event: the body and author are read back
    from the forge."""

    number: int  # the change request the comment is on
    comment_id: int
    action: str = "created"  # created | edited (edits never run a command)
    association: str = ""  # GitHub's author_association, a pre-filter only
    review: bool = False  # a GitHub review (diff) comment


@dataclass
class _Context:
    env: Mapping[str, str]
    inputs: ActionInputs
    platform: Platform
    forge: CommandForge
    token: str
    cr: ChangeRequest  # the change request the comment is on
    holder: ChangeRequest  # where the status comment lives
    fix_branch: str  # the branch our attempts live on
    source: str  # the branch being fixed
    marker: ForgeState
    author: str
    client_factory: Callable[[], ModelClient] | None


def handle_command(env: Mapping[str, str], inputs: ActionInputs, platform: Platform, request: CommandRequest,
                   client_factory: Callable[[], ModelClient] | None = None) -> Result:
    token = platform.token()
    forge = platform.forge(token)
    if not isinstance(forge, CommandForge):
        raise UsageError("this forge cannot run slash commands")
    comment = forge.get_comment(request.number, request.comment_id, request.review)
    if comment is None:
        return Result("skipped", ExitCode.OK, f"comment {request.comment_id} is gone; nothing to do")
    cr = forge.get_change_request(request.number)
    ctx = _context(env, inputs, platform, forge, token, cr, comment.author, client_factory)
    levels: list[Permission] = []

    def permission(user: str) -> Permission:
        levels.append(forge.permission(user))
        return levels[-1]

    now = time.time()
    facts = CommentFacts(comment.id, comment.author, comment.author_is_bot, comment.body, request.action,
                         request.association)
    decision = decide(facts, own_login=forge.own_login(), permission=permission, handled=ctx.marker.handled,
                      recent=ctx.marker.command_times, now=now)
    if decision.command is None:
        return Result("skipped", ExitCode.OK, decision.reason, ctx.fix_branch)
    if not decision.run:
        if levels and levels[-1] >= Permission.WRITE and forge.claim(cr.number, comment.id, request.review):
            _answer(ctx, "command not run", [decision.reason])  # a writer over the rate limit
        return Result("refused", ExitCode.OK, decision.reason, ctx.fix_branch)
    if not forge.claim(cr.number, comment.id, request.review):
        return Result("skipped", ExitCode.OK, f"comment {comment.id} was already claimed by another "
                      "run of ci-agent; nothing to do", ctx.fix_branch)
    ctx.marker = ctx.marker.with_command(comment.id, now)
    return _run(ctx, decision.command)


def _context(env: Mapping[str, str], inputs: ActionInputs, platform: Platform, forge: CommandForge,
             token: str, cr: ChangeRequest, author: str,
             client_factory: Callable[[], ModelClient] | None) -> _Context:
    """The status comment lives on the fix change request when there is one (the comment may be on
    it, or on the source one), else on the change request commented on."""
    assert isinstance(forge, Forge)
    on_fix = cr.source_branch.startswith(FIX_BRANCH_PREFIX)
    in_place = inputs.mode in ("push", "propose") and not on_fix
    fix_branch = cr.source_branch if (on_fix or in_place) else state.fix_branch_for(cr.source_branch)
    fix_cr = cr if on_fix or in_place else forge.find_change_request(fix_branch)
    holder = fix_cr or cr
    marker = ForgeState.from_json(forge.read_status_state(holder.number))
    source = (marker.source_branch or cr.target_branch) if on_fix else cr.source_branch
    return _Context(env, inputs, platform, forge, token, cr, holder, fix_branch, source, marker, author,
                    client_factory)


def _answer(ctx: _Context, headline: str, lines: list[str], budget: Budget | None = None) -> None:
    assert isinstance(ctx.forge, Forge)
    body = texts.status_text(headline, ctx.fix_branch, ctx.source, budget, lines, ctx.marker.tokens)
    numbers = dict.fromkeys([ctx.holder.number, ctx.cr.number])
    for number in numbers:
        ctx.marker = ctx.marker.merged_with(ForgeState.from_json(ctx.forge.read_status_state(number)))
        ctx.forge.upsert_status_comment(number, ctx.marker.to_json(), body)


def _budget(ctx: _Context) -> Budget | None:
    """The budget from the fix branch and the marker; None without a checkout (a fork's PR is
    never checked out): the answer then leaves the budget line out."""
    try:
        repo = repo_root(ctx.platform.workspace)
    except UsageError:
        return None
    chain = read_chain(repo, fetch_fix_branch(repo, ctx.fix_branch))
    return assess(events(chain, ctx.marker), ctx.inputs.max_attempts)


def _run(ctx: _Context, command: SlashCommand) -> Result:
    forge = ctx.forge
    assert isinstance(forge, Forge)
    name = command.name
    who = sanitize_untrusted(ctx.author)[:64]
    if name == "help":
        _answer(ctx, "commands", [texts.Markup(help_text(command.unknown))])
        return Result("skipped", ExitCode.OK, "help posted", ctx.fix_branch)
    if name == "status":
        _answer(ctx, "status", [texts.Markup(f"Asked by @{who}.")], _budget(ctx))
        return Result("skipped", ExitCode.OK, "status posted", ctx.fix_branch)
    if name in ("stop", "resume"):
        for number in dict.fromkeys([ctx.holder.number, ctx.cr.number]):
            if name == "stop":
                forge.add_labels(number, [texts.PAUSED_LABEL])
            else:
                forge.remove_label(number, texts.PAUSED_LABEL)
        line = ("No automatic attempts until `/ci-agent resume`; commands still work." if name == "stop"
                else "Automatic attempts resume with the next failed run.")
        _answer(ctx, "paused" if name == "stop" else "resumed", [texts.Markup(f"@{who}: {line}")])
        return Result("skipped", ExitCode.OK, f"{name} done", ctx.fix_branch)
    if ctx.cr.fork:
        why = ("this change request comes from a fork; ci-agent never checks out or runs a fork's code "
               "with this repository's secrets")
        _answer(ctx, f"/ci-agent {name} refused", [why])
        return Result("refused", ExitCode.OK, why, ctx.fix_branch)
    if ctx.cr.state != "open":
        why = f"this change request is {ctx.cr.state}; nothing to do"
        _answer(ctx, f"/ci-agent {name} not run", [why])
        return Result("skipped", ExitCode.OK, why, ctx.fix_branch)
    if name == "apply":
        from ci_agent.slash.apply import apply_proposal

        return apply_proposal(ctx)
    if name == "retry":
        repo = repo_root(ctx.platform.workspace)
        ctx.marker = retry(ctx.marker, read_chain(repo, fetch_fix_branch(repo, ctx.fix_branch)))
        forge.remove_label(ctx.holder.number, texts.ESCALATED_LABEL)
    return _cycle(ctx, command)


def _cycle(ctx: _Context, command: SlashCommand) -> Result:
    """fix / explain / retry: the cycle on the latest failed run of the head commit."""
    forge = ctx.forge
    head = ctx.cr.head_sha
    run = forge.latest_failed_run(ctx.cr.source_branch, head)
    words = ctx.platform.words
    if run is None:
        why = (f"no failed {words.run} of {ctx.cr.source_branch} at {head[:12]} was found; nothing to "
               f"{'explain' if command.name == 'explain' else 'fix'} yet")
        _answer(ctx, f"/ci-agent {command.name}: nothing to do", [why])
        return Result("nothing_to_do", ExitCode.OK, why, ctx.fix_branch)
    # The handled comment is written down before the cycle starts: a crash later cannot make it
    # run twice (the reaction says so too).
    asker = sanitize_untrusted(ctx.author)[:64]
    _answer(ctx, f"working on /ci-agent {command.name}", [texts.Markup(f"Asked by @{asker}.")])
    on_fix = ctx.cr.source_branch.startswith(FIX_BRANCH_PREFIX)
    trig = Trigger("command", ctx.cr.source_branch, head, str(run), "1", "failure",
                   None if on_fix else ctx.cr.number, ctx.author)
    instructions = command.args if command.name == "fix" else ""
    return run_cycle(ctx.env, ctx.inputs, trig, ctx.platform, ctx.client_factory, instructions=instructions,
                     explain=command.name == "explain")
