"""The verdicts before the model in a CI cycle (issue 16; DESIGN.md §3 `triage`): `look` is the
`decide.TRIAGE` observation, `judged` the executor of `decide.JUDGED`, `rerun_pending` the one of
a flaky check still waiting for its re-run.

`look` asks, cheapest first, and stops at the first verdict:
1. infrastructure (free: the logs and job facts already fetched; `triage.infra.classify`);
2. pre-existing (one query for the default branch's latest run, and its logs;
   `triage_preexisting.judge_pre_existing`). Some failures shared, not all: no verdict, a line
   saying which ones in the job summary and the status comment, and the attempt goes on;
3. flaky (the forge re-runs the failed jobs once; `triage_flaky.check_flaky`), only for a run that
   names failed tests (a build error is not re-run), never for an inline step (its job is still
   running, it cannot be re-run: one line in the job summary says so), never in a dry run
   (nothing is started), never for a run that is itself a re-run nobody recorded (GitHub's
   `run_attempt` > 1 without a record of ours: its failure stands, no re-run of a re-run).
   A re-run that fails again, or that the forge refuses, lets the attempt go on; one that has not
   finished within `triage.rerun_timeout_s` ends the job (`skipped`) and the re-run's completion
   decides (its event runs the cycle again; the marker's record makes it conclude, not re-run).

A verdict means no patch and no model call: the outcome is the verdict's kind (`flaky`,
`pre_existing`, `infrastructure`; exit 0, the job did its job), the status comment says why with
the tests and evidence, the job summary carries the verdict as JSON, and a flaky verdict labels
the change request `ci-agent:flaky` and names the quarantine candidates.

Which runs are judged (`decide`): a new attempt on a red run only. `/ci-agent explain` changes no
code and is not judged. A writer's `/ci-agent fix` is not judged either: the person saw the
failure and asked for a patch, so their judgment beats ours (and it is the way past a verdict
they think wrong, e.g. a feed error caused by the repository's own nuget.config).

On the fix branch (a run that decides our pending attempt) a verdict undoes the run's fold into
the marker: a run that failed for the environment or a flaky test says nothing about the patch,
so the attempt is not counted as failed and the run id is not recorded as handled; the next run
of that commit decides it (a flaky re-run that passed: GitHub's completion event of the re-run
is a green run of the fix branch, which marks the fix as working). The re-run and flaky records
stay.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ci_agent.engine import decide as d
from ci_agent.engine import texts
from ci_agent.engine.budget import assess
from ci_agent.engine.collect import Collected
from ci_agent.engine.cycle import Cycle, Result, Run
from ci_agent.engine.marker import ChainLink, ForgeState, events
from ci_agent.engine.sources import Sources
from ci_agent.engine.triage_flaky import check_flaky
from ci_agent.engine.triage_preexisting import judge_pre_existing
from ci_agent.errors import ExitCode
from ci_agent.triage import Verdict
from ci_agent.triage.infra import classify


@dataclass(frozen=True)
class Triage:
    """What `look` found: a verdict, a re-run still running (`pending`: the sentence saying so),
    or nothing (the attempt goes on). What people should know either way (a partial overlap with
    the default branch, a re-run that could not be asked) `look` adds to `run.judgment` (the job
    summary) and, for the overlap, `run.status_notes` (every status comment of the run)."""

    verdict: Verdict | None = None
    quarantine: tuple[str, ...] = ()  # flaky: tests flaky often enough to name for quarantine
    pending: str = ""

    @property
    def kind(self) -> str:
        """`decide.Situation.triage`."""
        if self.pending:
            return d.PENDING
        return self.verdict.kind if self.verdict is not None else d.NO_TRIAGE_VERDICT


def look(run: Run, cycle: Cycle, collected: Collected, sources: Sources, tmp: Path) -> Triage:
    """The verdicts before the model, cheapest first (module docstring). The flaky check's records
    go into `cycle.marker`."""
    wanted = cycle.settings.triage
    if wanted.infrastructure:
        found = classify(collected.report, _log_files(sources), sources.jobs)
        if found is not None:
            return Triage(found)
    if wanted.pre_existing:
        shared = judge_pre_existing(run, cycle, collected, tmp)
        if isinstance(shared, Verdict):
            return Triage(shared)
        if shared is not None:  # the attempt goes on for the others; people are told which
            _tell(run, shared.sentence(), in_status=True)
    return _flaky(run, cycle, collected) if wanted.flaky else Triage()


def _tell(run: Run, line: str, in_status: bool = False) -> None:
    if line:
        run.judgment = (*run.judgment, line)
        if in_status:
            run.status_notes = (*run.status_notes, line)


def _flaky(run: Run, cycle: Cycle, collected: Collected) -> Triage:
    trig = run.trig
    why_not = _no_rerun(run, cycle, collected)
    if why_not is not None:
        _tell(run, why_not)
        return Triage()
    check = check_flaky(cycle.forge, int(trig.run_id), collected.report, cycle.settings, cycle.marker)
    cycle.marker = check.marker
    if check.outcome == "flaky":
        return Triage(check.verdict, check.quarantine)
    _tell(run, check.note)
    if check.outcome == "pending":
        return Triage(pending=f"re-running the failed jobs of {run.words.run} {trig.run_id} once to tell a "
                              "flaky test from a broken one; the re-run's result decides")
    return Triage()


def _no_rerun(run: Run, cycle: Cycle, collected: Collected) -> str | None:
    """Why the failed jobs are not re-run, as a line for people ("": nothing worth a line); None
    when they are."""
    trig = run.trig
    if trig.kind == "inline":
        return ("ci-agent runs as a step of the failing job, which is still running and cannot be "
                "re-run: no flaky check (the workflow_run setup re-runs failed jobs once)")
    if not trig.run_id.isdigit():
        return ""
    if not collected.report.failures:
        return ""  # a build error or a crash is not a flaky test: nothing to re-run
    if run.inputs.dry_run:
        return "dry run: the failed jobs were not re-run (no flaky check)"
    if trig.run_attempt not in ("", "1") and trig.run_id not in cycle.marker.reruns:
        return (f"{run.words.run} {trig.run_id} is itself a re-run (attempt {trig.run_attempt}): its "
                "failure stands, no flaky check")
    return None


def _log_files(sources: Sources) -> list[Path]:
    """The logs read for the failure (an input pattern that matched nothing stays a pattern)."""
    return [Path(p) for p in sources.logs if os.path.isfile(p)]


def judged(run: Run, cycle: Cycle, chain: list[ChainLink], collected: Collected, triage: Triage,
           unfolded: ForgeState | None) -> Result:
    """A verdict: no patch. `unfolded` is the marker before this run on the fix branch was folded
    into it (None elsewhere): the run decides nothing about our attempt."""
    verdict = triage.verdict
    assert verdict is not None
    lines = texts.verdict_lines(verdict, triage.quarantine)
    if unfolded is not None:
        cycle.marker = _unfold(cycle.marker, unfolded)
        lines.append(f"This {run.words.run} decides nothing about the attempt on {cycle.fix_branch}: "
                     "it is not counted as failed, and the next run of the same commit decides it.")
    elif run.trig.run_id and verdict.kind != "infrastructure":
        # a rerun of this job changes nothing; an infrastructure failure is judged again (for
        # free) so a re-run of the CI run that fails for a code reason still gets its attempt
        cycle.marker = cycle.marker.with_run(run.trig.run_id, verdict.kind)
    budget = assess(events(chain, cycle.marker), run.inputs.max_attempts)
    run.status(cycle, cycle.pr, texts.VERDICT_HEADLINES[verdict.kind], budget, lines)
    if verdict.kind == "flaky" and not run.inputs.dry_run:
        for number in _failing_change_requests(run, cycle):
            cycle.forge.add_labels(number, [texts.FLAKY_LABEL])
    result = run.result(cycle, verdict.kind, ExitCode.OK, _message(verdict),
                        collected=collected, details=texts.verdict_details(verdict, lines))
    result.verdict = verdict
    return result


def rerun_pending(run: Run, cycle: Cycle, chain: list[ChainLink], collected: Collected, triage: Triage,
                  unfolded: ForgeState | None) -> Result:
    """The re-run has not finished: no patch for now; the marker records it (so the re-run's
    completion concludes the check instead of asking again) and the status comment says so."""
    if unfolded is not None:
        cycle.marker = _unfold(cycle.marker, unfolded)
    budget = assess(events(chain, cycle.marker), run.inputs.max_attempts)
    run.status(cycle, cycle.pr, "re-running the failed jobs: flaky or broken?", budget, [triage.pending])
    return run.result(cycle, "skipped", ExitCode.OK, triage.pending, collected=collected)


def _unfold(folded: ForgeState, unfolded: ForgeState) -> ForgeState:
    """The marker as before the run was folded in, with the triage's own records kept."""
    return replace(unfolded, reruns=folded.reruns, flaky=folded.flaky)


def _message(verdict: Verdict) -> str:
    shown = ", ".join(verdict.tests[:5]) + (", ..." if len(verdict.tests) > 5 else "")
    tests = f" ({shown})" if verdict.tests else ""
    return f"{verdict.reason.rstrip('. ')}{tests}; no patch, no model call"


def _failing_change_requests(run: Run, cycle: Cycle) -> Sequence[int]:
    """The change request whose CI failed: the person's (the trigger's), or on the fix branch
    our own."""
    numbers = [run.trig.pr_number, cycle.pr.number if run.observing and cycle.pr is not None else None]
    return list(dict.fromkeys(n for n in numbers if n is not None))
