"""Carrying out what `decide` decided, one small executor per outcome.

`execute` makes the observations the decision asks for (the failure's logs, the run folded into
the marker, the verdicts before the model) and hands the final decision to its executor: the
skips and the wait here, the fix branch's verdicts (`verdicts`), the verdicts before the model
(`triage_run`), the escalation (`escalation`), the recovery of an orphaned attempt (`publish`),
and the attempt (`attempt_run`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ci_agent.engine import decide as d
from ci_agent.engine import texts, triage_run, verdicts
from ci_agent.engine.attempt_run import attempt
from ci_agent.engine.budget import AttemptRecord, assess
from ci_agent.engine.collect import Collected, collect
from ci_agent.engine.cycle import Cycle, Result, Run
from ci_agent.engine.escalation import escalate
from ci_agent.engine.marker import ChainLink, ForgeState, events, observe_run, read_chain
from ci_agent.engine.observe import exhausted, pending, situation
from ci_agent.engine.publish import orphaned
from ci_agent.engine.sources import Sources
from ci_agent.errors import ExitCode


@dataclass
class Seen:
    """What the cycle observed on the way to its decision."""

    chain: list[ChainLink]
    collected: Collected | None = None
    sources: Sources = field(default_factory=lambda: Sources((), ()))
    decided: AttemptRecord | None = None  # the attempt this run on the fix branch decided
    unfolded: ForgeState | None = None  # the marker before this run on the fix branch was folded in
    triage: triage_run.Triage | None = None


def execute(run: Run, cycle: Cycle, tmp: Path) -> Result:
    seen = Seen(read_chain(cycle.repo, cycle.remote_tip))
    now = situation(run, cycle, seen.chain)
    decision = d.decide(now)
    while decision.kind in (d.COLLECT, d.OBSERVE, d.TRIAGE):
        if decision.kind == d.COLLECT:
            now = replace(now, red=_collect(run, cycle, seen, tmp))
        elif decision.kind == d.OBSERVE:
            now = _observe(run, cycle, seen, now, decision.green)
        else:
            assert seen.collected is not None  # triage comes after a red run was collected
            seen.triage = triage_run.look(run, cycle, seen.collected, seen.sources, tmp)
            now = replace(now, triage=seen.triage.kind)
        decision = d.decide(now)
    return _carry_out(run, cycle, seen, decision)


def _collect(run: Run, cycle: Cycle, seen: Seen, tmp: Path) -> bool:
    """The failure's logs and results, fetched by the platform and distilled: is anything red?"""
    seen.sources = run.platform.sources(cycle.forge, run.trig, run.inputs, tmp)
    run.notes = seen.sources.notes
    seen.collected = collect(cycle.repo, logs=seen.sources.logs, result_globs=seen.sources.result_globs,
                             root=cycle.repo, labels=seen.sources.labels)
    return seen.collected.red


def _observe(run: Run, cycle: Cycle, seen: Seen, now: d.Situation, green: bool) -> d.Situation:
    """This run on the fix branch folded into the marker (`marker.observe_run`)."""
    # Paused, a red run is recorded without its run id: the attempt's verdict counts now, and
    # after `/ci-agent resume` the same run (re-run) may still start the next attempt.
    holding = cycle.paused is not None and not green
    seen.unfolded = cycle.marker
    observed = observe_run(cycle.marker, seen.chain, "" if holding else run.trig.run_id, run.trig.sha, green,
                           seen.collected.fingerprint if seen.collected else "")
    cycle.marker = observed.state  # unchanged when the run was seen before or is stale
    seen.decided = observed.attempt
    return replace(now, verdict=observed.verdict, tip_pending=pending(seen.chain, observed.state),
                   exhausted=exhausted(run, cycle, seen.chain))


def _carry_out(run: Run, cycle: Cycle, seen: Seen, decision: d.Decision) -> Result:
    kind, collected = decision.kind, seen.collected
    if kind == d.SKIP and decision.why == d.RERUN_PENDING:
        assert seen.triage is not None and collected is not None
        return triage_run.rerun_pending(run, cycle, seen.chain, collected, seen.triage, seen.unfolded)
    if kind == d.SKIP:
        return run.result(cycle, "skipped", ExitCode.OK, _skip_message(run, cycle, decision.why),
                          collected=collected)
    if kind == d.NOTHING_TO_DO:
        return run.result(cycle, "nothing_to_do", ExitCode.OK, _nothing_message(run, cycle, decision.why,
                                                                                  seen.sources),
                          collected=collected)
    if kind == d.SUCCESS:
        return verdicts.success(run, cycle, seen.chain)
    assert collected is not None  # every other decision was made on the collected failure
    if kind == d.HELD:
        return verdicts.held(run, cycle, seen.chain, seen.decided, collected)
    if kind == d.ORPHANED:
        return orphaned(run, cycle, seen.chain, seen.chain[-1], collected)
    if kind == d.WAITING:
        return _waiting(run, cycle, seen.chain, collected)
    if kind == d.JUDGED:
        assert seen.triage is not None
        return triage_run.judged(run, cycle, seen.chain, collected, seen.triage, seen.unfolded)
    if kind == d.ESCALATE:
        budget = assess(events(seen.chain, cycle.marker), run.inputs.max_attempts)
        return escalate(run, cycle, budget, collected)
    return attempt(run, cycle, seen.chain, collected, seen.sources)


def _skip_message(run: Run, cycle: Cycle, why: str) -> str:
    trig = run.trig
    if why == d.HANDLED:
        return (f"run {trig.run_id} was already handled ({cycle.marker.runs[trig.run_id]}); a rerun "
                "changes nothing")
    if why == d.NO_VERDICT:
        return (f"the {run.words.run} concluded {trig.conclusion or 'without a conclusion'}; it decides "
                "nothing")
    return (f"this run tested an older commit of {cycle.fix_branch}; a newer one is waiting for its "
            "own run")


def _nothing_message(run: Run, cycle: Cycle, why: str, sources: Sources) -> str:
    notes = "".join(f"; {n}" for n in sources.notes)
    if why == d.NOTHING_TO_EXPLAIN:
        return f"nothing fails in the latest failed {run.words.run}'s logs and results; nothing to explain"
    if why == d.GREEN_LOGS_ON_FIX_BRANCH:
        return (f"the logs and results given show no failure on {cycle.fix_branch}; check the build_logs "
                "and test_results inputs" + notes)
    return "nothing fails in the logs and results given; nothing to fix" + notes


def _waiting(run: Run, cycle: Cycle, chain: list[ChainLink], collected: Collected) -> Result:
    """The tip is an attempt CI has not decided: no new one. A job that pushed it and stopped
    before labelling or writing the status comment is finished here."""
    tip = chain[-1]
    assert tip.attempt is not None
    waiting = (f"attempt {tip.attempt.number} on {cycle.fix_branch} is waiting for its CI "
               f"{run.words.run}; no new attempt")
    if cycle.pr is not None and texts.LABEL not in cycle.pr.labels and not run.inputs.dry_run:
        cycle.forge.add_labels(cycle.pr.number, [texts.LABEL])
    if cycle.pr is not None and cycle.forge.read_status_state(cycle.pr.number) is None:
        budget = assess(events(chain, cycle.marker), run.inputs.max_attempts)
        run.status(cycle, cycle.pr, f"attempt {tip.attempt.number} pushed, waiting for CI", budget, [waiting])
    return run.result(cycle, "skipped", ExitCode.OK, waiting, collected=collected)
