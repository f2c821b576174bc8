"""Retrying a pipeline's failed jobs on GitLab, and reading where the pipeline is (issue 16).

`POST /projects/:id/jobs/:job_id/retry` answers 201 with the NEW job (a new id, status pending)
and marks the old one retried; the pipeline goes back to running. The pipeline's job list leaves
retried jobs out unless `include_retried=true`, so after a retry its failed jobs are the newest
ones. GitLab refuses with 403 "403 Forbidden - Job is not retryable" for a job that cannot be
retried (still running, archived, or of an old pipeline), with 403 for a member below Developer,
and a `CI_JOB_TOKEN` cannot retry jobs at all (401/403). A pipeline has no attempt number: ours is
how often its most-retried job has run (1 before any retry), GitHub's `run_attempt` by analogy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ci_agent.engine.forge import Rerun, RunState, RunStatus
from ci_agent.errors import ForgeError, StatusForgeError, status_of
from ci_agent.platforms.gitlab.forge_calls import GitLabCalls

# GitLab pipeline statuses as (status, conclusion); unknown or waiting ones count as queued.
_DONE = {"success": "success", "failed": "failure", "canceled": "cancelled", "skipped": "skipped"}
_RUNNING = frozenset({"running", "canceling"})


class GitLabReruns:
    """The retry half of `GitLabForge` (a base of it): every request goes through `_api`."""

    _api: GitLabCalls

    def rerun_failed_jobs(self, run_id: int) -> Rerun:
        jobs = self._api.call(f"list the jobs of pipeline {run_id}", "Reporter",
                              lambda: [j.attributes for j in self._api.project.pipelines
                                       .get(run_id, lazy=True).jobs.list(scope=["failed"], get_all=True)])
        if not jobs:
            raise ForgeError(f"GitLab pipeline {run_id} has no failed job to retry.")
        new_ids = tuple(self._retry(run_id, int(job["id"])) for job in jobs)
        return Rerun(run_id, self.run_state(run_id).attempt, new_ids)

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
    """A pipeline's `status` and its jobs (retried ones included) as a `RunState`. A pipeline
    waiting on a manual job (`manual`) is done as far as its failures go: success when none of
    its newest jobs failed."""
    newest: dict[str, Mapping[str, Any]] = {}
    for job in sorted(jobs, key=lambda j: int(j["id"])):
        newest[str(job.get("name"))] = job  # a retry is a newer job of the same name
    failed = tuple(int(j["id"]) for j in newest.values() if j.get("status") == "failed")
    attempt = max(Counter(str(j.get("name")) for j in jobs).values(), default=1)
    if status in _DONE:
        return RunState("completed", _DONE[status], attempt, failed)
    if status == "manual":
        return RunState("completed", "failure" if failed else "success", attempt, failed)
    run_status: RunStatus = "in_progress" if status in _RUNNING else "queued"
    return RunState(run_status, None, attempt, failed)
