"""The verdicts before the model in a CI cycle (issue 16; DESIGN.md §3 `triage`): `look` is the
`decide.TRIAGE` observation, `judged` the executor of `decide.JUDGED`.

`look` asks, cheapest first, and stops at the first verdict:
1. infrastructure (free: the logs and job facts already fetched; `triage.infra.classify`).

A verdict means no patch and no model call: the outcome is the verdict's kind (`flaky`,
`pre_existing`, `infrastructure`; exit 0, the job did its job), the status comment says why with
the tests and evidence, the job summary carries the verdict as JSON, and a flaky verdict labels
the change request `ci-agent:flaky`.

Which runs are judged (`decide`): a new attempt on a red run only. `/ci-agent explain` changes no
code and is not judged. A writer's `/ci-agent fix` is not judged either: the person saw the
failure and asked for a patch, so their judgment beats ours (and it is the way past a verdict
they think wrong, e.g. a feed error caused by the repository's own nuget.config).

On the fix branch (a run that decides our pending attempt) a verdict undoes the run's fold into
the marker: a run that failed for the environment or a flaky test says nothing about the patch,
so the attempt is not counted as failed and the run id is not recorded as handled; the next run
of that commit (a re-run of the failed jobs, or CI started again by hand) decides it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_agent.engine import decide as d
from ci_agent.engine import texts
from ci_agent.engine.budget import assess
from ci_agent.engine.collect import Collected
from ci_agent.engine.cycle import Cycle, Result, Run
from ci_agent.engine.marker import ChainLink, ForgeState, events
from ci_agent.engine.sources import Sources
from ci_agent.errors import ExitCode
from ci_agent.triage import Verdict
from ci_agent.triage.infra import classify


@dataclass(frozen=True)
class Triage:
    """What `look` found: a verdict, or nothing (the attempt goes on)."""

    verdict: Verdict | None = None
    quarantine: tuple[str, ...] = ()  # flaky: tests flaky often enough to name for quarantine

    @property
    def kind(self) -> str:
        """`decide.Situation.triage`."""
        return self.verdict.kind if self.verdict is not None else d.NO_TRIAGE_VERDICT


def look(run: Run, cycle: Cycle, collected: Collected, sources: Sources) -> Triage:
    """The verdicts before the model, cheapest first (module docstring)."""
    wanted = cycle.settings.triage
    if wanted.infrastructure:
        found = classify(collected.report, _log_files(sources))
        if found is not None:
            return Triage(found)
    return Triage()


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
        cycle.marker = unfolded
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


def _message(verdict: Verdict) -> str:
    shown = ", ".join(verdict.tests[:5]) + (", ..." if len(verdict.tests) > 5 else "")
    tests = f" ({shown})" if verdict.tests else ""
    return f"{verdict.reason.rstrip('. ')}{tests}; no patch, no model call"


def _failing_change_requests(run: Run, cycle: Cycle) -> Sequence[int]:
    """The change request whose CI failed: the person's (the trigger's), or on the fix branch
    our own."""
    numbers = [run.trig.pr_number, cycle.pr.number if run.observing and cycle.pr is not None else None]
    return list(dict.fromkeys(n for n in numbers if n is not None))
