"""Outcomes of a cycle that push nothing: an explanation (`/ci-agent explain`) and a proposed patch
(mode propose). Both end in the status comment; a proposal also in the marker, so that
`/ci-agent apply` can later apply exactly what was shown (its SHA-256 is kept there)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING

from ci_agent import git, state
from ci_agent.budget import assess
from ci_agent.errors import ExitCode
from ci_agent.fixcycle import texts
from ci_agent.forge_state import Proposed, events, read_chain

if TYPE_CHECKING:
    from ci_agent.attempt import Outcome
    from ci_agent.collect import Collected
    from ci_agent.fixcycle.runner import Cycle, Result, _Runner


def explained(runner: _Runner, cycle: Cycle, outcome: Outcome, details: str, collected: Collected) -> Result:
    log = outcome.attempts[-1]
    assert log.proposal is not None
    p = log.proposal
    text = runner.redact(texts.explanation_text(p.root_cause, p.summary, p.assumptions, p.open_questions,
                                                p.confidence))
    budget = assess(events(read_chain(cycle.repo, cycle.remote_tip), cycle.marker), runner.inputs.max_attempts)
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
        why = f"the patch is {len(diff)} characters, too long for a comment (at most {texts.MAX_PROPOSAL_CHARS})"
    elif cycle.pr is None:
        why = (f"{cycle.fix_branch} has no open {words.change_request} to post it on; it is in this "
               "job's summary only")
    budget = assess(events(read_chain(cycle.repo, cycle.remote_tip), cycle.marker), runner.inputs.max_attempts)
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
    message = f"patch proposed on {words.ref(cycle.pr.number) if cycle.pr else cycle.fix_branch}; nothing pushed"
    lines = [message, runner.redact(texts.pr_title(cycle.source, summary)), texts.proposal_block(diff)]
    runner._status(cycle, cycle.pr, "patch proposed: `/ci-agent apply` applies it", budget, lines)
    return runner._result(cycle, "proposed", ExitCode.OK, message, attempt=log.number, tokens=tokens,
                          collected=collected, details=details)
