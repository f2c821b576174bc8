"""Retrying a pipeline's failed jobs on GitLab, and reading where the pipeline is (issue 16).

`POST /projects/:id/jobs/:job_id/retry` answers 201 with the NEW job (a new id, status pending)
and marks the old one retried; the pipeline goes back to running. The pipeline's job list leaves
retried jobs out unless `include_retried=true`, so after a retry its failed jobs are the newest
ones. GitLab refuses with 403 "403 Forbidden - Job is not retryable" for a job that cannot be
retried (still running, archived, or of an old pipeline), with 403 for a member below Developer,
and a `CI_JOB_TOKEN` cannot retry jobs at all (401/403). A pipeline has no attempt number: ours is
how often its most-retried job has run (1 before any retry), GitHub's `run_attempt` by analogy.
Our fix job runs in the failed pipeline itself (`.post`), so the retried jobs, not the pipeline,
say when a retry is done (`pipeline_state`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci_agent.engine.forge import Rerun, RunState, RunStatus
from ci_agent.errors import ForgeError, StatusForgeError, status_of
from ci_agent.platforms.gitlab.forge_calls import GitLabCalls

# The conclusion (GitHub's word) of each finished GitLab status; waiting or unknown ones are queued.
_DONE = {"success": "success", "failed": "failure", "canceled": "cancelled", "skipped": "skipped"}
_RUNNING = frozenset({"running", "canceling"})


class GitLabReruns:
    """The retry half of `GitLabForge` (a base of it): every request goes through `_api`."""

    _api: GitLabCalls

    def rerun_failed_jobs(self, run_id: int) -> Rerun:
        """Retries the newest run of each failed job. Everything is read BEFORE the first retry:
        once GitLab has retried a job, no failure of ours may say nothing started. A refusal
        part-way still raises: a re-run of only some failed jobs could call a failure flaky."""
        jobs = self._api.call(f"list the jobs of pipeline {run_id}", "Reporter",
                              lambda: [j.attributes for j in self._api.project.pipelines
                                       .get(run_id, lazy=True).jobs.list(include_retried=True, get_all=True)])
        runs = runs_by_name(jobs)
        failed = [every[-1] for every in runs.values() if every[-1].get("status") == "failed"]
        if not failed:
            raise ForgeError(f"GitLab pipeline {run_id} has no failed job to retry.")
        attempt = max(len(runs[str(job.get("name"))]) + 1 for job in failed)
        return Rerun(run_id, attempt, tuple(self._retry(run_id, int(job["id"])) for job in failed))

    def _retry(self, run_id: int, job_id: int) -> int:
        what = f"retry job {job_id} of pipeline {run_id}"
        try:
            # Not retried after a lost answer: the job may have been retried already.
            answer = self._api.call(what, "Developer",
                                    lambda: self._api.project.jobs.get(job_id, lazy=True).retry(),
                                    idempotent=False)
        except ForgeError as error:
            if status_of(error) == 403 and "not retryable" in str(error).lower():
                raise StatusForgeError(403, f"GitLab will not retry job {job_id} of pipeline {run_id}: "
                                            "it says the job is not retryable (still running, "
                                            "archived, or its pipeline too old).") from error
            raise
        return int(answer["id"])

    def run_state(self, run_id: int) -> RunState:
        def fetch() -> tuple[str, list[dict[str, Any]]]:
            pipeline = self._api.project.pipelines.get(run_id)
            jobs = pipeline.jobs.list(include_retried=True, get_all=True)
            return str(pipeline.status or ""), [j.attributes for j in jobs]
        status, jobs = self._api.call(f"read pipeline {run_id}", "Reporter", fetch)
        return pipeline_state(status, jobs)


def pipeline_state(status: str, jobs: Sequence[Mapping[str, Any]]) -> RunState:
    """A pipeline's `status` and its jobs (retried ones included) as a `RunState`.

    Once jobs were retried, the newest runs of THOSE jobs decide: our own fix job runs in the same
    pipeline (stage `.post`), so the pipeline reads "running" for as long as we look at it, and a
    retried job that passed makes the pipeline pass. Before any retry the pipeline's status does;
    one waiting on a manual job (`manual`) passed when none of its newest jobs failed."""
    runs = runs_by_name(jobs)
    newest = [every[-1] for every in runs.values()]
    failed = tuple(int(j["id"]) for j in newest if j.get("status") == "failed")
    attempt = max((len(every) for every in runs.values()), default=1)
    retried = [every[-1] for every in runs.values() if len(every) > 1]
    if retried:
        return _jobs_state(retried, attempt, failed)
    if status in _DONE:
        return RunState("completed", _DONE[status], attempt, failed)
    if status == "manual":
        return RunState("completed", "failure" if failed else "success", attempt, failed)
    run_status: RunStatus = "in_progress" if status in _RUNNING else "queued"
    return RunState(run_status, None, attempt, failed)


def runs_by_name(jobs: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Each job name's runs, oldest first: a retry is a newer job of the same name."""
    runs: dict[str, list[Mapping[str, Any]]] = {}
    for job in sorted(jobs, key=lambda j: int(j["id"])):
        runs.setdefault(str(job.get("name")), []).append(job)
    return runs


def _jobs_state(retried: Sequence[Mapping[str, Any]], attempt: int, failed: tuple[int, ...]) -> RunState:
    statuses = {str(j.get("status")) for j in retried}
    if statuses & _RUNNING:
        return RunState("in_progress", None, attempt, failed)
    if statuses - set(_DONE):  # created, pending, waiting_for_resource, preparing, manual ...
        return RunState("queued", None, attempt, failed)
    if any(j.get("status") == "failed" and j.get("allow_failure") is not True for j in retried):
        return RunState("completed", "failure", attempt, failed)
    if "canceled" in statuses:
        return RunState("completed", "cancelled", attempt, failed)
    return RunState("completed", "success", attempt, failed)
