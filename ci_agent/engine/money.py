"""Money caps in the engine (issue 16): the meter of a run, built from the configuration and the
spend the ledgers hold (the fix branch's: the marker in CI, commit trailers for `fix --local`;
the day's: `ci_agent.engine.spend`), and the day ledger read before and written after a run.

A cap that stands before any call — the marker's mark of a cap that stopped an earlier run on
this fix branch, the day ledger's mark, or a day ledger that cannot be read while the day cap is
set — is put on the meter as `blocked`: the first model call is refused with it, so the run
escalates without asking the model anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ci_agent import git
from ci_agent.config import Settings
from ci_agent.engine import state
from ci_agent.engine.attempt import AttemptLog, Emit, Outcome, Plan, Seams, run_fix
from ci_agent.engine.ledger import Ledger
from ci_agent.engine.spend import SPEND_REF, UNREADABLE, Day, GitSpendLedger, SpendLedgerError, today
from ci_agent.errors import ExitCode
from ci_agent.llm.metered import ATTEMPT, BRANCH, DAY, CapReached, Caps, Meter
from ci_agent.llm.pricing import Pricing, usd

COST_TRAILER = "CI-Agent-Cost-USD"
Warn = Callable[[str], None]


def local_meter(plan: Plan, settings: Settings, seams: Seams,
                warn: Warn) -> tuple[Seams, GitSpendLedger | None]:
    """`fix --local`: the fix branch's spend from its commits' `CI-Agent-Cost-USD` trailers, the
    day's from the local ref `refs/ci-agent/spend` (a dry run reads and writes none)."""
    refs = ["refs/heads/" + plan.fix_branch, state.attempts_ref(plan.fix_branch)]
    meter = new_meter(settings, warn, branch_before=trailer_costs(plan.repo, refs, plan.source_ref))
    day = None if plan.dry_run else day_ledger(plan.repo, settings, remote=False)
    open_day(meter, day, today())
    return replace(seams, meter=meter), day


def run_metered(plan: Plan, settings: Settings, seams: Seams, emit: Emit, ledger: Ledger) -> Outcome:
    """`attempt.run_fix` under `seams.meter`: a money cap that refuses a model call (the fixer's
    or the reviewer's) ends the run escalated; each attempt's cost and the run's are filled in."""
    started: list[Outcome] = []
    try:
        outcome = run_fix(plan, settings, seams, emit, ledger, started)
    except CapReached as cap:
        outcome = capped(started[0], cap, seams.meter, emit)
    for log in outcome.attempts:
        log.cost_usd = seams.meter.attempt_costs.get(log.number, 0.0)
    outcome.cost_usd = seams.meter.run_cost
    return outcome


def capped(outcome: Outcome, cap: CapReached, meter: Meter, emit: Emit) -> Outcome:
    """The run stopped at a money cap: escalated (DESIGN §4.2's exit 3), with the calls the
    interrupted attempt made, if any, as its log."""
    n = meter.attempt
    if n in meter.attempt_calls and all(a.number != n for a in outcome.attempts):
        outcome.attempts.append(AttemptLog(n, outcome.fingerprint, meter.attempt_usage[n],
                                           meter.attempt_calls[n], ()))
    outcome.status, outcome.exit_code, outcome.capped = "escalated", ExitCode.BUDGET_EXHAUSTED, cap
    outcome.message = f"{cap}; escalated, no further model call"
    emit("cost_cap", cap=cap.cap, spent=round(cap.spent, 6), limit=cap.limit,
         estimate=round(cap.estimate, 6))
    return outcome


def caps(settings: Settings) -> Caps:
    b = settings.budget
    return Caps(b.max_cost_per_attempt_usd, b.max_cost_per_branch_usd, b.max_cost_per_day_usd)


def new_meter(settings: Settings, warn: Warn, *, branch_before: float = 0.0,
              branch_mark: str = "") -> Meter:
    """The meter of one run; `branch_mark` is the cap that stopped an earlier run on this fix
    branch ("" none): it holds every call back until a green run or a retry lifts it."""
    meter = Meter(Pricing.from_config(settings.prices), caps(settings), branch_before, 0.0, warn)
    if branch_mark in (ATTEMPT, BRANCH):
        meter.blocked = CapReached(branch_mark, branch_before, meter.limits()[branch_mark], 0.0,
                                   held_back(branch_mark, branch_before))
    return meter


def held_back(cap: str, spent: float) -> str:
    return (f"the {cap} cost cap stopped an earlier run on this fix branch ({usd(spent)} spent on it); "
            "no model call until a green run or `/ci-agent retry`")


def open_day(meter: Meter, ledger: GitSpendLedger | None, date: str) -> None:
    """Read the day's spend onto `meter` before the first call (nothing to read when the day cap
    is 0). Fails closed: an unreadable ledger blocks every call while the day cap is set."""
    limit = meter.caps.day
    if limit <= 0 or ledger is None:
        return
    try:
        day = ledger.read(date)
    except SpendLedgerError as error:
        meter.blocked = meter.blocked or CapReached(DAY, 0.0, limit, 0.0,
                                                    UNREADABLE.format(ref=SPEND_REF, why=error))
        return
    meter.day_before = day.spent_usd
    if day.capped and meter.blocked is None:
        meter.blocked = CapReached(DAY, day.spent_usd, limit, 0.0,
                                   f"the day cost cap stopped an earlier run today ({usd(day.spent_usd)} "
                                   f"spent, cap {usd(limit)}); no model call until the next UTC day")


def close_day(meter: Meter, ledger: GitSpendLedger | None, date: str, capped: CapReached | None,
              warn: Warn) -> Day | None:
    """Add this run's spend (and the day cap's mark when it stopped the run) to the day ledger.
    A ledger that cannot be written is said, not fatal: the money is spent either way."""
    if meter.caps.day <= 0 or ledger is None:
        return None
    mark = capped is not None and capped.cap == DAY and meter.blocked is not capped
    if meter.run_cost <= 0 and not mark:
        return None
    try:
        return ledger.add(date, meter.run_cost, capped=mark)
    except SpendLedgerError as error:
        warn(f"this run's spend ({usd(meter.run_cost)}) could not be added to the day ledger "
             f"{SPEND_REF}: {error}")
        return None


def day_ledger(repo: Path, settings: Settings, *, remote: bool,
               auth: list[str] | None = None) -> GitSpendLedger:
    ident = git.Identity(settings.commit.author_name, settings.commit.author_email)
    return GitSpendLedger(repo, ident, remote=remote, auth=auth)


def branch_mark(capped: CapReached | None) -> str:
    """What the fix branch's ledger keeps of a cap that stopped this run ("" for the day cap,
    which the day ledger keeps, or a cap that only stood from before)."""
    return capped.cap if capped is not None and capped.cap in (ATTEMPT, BRANCH) else ""


def cost_line(total: float) -> str:
    return f"Cost on this fix branch: {usd(total)}."


def trailer_costs(repo: Path, refs: list[str], since: str) -> float:
    """USD in the `CI-Agent-Cost-USD` trailers of the commits of `refs` not in `since` (`fix
    --local`: the fix branch and its side ref of rolled-back attempts, past the source)."""
    present = [r for r in refs if git.git(repo, ["rev-parse", "--verify", "--quiet", r]).ok]
    if not present:
        return 0.0
    out = git.git(repo, ["log", "--format=%(trailers:key=" + COST_TRAILER + ",valueonly)", *present,
                         "--not", since, "--"])
    total = 0.0
    for line in out.stdout.split():
        try:
            value = float(line)
        except ValueError:
            continue
        if 0 <= value < 1e9:
            total += value
    return total

