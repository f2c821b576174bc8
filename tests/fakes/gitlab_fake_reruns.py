"""What the GitLab fake serves for retrying jobs (issue 16), on top of `FakeRoutes`.

GitLab behaviour reproduced (docs.gitlab.com/api/jobs, lib/api/ci/jobs.rb):
- `POST /projects/:id/jobs/:job_id/retry` answers 201 with the NEW job: a new id, the same name and
  stage; the old job is marked retried and the pipeline runs again. It needs the Developer role
  (403 below it, and for a job token here as for every write); a job still pending or running
  answers 403 "403 Forbidden - Job is not retryable"; an unknown job 404.
- `GET /pipelines/:id/jobs` leaves retried jobs out unless `include_retried=true`.
- The pipeline's status follows its newest jobs: running while one runs or waits, failed when one
  failed (not allowed to), else success.

How a retried job ends is the test's to say (`rerun_ends`, or `rerun_ends_for[pipeline id]`):
"failure" (the default: it fails the same way, same trace and artifacts, so every scenario still
reaches its attempt), "success", or "queued" (pending until `finish_retries`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.gitlab_fake_routes import Call, FakeJob, FakeRoutes, Reply, error, not_found, project_route

RERUN_ENDINGS = ("failure", "success", "queued")
_WAITING = frozenset({"created", "pending", "running", "waiting_for_resource", "preparing"})


class RerunRoutes(FakeRoutes):
    def __init__(self, origin: Path | None) -> None:
        super().__init__(origin)
        self.retried: set[int] = set()  # ids of jobs a retry replaced
        self.rerun_ends = "failure"
        self.rerun_ends_for: dict[int, str] = {}  # pipeline id -> how its retries end

    def rerun_routes(self) -> list[tuple[str, str, Callable[..., Any]]]:
        return [("POST", project_route(r"/jobs/(?P<job>\d+)/retry"), self.r_retry_job)]

    def finish_retries(self, pipeline_id: int, ends: str = "failure") -> None:
        """The pending retries of the pipeline finish as `ends` says ("failure" or "success")."""
        with self._lock:
            for job_id in self._jobs_of(pipeline_id):
                job = self.jobs[job_id]
                if job_id not in self.retried and job["status"] == "pending":
                    self._end(job_id, ends)
            self._settle_pipeline(pipeline_id)

    # -- routes ------------------------------------------------------------------------------

    def r_pipeline_jobs(self, call: Call, pipeline: str) -> Reply | list[dict[str, Any]]:
        listed = super().r_pipeline_jobs(call, pipeline)
        if isinstance(listed, Reply) or call.query.get("include_retried", "").lower() in ("true", "1"):
            return listed
        return [j for j in listed if j["id"] not in self.retried]

    def r_retry_job(self, call: Call, job: str) -> Reply:
        old = self.jobs.get(int(job))
        if old is None:
            return not_found()
        denied = self._may_write(call, 30)
        if denied:
            return denied
        if old["status"] in _WAITING:
            return error(403, "403 Forbidden - Job is not retryable")
        pipeline_id = int(old["pipeline"]["id"])
        ends = self.rerun_ends_for.get(pipeline_id, self.rerun_ends)
        if ends not in RERUN_ENDINGS:
            raise ValueError(f"rerun_ends {ends!r}: one of {RERUN_ENDINGS}")
        new_id = next(self._job_ids)
        self.jobs[new_id] = self.job_json(new_id, self.pipelines[pipeline_id],
                                          FakeJob(old["name"], "pending", stage=old["stage"],
                                                  allow_failure=old["allow_failure"]))
        self.retried.add(int(job))
        self.traces[new_id] = b""
        if ends == "failure" and int(job) in self.archives:
            self.archives[new_id] = self.archives[int(job)]
        if ends != "queued":
            self._end(new_id, ends, self.traces.get(int(job), b""), old.get("failure_reason") or "")
        self._settle_pipeline(pipeline_id)
        return Reply(201, self.jobs[new_id])

    # -- state changes -----------------------------------------------------------------------

    def _end(self, job_id: int, ends: str, failed_trace: bytes = b"", reason: str = "") -> None:
        job = self.jobs[job_id]
        if ends == "failure":  # the same way: the same trace and failure_reason
            job.update(status="failed", failure_reason=reason or "script_failure")
            self.traces[job_id] = failed_trace or self.traces.get(job_id, b"")
        else:
            job.update(status="success", failure_reason=None)
            self.traces[job_id] = f"{job['name']}: all tests passed\n".encode()

    def _settle_pipeline(self, pipeline_id: int) -> None:
        newest = [self.jobs[j] for j in self._jobs_of(pipeline_id) if j not in self.retried]
        statuses = {j["status"] for j in newest}
        if "running" in statuses:
            status = "running"
        elif statuses & _WAITING:
            status = "pending"
        elif any(j["status"] == "failed" and not j["allow_failure"] for j in newest):
            status = "failed"
        else:
            status = "success"
        self.pipelines[pipeline_id]["status"] = status

    def _jobs_of(self, pipeline_id: int) -> list[int]:
        return [j for j, job in self.jobs.items() if job["pipeline"]["id"] == pipeline_id]

    _lock: Any  # the server's, set by GitLabFake
