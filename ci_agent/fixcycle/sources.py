"""Where the failure is read from: files on the runner (inline mode) or the failed jobs' logs and
the run's artifacts fetched through the forge (workflow_run mode)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ci_agent.cienv import ActionInputs, Trigger
from ci_agent.forge.base import Forge


@dataclass(frozen=True)
class Sources:
    logs: tuple[str, ...]  # absolute paths or globs
    result_globs: tuple[str, ...]  # absolute globs
    notes: tuple[str, ...] = ()  # what could not be fetched, for the summary


def _absolute(base: Path, pattern: str) -> str:
    return pattern if os.path.isabs(pattern) else str(base / pattern)


def inline_sources(inputs: ActionInputs, workspace: Path) -> Sources:
    return Sources(tuple(_absolute(workspace, p) for p in inputs.build_logs),
                   tuple(_absolute(workspace, g) for g in inputs.test_results))


def fetched_sources(forge: Forge, trig: Trigger, inputs: ActionInputs, dest: Path,
                    artifacts: bool = True, own_prefix: str = "") -> Sources:
    """Download the failed jobs' logs and (unless `artifacts` is False) every artifact of the run
    under `dest`; an artifact that expired, is too big or is unsafe is left out and named in
    `notes`. Jobs named `<own_prefix>-...` are ci-agent's own (a failed distill job in the same
    stage) and never read as the failure."""
    try:
        run_id = int(trig.run_id)
    except ValueError:
        return Sources((), (), (f"the run id {trig.run_id!r} is not a number; nothing was fetched",))
    notes: list[str] = []
    logs = [str(forge.download_job_log(job.id, dest / "logs").text_path)
            for job in forge.failed_jobs(run_id)
            if not (own_prefix and job.name.startswith(own_prefix + "-"))]
    if not logs:
        notes.append(f"run {run_id} lists no failed job (cancelled, or re-run since?)")
    if not artifacts:
        return Sources(tuple(logs), (), tuple(notes))
    found = forge.download_artifacts(run_id, dest / "artifacts")
    globs: list[str] = []
    for artifact in found:
        if artifact.path is None:
            notes.append(f"artifact {artifact.name!r} was not used: {artifact.problem}")
            continue
        globs.extend(str(artifact.path / pattern.lstrip("/")) for pattern in inputs.test_results)
    if not found:
        notes.append(f"run {run_id} has no artifacts; test results were read from the logs only "
                     "(keep TRX/JUnit files as artifacts of the failing job to use them)")
    return Sources(tuple(logs), tuple(globs), tuple(notes))
