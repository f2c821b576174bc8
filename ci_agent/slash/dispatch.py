"""Slash commands on change requests (`/ci-agent fix|explain|retry|stop|resume|status|apply|help`).

Everything a command may do is decided here, in code, before any model call: the comment is
re-read from the forge (a payload's copy may be stale), gated (`ci_agent.slash.gate.decide`:
people with write access, no bots, not ourselves, no edits, a per-change-request rate limit), and
claimed with our 👀 reaction, which both forges make atomic — so a comment delivered twice runs
once. Then the command's row of the handler table (`ci_agent.slash.table`) says whether it needs
the repository's code and which handler runs it; every handler answers in the status comment.

A platform calls `handle_command` with itself (its CI environment, token and forge) and the ids
of the comment its event names.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ci_agent.engine.forge import CommandForge, Permission
from ci_agent.engine.platform import Platform
from ci_agent.engine.runner import Result
from ci_agent.engine.types import ActionInputs
from ci_agent.errors import ExitCode, UsageError
from ci_agent.slash.context import Context, answer, command_context
from ci_agent.slash.gate import CommentFacts, decide
from ci_agent.slash.request import CommandRequest, SlashCommand
from ci_agent.slash.table import BY_NAME, MAY_RUN

if TYPE_CHECKING:
    from ci_agent.llm.client import ModelClient

__all__ = ["CommandRequest", "handle_command"]


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
    ctx = command_context(env, inputs, platform, forge, token, cr, comment.author, client_factory)
    levels: list[Permission] = []

    def permission(user: str) -> Permission:
        levels.append(forge.permission(user))
        return levels[-1]

    now = time.time()
    facts = CommentFacts(comment.id, comment.author, comment.author_is_bot, comment.body, request.action,
                         request.association)
    decision = decide(facts, commands=MAY_RUN, own_login=forge.own_login(), permission=permission,
                      handled=ctx.marker.handled, recent=ctx.marker.command_times, now=now)
    if decision.command is None:
        return Result("skipped", ExitCode.OK, decision.reason, ctx.fix_branch)
    if not decision.run:
        if levels and levels[-1] >= Permission.WRITE and forge.claim(cr.number, comment.id, request.review):
            answer(ctx, "command not run", [decision.reason])  # a writer over the rate limit
        return Result("refused", ExitCode.OK, decision.reason, ctx.fix_branch)
    if not forge.claim(cr.number, comment.id, request.review):
        return Result("skipped", ExitCode.OK, f"comment {comment.id} was already claimed by another "
                      "run of ci-agent; nothing to do", ctx.fix_branch)
    ctx.marker = ctx.marker.with_command(comment.id, now)
    return run_handler(ctx, decision.command)


def run_handler(ctx: Context, command: SlashCommand) -> Result:
    """The command's handler, once its change request can take it."""
    handler = BY_NAME[command.name]
    if handler.needs_checkout:
        refused = _not_on_this_change_request(ctx, command)
        if refused is not None:
            return refused
    return handler.run(ctx, command)


def _not_on_this_change_request(ctx: Context, command: SlashCommand) -> Result | None:
    """Why a command that needs the repository's code does not run here, answered; else None."""
    name = command.name
    if ctx.cr.fork:
        why = ("this change request comes from a fork; ci-agent never checks out or runs a fork's code "
               "with this repository's secrets")
        answer(ctx, f"/ci-agent {name} refused", [why])
        return Result("refused", ExitCode.OK, why, ctx.fix_branch)
    if ctx.cr.state != "open":
        why = f"this change request is {ctx.cr.state}; nothing to do"
        answer(ctx, f"/ci-agent {name} not run", [why])
        return Result("skipped", ExitCode.OK, why, ctx.fix_branch)
    return None
