"""What a CI run on the fix branch decides, once `forge_state.observe_run` folded it into the
marker: a green run marks the fix ready (on the fix change request and, when it holds our status
comment, the person's one); a red run while `/ci-agent stop` holds is written down without a new
attempt. Executors of `decide`'s SUCCESS and HELD."""

from __future__ import annotations

from typing import Any

from ci_agent.engine import texts
from ci_agent.engine.budget import AttemptRecord, assess
from ci_agent.engine.collect import Collected
from ci_agent.engine.cycle import Cycle, Result, Run
from ci_agent.engine.forge import ChangeRequest
from ci_agent.engine.marker import events
from ci_agent.errors import ExitCode


def success(run: Run, cycle: Cycle, chain: list[Any]) -> Result:
    forge, pr, words = cycle.forge, cycle.pr, run.words
    if pr is not None and not run.inputs.dry_run:
        if not run.in_place:  # a person's own change request keeps its draft state
            pr = forge.update_change_request(pr.number, draft=False)
        forge.remove_label(pr.number, texts.ESCALATED_LABEL)
    ready = f"; the {words.change_request} is ready for review" if pr and not run.in_place else ""
    message = f"CI is green on {cycle.fix_branch} at {run.trig.sha[:12] or 'its tip'}{ready}"
    budget = assess(events(chain, cycle.marker), run.inputs.max_attempts)
    lines = [message] + ([f"Fix {words.change_request}: {words.ref(pr.number)}"]
                         if pr is not None and not run.in_place else [])
    run.status(cycle, pr, "fixed: CI is green on the fix branch", budget, lines,
               also=source_holder(run, cycle, pr))
    return run.result(cycle, "fixed", ExitCode.OK, message, pr=pr)


def held(run: Run, cycle: Cycle, chain: list[Any], decided: AttemptRecord | None,
         collected: Collected) -> Result:
    """A red run while paused: CI's verdict on the pending attempt is written down (so the budget
    and the next run after `/ci-agent resume` know it), and no new attempt is made."""
    assert cycle.paused is not None
    paused = (f"{run.words.ref(cycle.paused.number)} is labelled {texts.PAUSED_LABEL}; no new attempt "
              "until `/ci-agent resume`")
    message = (f"attempt {decided.number} failed on CI (recorded); " if decided else "") + paused
    budget = assess(events(chain, cycle.marker), run.inputs.max_attempts)
    if decided is not None:
        run.status(cycle, cycle.pr, f"paused: attempt {decided.number} failed on CI", budget, [message])
    return run.result(cycle, "skipped", ExitCode.OK, message, collected=collected)


def source_holder(run: Run, cycle: Cycle, pr: ChangeRequest | None) -> tuple[int, ...]:
    """The change request of the branch being fixed, when it holds our status comment: a run on
    the fix branch knows only the fix change request, and the person's one would otherwise keep
    saying "waiting for CI" after the fix went green."""
    if run.in_place or not run.trig.on_fix_branch or run.inputs.dry_run:
        return ()
    source = cycle.forge.find_change_request(cycle.source)
    if source is None or (pr is not None and source.number == pr.number):
        return ()
    return (source.number,) if cycle.forge.read_status_state(source.number) is not None else ()
