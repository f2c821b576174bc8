"""The end of a count (DESIGN.md §4.3): after the last allowed attempt failed, one escalation
comment and the `ci-agent:escalated` label, exactly once, where a person looks.

- On the fix change request, when one was opened.
- When none was (every attempt failed the in-job verify, so nothing was pushed): on the failing
  branch's own change request, whose status comment holds the marker.
- With no change request anywhere (a push to the default branch): a comment on the failing
  commit. Its first line is our marker (escalated, the attempts tried), so a rerun of that run,
  or a new run of that commit, reads the count back and asks the model nothing. A new commit has
  no such comment: a new count.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from ci_agent.config import Settings
from ci_agent.engine import texts
from ci_agent.engine.budget import Budget
from ci_agent.engine.collect import Collected
from ci_agent.engine.cycle import Cycle, Result, Run
from ci_agent.engine.forge import Forge, parse_marker, pick_status_comment, status_body
from ci_agent.engine.marker import ForgeState
from ci_agent.errors import ExitCode, ForgeError
from ci_agent.llm.metered import CapReached
from ci_agent.logguard import log_line


def escalate(run: Run, cycle: Cycle, budget: Budget, collected: Collected, *, tokens: int = 0,
             details: str = "", cap: CapReached | None = None) -> Result:
    """Escalate once per count; `tokens` are this run's (the attempts it made before escalating).
    `cap`: a money cap stopped the run, not the attempt budget (issue 16). The job summary says
    where the escalation went in every case."""
    trig, words = run.trig, run.words
    forge, pr = cycle.forge, cycle.pr
    target = pr.number if pr is not None else trig.pr_number
    cycle.marker = replace(cycle.marker, escalated=True)
    if trig.run_id and trig.run_id not in cycle.marker.runs:
        cycle.marker = cycle.marker.with_run(trig.run_id, "escalated")
    where = ""
    if not cycle.marker.escalation_posted and not run.inputs.dry_run:
        unpushed = cycle.source if cycle.remote_tip is None and not run.in_place else ""
        body = run.redact(texts.escalation_text(cycle.fix_branch, budget.failures, collected.report,
                                                cycle.marker.tokens, unpushed_source=unpushed,
                                                cost_usd=cycle.marker.cost_usd, cap=str(cap or "")))
        if target is not None:
            post_once(forge, target, body)
            forge.add_labels(target, [texts.ESCALATED_LABEL])
            cycle.marker = replace(cycle.marker, escalation_posted=True)
        elif trig.sha:
            cycle.marker = replace(cycle.marker, escalation_posted=True)
            where = (f"; no {words.change_request} exists, so the escalation is a comment on "
                     f"commit {trig.sha[:12]}")
            try:
                forge.post_commit_comment(trig.sha, status_body(cycle.marker.to_json(), body))
            except ForgeError as error:  # the summary still says it all; the exit code stays 3
                where = (f"; no {words.change_request} exists and the comment on commit "
                         f"{trig.sha[:12]} could not be written: {run.redact(str(error))}")
    if target is not None:
        where = f"; see {words.ref(target)}"
    message = (f"{budget.consecutive_failures} consecutive failed attempts on {cycle.fix_branch}; "
               f"escalated, no further model call{where}")
    headline = f"escalated after {budget.consecutive_failures} failed attempts"
    if cap is not None:
        message = f"{cap}; escalated, no further model call{where}"
        headline = f"escalated: {cap.cap} cost cap"
    run.status(cycle, pr, headline, budget, [message])
    return run.result(cycle, "escalated", ExitCode.BUDGET_EXHAUSTED, message, tokens=tokens,
                      collected=collected, details=details)


def commit_record(run: Run, forge: Forge, settings: Settings) -> ForgeState:
    """The marker of our escalation comment on the failing commit (no change request anywhere).
    Only an in-job verify can fail every attempt without opening one, so only then is it worth
    a request; a token that may not read commit comments leaves no record (and says so)."""
    sha = run.trig.sha
    if not sha or not (run.inputs.verify or settings.commands.verify):
        return ForgeState()
    try:
        found = pick_status_comment(forge.commit_comments(sha), forge.own_login())
    except ForgeError as error:
        print(log_line(f"ci-agent: warning: {run.redact(str(error))}"), file=sys.stderr, flush=True)
        return ForgeState()
    return ForgeState.from_json(parse_marker(found.body) if found else None)


def post_once(forge: Forge, number: int, body: str) -> None:
    """The escalation comment, unless one of ours is already there (a rerun after a crash)."""
    own = forge.own_login().lower()

    def ours() -> list[int]:
        return sorted(c.id for c in forge.list_comments(number)
                      if c.body.startswith(texts.ESCALATION_TAG) and c.author.lower() == own)
    if ours():
        return
    posted = forge.post_comment(number, body)
    # Two jobs escalating at the same moment both saw none: the older comment stays, ours goes.
    if min(ours(), default=posted.id) != posted.id:
        forge.delete_comment(number, posted.id)
