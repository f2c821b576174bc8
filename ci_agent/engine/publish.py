"""Executors of the outcomes that publish something: the push of a committed attempt with its
change request; an explanation (`/ci-agent explain`) and a proposed patch (mode propose) — both
end in the status comment, a proposal also in the marker, so that `/ci-agent apply` can later
apply exactly what was shown (its SHA-256 is kept there) — and the recovery of an attempt an
earlier job pushed without managing to open its change request."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from ci_agent import git
from ci_agent.engine import gitops, state, texts
from ci_agent.engine.attempt import AttemptLog, Outcome
from ci_agent.engine.budget import Budget, assess
from ci_agent.engine.collect import Collected
from ci_agent.engine.cycle import Cycle, Result, Run
from ci_agent.engine.marker import ChainLink, events, fetch_fix_branch, read_chain
from ci_agent.engine.marker_entries import Proposed
from ci_agent.errors import ExitCode, ForgeError
from ci_agent.patch.buildtime import build_changes
from ci_agent.patch.parse import PatchParseError, parse_patch


def _budget(run: Run, cycle: Cycle) -> Budget:
    return assess(events(read_chain(cycle.repo, cycle.remote_tip), cycle.marker), run.inputs.max_attempts)


def explained(run: Run, cycle: Cycle, outcome: Outcome, details: str, collected: Collected) -> Result:
    log = outcome.attempts[-1]
    assert log.proposal is not None
    p = log.proposal
    text = run.redact(texts.explanation_text(p.root_cause, p.summary, p.assumptions, p.open_questions,
                                             p.confidence))
    budget = _budget(run, cycle)
    holder = cycle.pr
    run.status(cycle, holder, "explanation of the latest failure", budget, [text])
    return run.result(cycle, "explained", ExitCode.OK, "posted a root-cause analysis; nothing changed",
                      tokens=outcome.usage.total, collected=collected, details=details)


def propose(run: Run, cycle: Cycle, outcome: Outcome, details: str, collected: Collected) -> Result:
    """Mode propose: the attempt's commit (made on a private local ref) becomes a diff in the
    status comment of the failing branch's change request; nothing is pushed."""
    log = outcome.attempts[-1]
    tokens = outcome.usage.total
    base = state.rev(cycle.repo, log.commit + "^") or ""
    diff = git.git_ok(cycle.repo, ["diff", "--no-color", "--no-ext-diff", base, log.commit])
    words = run.words
    why = ""
    if run.redact(diff) != diff:
        why = "the patch holds text that looks like a secret, so it is not posted"
    elif len(diff) > texts.MAX_PROPOSAL_CHARS:
        why = (f"the patch is {len(diff)} characters, too long for a comment (at most "
               f"{texts.MAX_PROPOSAL_CHARS})")
    elif cycle.pr is None:
        why = (f"{cycle.fix_branch} has no open {words.change_request} to post it on; it is in this "
               "job's summary only")
    budget = _budget(run, cycle)
    summary = log.proposal.summary if log.proposal else ""
    if why:
        run.status(cycle, cycle.pr, "no patch proposed", budget, [why])
        return run.result(cycle, "gave_up" if cycle.pr else "proposed",
                          ExitCode.NO_SAFE_PATCH if cycle.pr else ExitCode.OK, why, tokens=tokens,
                          collected=collected, details=details)
    proposal = Proposed(hashlib.sha256(diff.encode()).hexdigest(), base, cycle.fix_branch, log.number,
                        " ".join(summary.split())[:200], log.fingerprint)
    cycle.marker = replace(cycle.marker, proposed=proposal)
    if run.trig.run_id:
        cycle.marker = cycle.marker.with_run(run.trig.run_id, "proposed")
    where = words.ref(cycle.pr.number) if cycle.pr else cycle.fix_branch
    message = f"patch proposed on {where}; nothing pushed"
    lines = [message, run.redact(texts.pr_title(cycle.source, summary)), texts.proposal_block(diff)]
    run.status(cycle, cycle.pr, "patch proposed: `/ci-agent apply` applies it", budget, lines)
    return run.result(cycle, "proposed", ExitCode.OK, message, attempt=log.number, tokens=tokens,
                      collected=collected, details=details)


def _build_changes(repo: Path, commit: str) -> tuple[str, ...]:
    """The build-time edits of a pushed attempt, read back from its commit (patch.buildtime)."""
    try:
        return build_changes(parse_patch(git.git_ok(repo, ["diff", "--no-color", "--no-ext-diff",
                                                           "--no-renames", f"{commit}^", commit])))
    except PatchParseError:
        return ()


def orphaned(run: Run, cycle: Cycle, chain: list[ChainLink], tip: ChainLink, collected: Collected) -> Result:
    """The fix branch holds a pushed attempt that no change request shows: an earlier job pushed
    it and then failed to open one (a missing permission, an outage). Open it now rather than
    leave the fix where nobody reviews it. If one was opened and closed, a person decided:
    say so and do nothing."""
    assert tip.attempt is not None  # decided on a pending attempt at the tip
    number = tip.attempt.number
    found = cycle.forge.find_change_request(cycle.fix_branch, include_closed=True)
    if found is not None and found.state in ("open", "opened"):
        # the job that pushed it opened it a moment ago, after we looked: it is waiting for CI
        return run.result(cycle, "skipped", ExitCode.OK, f"attempt {number} on {cycle.fix_branch} "
                          f"is waiting for its CI {run.words.run} ({run.words.ref(found.number)} "
                          "was just opened by the job that pushed it); no new attempt",
                          collected=collected)
    if found is not None:
        return run.result(cycle, "skipped", ExitCode.OK, f"{cycle.fix_branch} holds attempt "
                          f"{number} but its {run.words.change_request} was closed or merged; "
                          "delete the branch to start over", collected=collected)
    if run.inputs.dry_run:
        return run.result(cycle, "skipped", ExitCode.OK, f"dry run: would open the missing "
                          f"{run.words.change_request} for attempt {number}", collected=collected)
    message = git.git_ok(cycle.repo, ["log", "-1", "--format=%B", tip.sha]).strip()
    summary = message.splitlines()[0] if message else ""
    details = (f"Attempt {number} was pushed by an earlier job that could not open this "
               f"{run.words.change_request}; its commit says:\n\n"
               + texts.fence(run.redact(message)))
    flagged = _build_changes(cycle.repo, tip.sha)
    callout = texts.build_change_callout(flagged, run.words) if flagged else ""
    cycle.pr = cycle.forge.open_change_request(
        cycle.fix_branch, cycle.source, run.redact(texts.pr_title(cycle.source, summary)),
        run.redact(callout + texts.pr_body(cycle.source, details, run.words)),
        draft=run.inputs.draft)
    cycle.forge.add_labels(cycle.pr.number, [texts.LABEL, *([texts.BUILD_CHANGE_LABEL] if flagged else [])])
    if run.trig.run_id:
        cycle.marker = cycle.marker.with_run(run.trig.run_id, f"attempt {number}")
    note = run.platform.start_ci(cycle.forge, cycle.token, cycle.fix_branch, tip.sha)
    text = (f"opened {run.words.ref(cycle.pr.number)} for attempt {number}, which an earlier job "
            f"pushed to {cycle.fix_branch} without one; CI decides")
    budget = assess(events(chain, cycle.marker), run.inputs.max_attempts)
    run.status(cycle, cycle.pr, f"attempt {number} pushed, waiting for CI", budget, [text, note])
    return run.result(cycle, "committed", ExitCode.OK, text, attempt=number, collected=collected)


def push(run: Run, cycle: Cycle, outcome: Outcome, details: str, collected: Collected) -> Result:
    """The committed attempt pushed fast-forward to the fix branch, its change request opened or
    updated, CI started on it, the status comment saying it waits for CI."""
    log = outcome.attempts[-1]
    rejected = gitops.push_fast_forward(cycle.repo, log.commit, cycle.fix_branch, cycle.auth)
    tokens = outcome.usage.total
    if rejected is not None:
        now = fetch_fix_branch(cycle.repo, cycle.fix_branch)
        if now != cycle.remote_tip:  # someone else pushed: their commit wins, never force
            return run.result(cycle, "skipped", ExitCode.OK, f"{cycle.fix_branch} moved on origin "
                              "while this attempt ran (another run or a person); nothing was "
                              "pushed and the next CI run decides", tokens=tokens, details=details)
        raise ForgeError(f"pushing {cycle.fix_branch} to origin failed: {run.redact(rejected)}")
    summary = log.proposal.summary if log.proposal else ""
    _show_change_request(run, cycle, log, summary, details)
    cycle.marker = cycle.marker.with_run(run.trig.run_id, f"attempt {log.number}") \
        if run.trig.run_id else cycle.marker
    note = run.platform.start_ci(cycle.forge, cycle.token, cycle.fix_branch, log.commit)
    verified = "verified locally; " if outcome.status == "fixed" else ""
    message = f"attempt {log.number} pushed to {cycle.fix_branch} ({verified}CI decides)"
    budget = assess(events(read_chain(cycle.repo, fetch_fix_branch(cycle.repo, cycle.fix_branch)),
                           cycle.marker), run.inputs.max_attempts)
    lines = [message, run.redact(texts.pr_title(cycle.source, summary)), note]
    if outcome.no_progress:
        lines.append("**No progress:** the failure is one a previous patch already tried to fix.")
    run.status(cycle, cycle.pr, f"attempt {log.number} pushed, waiting for CI", budget, lines)
    return run.result(cycle, outcome.status, ExitCode.OK, message, attempt=log.number, tokens=tokens,
                      collected=collected, details=details)


def _show_change_request(run: Run, cycle: Cycle, log: AttemptLog, summary: str, details: str) -> None:
    """The fix change request opened (its push taken back when that fails) or retitled and
    relabelled for the new attempt; mode push leaves the person's own change request alone."""
    if run.in_place:
        return
    callout = texts.build_change_callout(log.build_change, run.words) if log.build_change else ""
    body = run.redact(callout + texts.pr_body(cycle.source, details, run.words))
    title = run.redact(texts.pr_title(cycle.source, summary))
    labels = [texts.LABEL, *([texts.BUILD_CHANGE_LABEL] if log.build_change else [])]
    forge = cycle.forge
    if cycle.pr is None:
        try:
            cycle.pr = forge.open_change_request(cycle.fix_branch, cycle.source, title, body,
                                                 draft=run.inputs.draft)
        except ForgeError as error:
            # No fix branch may stay on origin without its change request: take our push
            # back (only if the branch is still exactly our commit), then report the error.
            undone = gitops.undo_push(cycle.repo, cycle.fix_branch, log.commit, cycle.remote_tip, cycle.auth)
            where = ("the pushed attempt was taken back" if undone else f"the pushed attempt stays "
                     f"on {cycle.fix_branch}; a rerun opens its {run.words.change_request}")
            raise ForgeError(f"{error} ({where})") from error
        forge.add_labels(cycle.pr.number, labels)
        return
    cycle.pr = forge.update_change_request(cycle.pr.number, title=title, body=body)
    forge.add_labels(cycle.pr.number, labels)
    if not log.build_change and texts.BUILD_CHANGE_LABEL in cycle.pr.labels:
        forge.remove_label(cycle.pr.number, texts.BUILD_CHANGE_LABEL)  # this attempt has none
