"""Outcomes of a cycle besides the plain push: an explanation (`/ci-agent explain`), a proposed patch
(mode propose) — both end in the status comment, a proposal also in the marker, so that
`/ci-agent apply` can later apply exactly what was shown (its SHA-256 is kept there) — and the
recovery of an attempt an earlier job pushed without managing to open its change request."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_agent import git
from ci_agent.engine import state, texts
from ci_agent.engine.budget import Budget, assess
from ci_agent.engine.marker import Proposed, events, read_chain
from ci_agent.errors import ExitCode
from ci_agent.patch.buildtime import build_changes
from ci_agent.patch.parse import PatchParseError, parse_patch

if TYPE_CHECKING:
    from ci_agent.engine.attempt import Outcome
    from ci_agent.engine.collect import Collected
    from ci_agent.engine.runner import Cycle, Result, _Runner


def _budget(runner: _Runner, cycle: Cycle) -> Budget:
    return assess(events(read_chain(cycle.repo, cycle.remote_tip), cycle.marker), runner.inputs.max_attempts)


def explained(runner: _Runner, cycle: Cycle, outcome: Outcome, details: str, collected: Collected) -> Result:
    log = outcome.attempts[-1]
    assert log.proposal is not None
    p = log.proposal
    text = runner.redact(texts.explanation_text(p.root_cause, p.summary, p.assumptions, p.open_questions,
                                                p.confidence))
    budget = _budget(runner, cycle)
    holder = cycle.pr
    runner._status(cycle, holder, "explanation of the latest failure", budget, [text])
    return runner._result(cycle, "explained", ExitCode.OK, "posted a root-cause analysis; nothing changed",
                          tokens=outcome.usage.total, collected=collected, details=details)


def propose(runner: _Runner, cycle: Cycle, outcome: Outcome, details: str, collected: Collected) -> Result:
    """Mode propose: the attempt's commit (made on a private local ref) becomes a diff in the
    status comment of the failing branch's change request; nothing is pushed."""
    log = outcome.attempts[-1]
    tokens = outcome.usage.total
    base = state.rev(cycle.repo, log.commit + "^") or ""
    diff = git.git_ok(cycle.repo, ["diff", "--no-color", "--no-ext-diff", base, log.commit])
    words = runner.words
    why = ""
    if runner.redact(diff) != diff:
        why = "the patch holds text that looks like a secret, so it is not posted"
    elif len(diff) > texts.MAX_PROPOSAL_CHARS:
        why = (f"the patch is {len(diff)} characters, too long for a comment (at most "
               f"{texts.MAX_PROPOSAL_CHARS})")
    elif cycle.pr is None:
        why = (f"{cycle.fix_branch} has no open {words.change_request} to post it on; it is in this "
               "job's summary only")
    budget = _budget(runner, cycle)
    summary = log.proposal.summary if log.proposal else ""
    if why:
        runner._status(cycle, cycle.pr, "no patch proposed", budget, [why])
        return runner._result(cycle, "gave_up" if cycle.pr else "proposed",
                              ExitCode.NO_SAFE_PATCH if cycle.pr else ExitCode.OK, why, tokens=tokens,
                              collected=collected, details=details)
    proposal = Proposed(hashlib.sha256(diff.encode()).hexdigest(), base, cycle.fix_branch, log.number,
                        " ".join(summary.split())[:200], log.fingerprint)
    cycle.marker = replace(cycle.marker, proposed=proposal)
    if runner.trig.run_id:
        cycle.marker = cycle.marker.with_run(runner.trig.run_id, "proposed")
    where = words.ref(cycle.pr.number) if cycle.pr else cycle.fix_branch
    message = f"patch proposed on {where}; nothing pushed"
    lines = [message, runner.redact(texts.pr_title(cycle.source, summary)), texts.proposal_block(diff)]
    runner._status(cycle, cycle.pr, "patch proposed: `/ci-agent apply` applies it", budget, lines)
    return runner._result(cycle, "proposed", ExitCode.OK, message, attempt=log.number, tokens=tokens,
                          collected=collected, details=details)


def _build_changes(repo: Path, commit: str) -> tuple[str, ...]:
    """The build-time edits of a pushed attempt, read back from its commit (patch.buildtime)."""
    try:
        return build_changes(parse_patch(git.git_ok(repo, ["diff", "--no-color", "--no-ext-diff",
                                                           "--no-renames", f"{commit}^", commit])))
    except PatchParseError:
        return ()


def orphaned(runner: _Runner, cycle: Cycle, chain: list[Any], tip: Any, collected: Collected) -> Result:
    """The fix branch holds a pushed attempt that no change request shows: an earlier job pushed
    it and then failed to open one (a missing permission, an outage). Open it now rather than
    leave the fix where nobody reviews it. If one was opened and closed, a person decided:
    say so and do nothing."""
    number = tip.attempt.number
    found = cycle.forge.find_change_request(cycle.fix_branch, include_closed=True)
    if found is not None and found.state in ("open", "opened"):
        # the job that pushed it opened it a moment ago, after we looked: it is waiting for CI
        return runner._result(cycle, "skipped", ExitCode.OK, f"attempt {number} on {cycle.fix_branch} "
                              f"is waiting for its CI {runner.words.run} ({runner.words.ref(found.number)} "
                              "was just opened by the job that pushed it); no new attempt",
                              collected=collected)
    if found is not None:
        return runner._result(cycle, "skipped", ExitCode.OK, f"{cycle.fix_branch} holds attempt "
                              f"{number} but its {runner.words.change_request} was closed or merged; "
                              "delete the branch to start over", collected=collected)
    if runner.inputs.dry_run:
        return runner._result(cycle, "skipped", ExitCode.OK, f"dry run: would open the missing "
                              f"{runner.words.change_request} for attempt {number}", collected=collected)
    message = git.git_ok(cycle.repo, ["log", "-1", "--format=%B", tip.sha]).strip()
    summary = message.splitlines()[0] if message else ""
    details = (f"Attempt {number} was pushed by an earlier job that could not open this "
               f"{runner.words.change_request}; its commit says:\n\n"
               + texts.fence(runner.redact(message)))
    flagged = _build_changes(cycle.repo, tip.sha)
    callout = texts.build_change_callout(flagged, runner.words) if flagged else ""
    cycle.pr = cycle.forge.open_change_request(
        cycle.fix_branch, cycle.source, runner.redact(texts.pr_title(cycle.source, summary)),
        runner.redact(callout + texts.pr_body(cycle.source, details, runner.words)),
        draft=runner.inputs.draft)
    cycle.forge.add_labels(cycle.pr.number, [texts.LABEL, *([texts.BUILD_CHANGE_LABEL] if flagged else [])])
    if runner.trig.run_id:
        cycle.marker = cycle.marker.with_run(runner.trig.run_id, f"attempt {number}")
    note = runner.platform.start_ci(cycle.forge, cycle.token, cycle.fix_branch, tip.sha)
    text = (f"opened {runner.words.ref(cycle.pr.number)} for attempt {number}, which an earlier job "
            f"pushed to {cycle.fix_branch} without one; CI decides")
    budget = assess(events(chain, cycle.marker), runner.inputs.max_attempts)
    runner._status(cycle, cycle.pr, f"attempt {number} pushed, waiting for CI", budget, [text, note])
    return runner._result(cycle, "committed", ExitCode.OK, text, attempt=number, collected=collected)
