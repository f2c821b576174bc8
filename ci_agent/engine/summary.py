"""The Markdown summary of a `fix --local` run: what failed, the root cause, the patch, the
verification, the budget and the tokens. Sanitised here; the caller redacts it before it goes
anywhere."""

from __future__ import annotations

from ci_agent.engine.attempt import AttemptLog, Outcome, Plan
from ci_agent.engine.collect import describe
from ci_agent.engine.local_triage import Triage
from ci_agent.llm.pricing import usd
from ci_agent.llm.types import Usage
from ci_agent.redact import sanitize_untrusted
from ci_agent.render import render
from ci_agent.render.text import md_code
from ci_agent.render.untrusted import untrusted_md, untrusted_md_line

FAILURE_BYTES = 16_000
_TITLES = {
    "fixed": "fixed and verified",
    "committed": "patch committed (not verified)",
    "nothing_to_do": "nothing to fix",
    "escalated": "escalated: attempt budget exhausted",
    "gave_up": "no safe patch",
    "dry_run": "dry run",
    "unverifiable": "the verify command could not run",
    "flaky": "flaky: no patch",
    "infrastructure": "infrastructure failure: no patch",
}
_VERDICT_TITLES = {"flaky": "Flaky", "infrastructure": "Infrastructure", "pre_existing": "Pre-existing"}


def _tokens(usage: Usage) -> str:
    return (f"input {usage.input_tokens}, output {usage.output_tokens}, cache write "
            f"{usage.cache_creation_input_tokens}, cache read {usage.cache_read_input_tokens} "
            f"(total {usage.total})")


def _fence(text: str, lang: str = "") -> str:
    # Code is inert in Markdown; invisible characters and HTML comments are still taken out so
    # the raw body carries nothing hidden.
    text = sanitize_untrusted(text)
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _attempt(log: AttemptLog, plan: Plan) -> list[str]:
    out = [f"### Attempt {log.number}"]
    p = log.proposal
    if p is not None:
        out.append(f"**Summary:** {untrusted_md(p.summary)}")
        out.append(f"**Root cause:** {untrusted_md(p.root_cause)}")
        capped = f" (stated {p.raw_confidence:.2f})" if p.raw_confidence != p.confidence else ""
        out.append(f"**Confidence:** {p.confidence:.2f}{capped}")
        for label, items in (("Assumptions", p.assumptions), ("Open questions", p.open_questions),
                             ("Gate notes", p.gate_notes)):
            if items:
                out.append(f"**{label}:**\n" + "\n".join(f"- {untrusted_md_line(i)}" for i in items))
    if log.review is not None:
        out.extend(log.review.markdown())
    if log.give_up:
        out.append(f"**No patch:** {untrusted_md(log.give_up)}")
    if log.diff:
        out.append(f"**Patch** ({', '.join(md_code(f) for f in log.files)}):\n\n" + _fence(log.diff, "diff"))
    if log.verified is True:
        out.append(f"**Verification:** {md_code(describe(plan.verify))} passed.")
    elif log.verified is False:
        out.append(f"**Verification:** {md_code(describe(plan.verify))} failed; the patch was rolled back.")
        if log.after is not None:
            out.append(_fence(render(log.after, "llm", 4000)))
    elif log.unverifiable:
        out.append(f"**Verification:** could not run ({log.unverifiable}); the patch was rolled back.")
    elif log.diff and not log.rejected:
        out.append("**Verification:** none before the push (no verify command); CI decides.")
    if log.rejected:
        out.append("**Rejected by the reviewer:** the patch was rolled back and counts as a failed attempt.")
    if log.commit:
        out.append(f"**Commit:** `{log.commit[:12]}` on {md_code(plan.fix_branch)}")
    if log.rejections:
        out.append(f"**Patches rejected before this one:** {len(log.rejections)}")
    out.append(f"**Tokens:** {_tokens(log.usage)}; {log.turns} model call(s); cost {usd(log.cost_usd)}")
    return out


def _triage(triage: Triage) -> list[str]:
    """The verdict before the model (or why the attempt went on): tests are names (`md_code`),
    the evidence is log text or the re-run command (fenced)."""
    out = []
    verdict = triage.verdict
    if verdict is not None:
        title = _VERDICT_TITLES.get(verdict.kind, verdict.kind)
        out.append(f"## Verdict: {title}\n\n{untrusted_md(verdict.reason)}. No patch was made and the "
                   "model was not asked.")
        if verdict.tests:
            out.append("**Tests:**\n" + "\n".join(f"- {md_code(t)}" for t in verdict.tests))
        if verdict.evidence:
            label = "Re-run" if verdict.kind == "flaky" else "Evidence"
            out.append(f"**{label}:**\n\n" + _fence("\n".join(verdict.evidence)))
        if triage.quarantine:
            out.append("**Quarantine candidates** (flaky again and again):\n"
                       + "\n".join(f"- {md_code(t)}" for t in triage.quarantine))
    out.extend(untrusted_md(note) for note in triage.notes)
    return out


def summary_markdown(outcome: Outcome, plan: Plan) -> str:
    out = [f"# ci-agent fix: {_TITLES.get(outcome.status, outcome.status)}",
           f"Branch {md_code(plan.source_ref)} -> fix branch {md_code(outcome.fix_branch)}."]
    if outcome.message:
        out.append(untrusted_md(outcome.message))
    if outcome.no_progress:
        out.append("**No progress:** the failure is one a previous patch already tried to fix.")
    if outcome.triage is not None:
        out.extend(_triage(outcome.triage))
    budget = outcome.budget
    if budget is not None:
        out.append(f"Budget: {budget.consecutive_failures} of {budget.max_attempts} consecutive failed "
                   "attempts used.")
        if outcome.status == "escalated" and budget.failures:
            out.append("## Failed attempts\n" + "\n".join(
                f"- attempt {f.number}: {untrusted_md_line(f.summary) or '(no summary)'} — failure after it: "
                f"{md_code(f.after or 'unknown')}" for f in budget.failures))
    if outcome.report is not None and outcome.status != "nothing_to_do":
        out.append("## What failed\n\n" + _fence(render(outcome.report, "llm", FAILURE_BYTES)))
    if outcome.attempts:
        out.append("## Attempts")
        for log in outcome.attempts:
            out.extend(_attempt(log, plan))
        out.append(f"**Total tokens:** {_tokens(outcome.usage)}")
        out.append(f"**Cost of this run:** {usd(outcome.cost_usd)}")
    if outcome.worktree is not None:
        out.append(f"Worktree kept at {md_code(str(outcome.worktree))}.")
    # Test messages, log lines and the model's own words are untrusted: each went through
    # `untrusted_md` (prose), `md_code` (names) or `_fence` (code) above, so nothing here can
    # mention, load an image, inject HTML or hide text. No whole-body pass after that: it would
    # undo the zero-width spaces that keep mentions inert.
    return "\n\n".join(out) + "\n"
