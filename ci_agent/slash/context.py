"""What every command handler works with: the change request commented on, where the status
comment lives, the fix branch, the marker read from the forge; and the one way a handler answers
(the status comment, on both change requests when the command came from the source one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ci_agent.engine import state, texts
from ci_agent.engine.budget import Budget, assess
from ci_agent.engine.forge import ChangeRequest, CommandForge, Forge
from ci_agent.engine.marker import ForgeState, events, fetch_fix_branch, read_chain
from ci_agent.engine.platform import Platform
from ci_agent.engine.runner import repo_root
from ci_agent.engine.types import FIX_BRANCH_PREFIX, ActionInputs
from ci_agent.errors import UsageError
from ci_agent.redact import sanitize_untrusted

if TYPE_CHECKING:
    from ci_agent.llm.client import ModelClient


@dataclass
class Context:
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

    @property
    def author_shown(self) -> str:
        """The author's login as an answer may mention it (untrusted: sanitised and capped)."""
        return sanitize_untrusted(self.author)[:64]


def command_context(env: Mapping[str, str], inputs: ActionInputs, platform: Platform, forge: CommandForge,
                    token: str, cr: ChangeRequest, author: str,
                    client_factory: Callable[[], ModelClient] | None) -> Context:
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
    return Context(env, inputs, platform, forge, token, cr, holder, fix_branch, source, marker, author,
                   client_factory)


def answer(ctx: Context, headline: str, lines: list[str], budget: Budget | None = None) -> None:
    assert isinstance(ctx.forge, Forge)
    body = texts.status_text(headline, ctx.fix_branch, ctx.source, budget, lines, ctx.marker.tokens)
    for number in both_change_requests(ctx):
        ctx.marker = ctx.marker.merged_with(ForgeState.from_json(ctx.forge.read_status_state(number)))
        ctx.forge.upsert_status_comment(number, ctx.marker.to_json(), body)


def both_change_requests(ctx: Context) -> list[int]:
    """Where the status comment lives, then the one commented on when that is another."""
    return list(dict.fromkeys([ctx.holder.number, ctx.cr.number]))


def current_budget(ctx: Context) -> Budget | None:
    """The budget from the fix branch and the marker; None without a checkout (a fork's PR is
    never checked out): the answer then leaves the budget line out."""
    try:
        repo = repo_root(ctx.platform.workspace)
    except UsageError:
        return None
    chain = read_chain(repo, fetch_fix_branch(repo, ctx.fix_branch))
    return assess(events(chain, ctx.marker), ctx.inputs.max_attempts)
