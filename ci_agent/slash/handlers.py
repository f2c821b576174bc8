"""The handlers of `/ci-agent status|stop|resume|fix|explain|retry` (help and apply have their
own modules). Each answers in the status comment and returns the run's `Result`; `fix`, `explain`
and `retry` run the fix cycle on the latest failed run of the change request's head commit."""

from __future__ import annotations

from ci_agent.engine import texts
from ci_agent.engine.forge import Forge
from ci_agent.engine.marker import fetch_fix_branch, read_chain, retry
from ci_agent.engine.runner import Result, repo_root, run_cycle
from ci_agent.engine.types import FIX_BRANCH_PREFIX, Trigger
from ci_agent.errors import ExitCode
from ci_agent.slash.context import Context, answer, both_change_requests, current_budget
from ci_agent.slash.request import SlashCommand


def post_status(ctx: Context, command: SlashCommand) -> Result:
    answer(ctx, "status", [texts.Markup(f"Asked by @{ctx.author_shown}.")], current_budget(ctx))
    return Result("skipped", ExitCode.OK, "status posted", ctx.fix_branch)


def pause(ctx: Context, command: SlashCommand) -> Result:
    forge = ctx.forge
    assert isinstance(forge, Forge)
    for number in both_change_requests(ctx):
        forge.add_labels(number, [texts.PAUSED_LABEL])
    line = "No automatic attempts until `/ci-agent resume`; commands still work."
    answer(ctx, "paused", [texts.Markup(f"@{ctx.author_shown}: {line}")])
    return Result("skipped", ExitCode.OK, f"{command.name} done", ctx.fix_branch)


def resume(ctx: Context, command: SlashCommand) -> Result:
    forge = ctx.forge
    assert isinstance(forge, Forge)
    for number in both_change_requests(ctx):
        forge.remove_label(number, texts.PAUSED_LABEL)
    line = "Automatic attempts resume with the next failed run."
    answer(ctx, "resumed", [texts.Markup(f"@{ctx.author_shown}: {line}")])
    return Result("skipped", ExitCode.OK, f"{command.name} done", ctx.fix_branch)


def retry_cycle(ctx: Context, command: SlashCommand) -> Result:
    """A new count of attempts: the marker forgets the chain so far, the escalation label goes."""
    forge = ctx.forge
    assert isinstance(forge, Forge)
    repo = repo_root(ctx.platform.workspace)
    ctx.marker = retry(ctx.marker, read_chain(repo, fetch_fix_branch(repo, ctx.fix_branch)))
    forge.remove_label(ctx.holder.number, texts.ESCALATED_LABEL)
    return run_fix_cycle(ctx, command)


def run_fix_cycle(ctx: Context, command: SlashCommand) -> Result:
    """fix / explain / retry: the cycle on the latest failed run of the head commit."""
    forge = ctx.forge
    head = ctx.cr.head_sha
    run = forge.latest_failed_run(ctx.cr.source_branch, head)
    words = ctx.platform.words
    if run is None:
        why = (f"no failed {words.run} of {ctx.cr.source_branch} at {head[:12]} was found; nothing to "
               f"{'explain' if command.name == 'explain' else 'fix'} yet")
        answer(ctx, f"/ci-agent {command.name}: nothing to do", [why])
        return Result("nothing_to_do", ExitCode.OK, why, ctx.fix_branch)
    # The handled comment is written down before the cycle starts: a crash later cannot make it
    # run twice (the reaction says so too).
    answer(ctx, f"working on /ci-agent {command.name}", [texts.Markup(f"Asked by @{ctx.author_shown}.")])
    on_fix = ctx.cr.source_branch.startswith(FIX_BRANCH_PREFIX)
    trig = Trigger("command", ctx.cr.source_branch, head, str(run), "1", "failure",
                   None if on_fix else ctx.cr.number, ctx.author)
    instructions = command.args if command.name == "fix" else ""
    return run_cycle(ctx.env, ctx.inputs, trig, ctx.platform, ctx.client_factory, instructions=instructions,
                     explain=command.name == "explain")
