"""`/ci-agent apply`: exactly the patch a mode-propose run posted, nothing regenerated.

The diff is read back from OUR status comment (found by author and marker) and must hash to the
SHA-256 the marker kept; it must still sit on the commit it was made on; it passes the patch
policy again (the configuration may have changed since); then it is committed with the attempt
trailers — it is an attempt like any other, CI decides — and pushed fast-forward onto the change
request's own branch, which is never the default or a protected branch.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import replace

from ci_agent.engine import gitops, state, texts
from ci_agent.engine.attempt import ResultTrailers
from ci_agent.engine.budget import AttemptResult, assess
from ci_agent.engine.forge import Forge, pick_status_comment
from ci_agent.engine.marker import events, fetch_fix_branch, read_chain
from ci_agent.engine.runner import Result, repo_root
from ci_agent.engine.trusted import trusted_settings
from ci_agent.errors import ExitCode, ForgeError
from ci_agent.patch.apply import commit
from ci_agent.patch.engine import apply_patch
from ci_agent.slash.context import Context, answer
from ci_agent.slash.request import SlashCommand


def _refuse(ctx: Context, why: str, outcome: str = "refused") -> Result:
    answer(ctx, "/ci-agent apply not done", [why])
    return Result(outcome, ExitCode.OK, why, ctx.fix_branch)


def apply_proposal(ctx: Context, command: SlashCommand) -> Result:
    forge = ctx.forge
    assert isinstance(forge, Forge)
    proposed = ctx.marker.proposed
    if proposed is None:
        return _refuse(ctx, "no patch was proposed here (proposals come from mode propose); nothing to "
                       "apply", "nothing_to_do")
    ours = pick_status_comment(forge.list_comments(ctx.holder.number), forge.own_login())
    diff = texts.extract_proposal(ours.body) if ours else None
    if diff is None or hashlib.sha256(diff.encode()).hexdigest() != proposed.sha256:
        return _refuse(ctx, "the proposed patch in the status comment is not the one ci-agent posted "
                       "(edited or cut); nothing was applied — `/ci-agent fix` proposes a new one")
    branch = proposed.branch
    if branch != ctx.cr.source_branch:
        return _refuse(ctx, f"the patch was proposed for {branch}, not for this change request's branch")
    if branch == forge.default_branch() or forge.protected(branch):
        return _refuse(ctx, f"{branch} is the default or a protected branch; ci-agent never pushes there "
                       "(apply the patch by hand, or use mode pr)")
    repo = repo_root(ctx.platform.workspace)
    auth = ctx.platform.push_auth(repo, ctx.token)
    settings = trusted_settings(repo, ctx.env, ctx.inputs, forge.default_branch(), auth).settings
    tip = fetch_fix_branch(repo, branch)
    if tip != proposed.base:
        return _refuse(ctx, f"{branch} moved since the patch was proposed (on {proposed.base[:12]}, now "
                       f"{(tip or 'gone')[:12]}); `/ci-agent fix` proposes a new one")
    number = assess(events(read_chain(repo, tip), ctx.marker), ctx.inputs.max_attempts).next_attempt
    with state.worktree(repo, tip) as work:
        verdict = apply_patch(diff, work, settings.patch)
        if not verdict.ok:
            return _refuse(ctx, "the patch no longer passes the patch policy: " + verdict.messages())
        message = (f"{proposed.summary or 'ci-agent: apply the proposed fix'}\n\n"
                   f"Applied by /ci-agent apply from the patch proposed in the status comment.")
        trailers = ResultTrailers(number, proposed.fingerprint, uuid.uuid4().hex[:16],
                                  AttemptResult.PENDING.value)
        made = commit(work, settings.commit, message, trailers)
    rejected = gitops.push_fast_forward(repo, made, branch, auth)
    if rejected is not None:
        if fetch_fix_branch(repo, branch) != tip:
            return _refuse(ctx, f"{branch} moved while the patch was applied; nothing was pushed")
        raise ForgeError(f"pushing {branch} to origin failed: {rejected}")
    ctx.marker = replace(ctx.marker, proposed=None)
    note = ctx.platform.start_ci(forge, ctx.token, branch, made)
    text = f"applied the proposed patch as attempt {number} on {branch} ({made[:12]}); CI decides"
    budget = assess(events(read_chain(repo, made), ctx.marker), ctx.inputs.max_attempts)
    answer(ctx, f"attempt {number} applied, waiting for CI", [text, note], budget)
    return Result("committed", ExitCode.OK, text, branch, number, ctx.holder)
