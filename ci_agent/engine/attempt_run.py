"""The attempt executor of a CI cycle: the attempt engine (`ci_agent.engine.attempt`) run on the
fix branch as origin has it, writing its attempts into the marker (`ledger.MarkerLedger`), and
what its outcome turns into (`decide.after_engine`): a push, a proposal, an explanation, an
escalation, or a status comment saying why nothing was pushed."""

from __future__ import annotations

from dataclasses import replace

from ci_agent.engine import decide as d
from ci_agent.engine import gitops, money, spend
from ci_agent.engine.attempt import Outcome, Plan, Seams
from ci_agent.engine.change_base import with_change_base
from ci_agent.engine.ci_plan import (
    make_plan,
    make_seams,
    unverifiable_record,
    unverifiable_text,
    verify_preflight,
)
from ci_agent.engine.collect import Collected, describe
from ci_agent.engine.cycle import Cycle, Result, Run
from ci_agent.engine.dry_run import size_sentence
from ci_agent.engine.escalation import escalate
from ci_agent.engine.ledger import MarkerLedger
from ci_agent.engine.marker import ChainLink
from ci_agent.engine.publish import explained, propose, push
from ci_agent.engine.sources import Sources
from ci_agent.engine.spend import GitSpendLedger
from ci_agent.errors import ExitCode
from ci_agent.llm.pricing import Pricing


def attempt(run: Run, cycle: Cycle, chain: list[ChainLink], collected: Collected, sources: Sources) -> Result:
    source_ref = (gitops.fetch_source(cycle.repo, cycle.source, cycle.auth)
                  if not run.observing else "refs/heads/" + cycle.engine_branch)
    gitops.reset_local_fix_branch(cycle.repo, cycle.engine_branch, cycle.remote_tip)
    ledger = MarkerLedger(cycle.repo, cycle.engine_branch, cycle.marker, chain, run.trig.run_id,
                          read_marker=not run.inputs.dry_run)
    plan = make_plan(cycle.repo, source_ref, cycle.engine_branch, cycle.settings, run.inputs, sources,
                     run.instructions, run.explain)
    if plan.verify and not run.explain:  # before any model call: a verify that cannot start
        verify_preflight(plan, run.words)  # would waste every attempt's money
        standing = cycle.marker.standing_unverifiable(collected.fingerprint, describe(plan.verify))
        if standing is not None:  # it could not run for this failure before: no new payment
            return run.result(cycle, "error", ExitCode(standing.code),
                              unverifiable_text(standing, run.words, again=True), collected=collected)
    # a pull request's change under test is its diff against the merge base with its target: the
    # failing branch's own one in modes push/propose, else (mode pr) the default branch it most
    # likely targets; a run without a pull request shows the failing commit against its parent
    target = (cycle.pr.target_branch if run.in_place and cycle.pr is not None
              else cycle.forge.default_branch() if run.trig.pr_number is not None else None)
    seams = make_seams(with_change_base(cycle.settings, cycle.repo, target, cycle.auth), run.env, run.inputs,
                       run.client_factory, run.platform.missing_key(cycle.fix_branch))
    seams, day = _metered(run, cycle, seams)
    outcome = money.run_metered(plan, cycle.settings, seams, run.emit, ledger)
    money.close_day(seams.meter, day, spend.today(), outcome.capped, run.warn)
    cycle.marker = replace(ledger.marker, tokens=cycle.marker.tokens + outcome.usage.total,
                           cost_usd=cycle.marker.cost_usd + outcome.cost_usd,
                           capped=money.branch_mark(outcome.capped) or cycle.marker.capped)
    return _after(run, cycle, plan, outcome, collected)


def _metered(run: Run, cycle: Cycle, seams: Seams) -> tuple[Seams, GitSpendLedger | None]:
    """The meter of this run: the fix branch's spend and cap mark from the marker, the day's from
    the ledger on origin (read before the first call; a dry run reads nothing)."""
    meter = money.new_meter(cycle.settings, run.warn, branch_before=cycle.marker.branch_spent,
                            branch_mark=cycle.marker.capped)
    day = None if run.inputs.dry_run else money.day_ledger(cycle.repo, cycle.settings, remote=True,
                                                            auth=cycle.auth)
    money.open_day(meter, day, spend.today())
    return replace(seams, meter=meter), day


def _after(run: Run, cycle: Cycle, plan: Plan, outcome: Outcome, collected: Collected) -> Result:
    details = run.details(outcome, plan)
    kind = d.after_engine(outcome.status, run.in_place and run.inputs.mode == "propose")
    if kind == d.DRY_RUN:
        return _dry_run(run, cycle, outcome, collected, details)
    if kind == d.ESCALATE:
        assert outcome.budget is not None
        return escalate(run, cycle, outcome.budget, collected, tokens=outcome.usage.total, details=details,
                        cap=outcome.capped)
    if kind == d.EXPLAINED:
        return explained(run, cycle, outcome, details, collected)
    if kind == d.UNVERIFIABLE:
        return _unverifiable(run, cycle, plan, outcome, collected, details)
    if kind == d.PROPOSE:
        return propose(run, cycle, outcome, details, collected)
    if kind == d.PUSH:
        return push(run, cycle, outcome, details, collected)
    return _no_patch(run, cycle, outcome, collected, details)


def _dry_run(run: Run, cycle: Cycle, outcome: Outcome, collected: Collected, details: str) -> Result:
    assert outcome.request is not None
    size = size_sentence(outcome.request, Pricing.from_config(cycle.settings.prices))
    result = run.result(cycle, "skipped", ExitCode.OK, "dry run: nothing was sent, pushed or "
                        f"posted; {size}, printed in the log",
                        collected=collected, details=details)
    result.request = outcome.request
    return result


def _unverifiable(run: Run, cycle: Cycle, plan: Plan, outcome: Outcome, collected: Collected,
                  details: str) -> Result:
    """Recorded in the marker, so reruns for this failure pay for no model call."""
    record = unverifiable_record(outcome, plan, run.trig.run_id)
    cycle.marker = cycle.marker.with_unverifiable(record)
    message = unverifiable_text(record, run.words, again=False)
    run.status(cycle, cycle.pr, "the verify command could not run", outcome.budget, [message])
    return run.result(cycle, "error", outcome.exit_code, message, tokens=outcome.usage.total,
                      collected=collected, details=details)


def _no_patch(run: Run, cycle: Cycle, outcome: Outcome, collected: Collected, details: str) -> Result:
    """The model gave up (or nothing was left to fix): the status comment says why."""
    status = outcome.status if outcome.status in ("gave_up", "nothing_to_do") else "gave_up"
    run.status(cycle, cycle.pr, "no safe patch" if status == "gave_up" else "nothing to fix",
               outcome.budget, [run.redact(outcome.message)])
    return run.result(cycle, status, outcome.exit_code, outcome.message, tokens=outcome.usage.total,
                      collected=collected, details=details)
