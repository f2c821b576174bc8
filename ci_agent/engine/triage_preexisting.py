"""Is this failure already red on the default branch? The cycle's half of issue 16's `pre_existing`
verdict (the comparison itself is `triage.preexisting`, pure).

`judge_pre_existing` asks the forge for the default branch's latest completed run (of the failing
run's workflow, when known). Green, or no run: nothing to say. Red: its failed jobs' logs and
artifacts are fetched through the same `Platform.sources` path the cycle reads its own failure
with, distilled by the same `collect`, and compared failure by failure. Nothing is kept on the
runner between runs: every cycle asks again (the default branch moves).

It never blocks a fix: a forge error or an unreadable run is a note in the job summary and the
log, and the attempt goes on as without the check.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ci_agent.engine.collect import Collected, collect
from ci_agent.engine.cycle import Cycle, Run
from ci_agent.engine.forge import RunInfo
from ci_agent.engine.types import Trigger
from ci_agent.errors import CiAgentError
from ci_agent.triage import Verdict
from ci_agent.triage.preexisting import PartialOverlap, compare

DOWNLOADS = "default-branch-run"  # under the cycle's temp folder, beside the failure's own files


def judge_pre_existing(run: Run, cycle: Cycle, collected: Collected, tmp: Path
                       ) -> Verdict | PartialOverlap | None:
    """A `pre_existing` verdict when every failure of `collected` is also red on the default
    branch's latest completed run; a `PartialOverlap` when some are; None when none are, when the
    check does not apply (disabled, the failing branch is the default one, a fix branch's or an
    attempt's run) or when the default branch's run could not be read (a note says why)."""
    trig = run.trig
    if not cycle.settings.triage.pre_existing or trig.on_fix_branch or trig.attempt_commit:
        return None
    try:
        default = cycle.forge.default_branch()
        if trig.branch == default:
            return None
        latest = cycle.forge.latest_completed_run(default, trig.workflow)
        if latest is None or not latest.red:
            return None
        theirs = _their_failure(run, cycle, default, latest, tmp / DOWNLOADS)
    except (CiAgentError, OSError) as error:
        _note(run, f"whether this failure is also red on the default branch was not checked: {error}")
        return None
    if theirs is None:
        return None
    where = f"{default} (its latest {run.words.run}, {latest.url or latest.run_id})"
    return compare(collected.report, theirs.report, where=where)


def their_trigger(trig: Trigger, branch: str, latest: RunInfo) -> Trigger:
    """The default branch's run as a trigger `Platform.sources` fetches: an inline step reads its
    own workspace, so the other run is read as a `workflow_run` (from the forge) instead."""
    return replace(trig, kind="workflow_run" if trig.kind == "inline" else trig.kind, branch=branch,
                   sha=latest.sha, run_id=str(latest.run_id), run_attempt="1",
                   conclusion=latest.conclusion, pr_number=None, attempt_commit=False)


def _their_failure(run: Run, cycle: Cycle, branch: str, latest: RunInfo, dest: Path) -> Collected | None:
    sources = run.platform.sources(cycle.forge, their_trigger(run.trig, branch, latest), run.inputs, dest)
    if not sources.logs and not sources.result_globs:
        _note(run, f"{branch}'s latest {run.words.run} ({latest.run_id}) failed, but none of its logs "
                   "could be read; this failure was not compared with it")
        return None
    return collect(cycle.repo, logs=sources.logs, result_globs=sources.result_globs, root=cycle.repo,
                   labels=sources.labels, quiet=True)


def _note(run: Run, text: str) -> None:
    run.notes = (*run.notes, text)
    run.emit("pre_existing", note=text)
