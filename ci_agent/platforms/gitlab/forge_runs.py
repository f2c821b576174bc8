"""GitLab pipelines for `GitLabForge`: a pipeline's failed jobs, job traces and artifacts archives
(streamed to disk under the caps of `Limits`, archives extracted by `download`: zip-slip, symlinks
and bombs refused whole), and creating a pipeline on a branch (run ids are pipeline ids)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ci_agent.engine.forge import Artifact, CiStart, Job, JobLog, Limits, RunInfo
from ci_agent.errors import ForgeError, status_of
from ci_agent.platforms.download import download_and_unpack, safe_name, stream_to_file, too_big
from ci_agent.platforms.gitlab import forge_latest
from ci_agent.platforms.gitlab.forge_calls import GitLabCalls
from ci_agent.platforms.gitlab.http import expired_at

_CHUNK = 1024 * 1024


class GitLabRuns:
    """The pipelines half of `GitLabForge` (its base): jobs, traces, artifacts, new pipelines."""

    def __init__(self, api: GitLabCalls, limits: Limits) -> None:
        self._api = api
        self._limits = limits

    def failed_jobs(self, run_id: int) -> list[Job]:
        def fetch() -> list[Job]:
            pipeline = self._api.project.pipelines.get(run_id, lazy=True)
            jobs = pipeline.jobs.list(scope=["failed"], get_all=True)
            return [Job(j.id, j.name, "failed (allowed to fail)" if j.allow_failure else "failed",
                        str(j.attributes.get("failure_reason") or ""))
                    for j in jobs]
        return self._api.call(f"list the jobs of pipeline {run_id}", "Reporter", fetch)

    def download_job_log(self, job_id: int, dest: Path) -> JobLog:
        dest.mkdir(parents=True, exist_ok=True)

        def fetch() -> JobLog:
            job = self._api.project.jobs.get(job_id)
            path = dest / f"{job_id}-{safe_name(job.name, 'job')}.log"
            chunks: Iterator[bytes] = job.trace(streamed=True, iterator=True, chunk_size=_CHUNK)
            truncated = stream_to_file(chunks, path, self._limits.max_log_bytes)
            return JobLog(job_id, job.name, path, truncated)
        return self._api.call(f"download the log of job {job_id}", "Reporter", fetch)

    def download_artifacts(self, run_id: int, dest: Path,
                           jobs: Sequence[int] | None = None) -> list[Artifact]:
        """The artifacts archives of the pipeline's jobs (of `jobs` only, when given: a passing
        job's files, or a report job's copy of them, are not the failure)."""
        listed = self._api.call(f"list the jobs of pipeline {run_id}", "Reporter",
                          lambda: [j.attributes for j in self._api.project.pipelines.get(run_id, lazy=True)
                                   .jobs.list(get_all=True)])
        wanted = None if jobs is None else set(jobs)
        results: list[Artifact] = []
        for job in listed:
            name, job_id = str(job["name"]), int(job["id"])
            if wanted is not None and job_id not in wanted:
                continue
            archive = next((a for a in job.get("artifacts") or [] if a.get("file_type") == "archive"), None)
            if archive is None:
                expired = expired_at(job.get("artifacts_expire_at"))
                if expired:
                    results.append(Artifact(name, None, f"the artifacts expired at {expired}"))
                continue
            if int(archive.get("size") or 0) > self._limits.max_archive_bytes:
                results.append(Artifact(name, None, too_big(self._limits)))
                continue
            results.append(self._download_archive(name, job_id,
                                             dest / f"{safe_name(name, 'job')}-{job_id}"))
        return results

    def _download_archive(self, name: str, job_id: int, target: Path) -> Artifact:
        def fetch(zip_path: Path) -> bool:
            def once() -> bool:
                job = self._api.project.jobs.get(job_id, lazy=True)
                chunks: Iterator[bytes] = job.artifacts(streamed=True, iterator=True, chunk_size=_CHUNK)
                return stream_to_file(chunks, zip_path, self._limits.max_archive_bytes)
            return self._api.call(f"download the artifacts of job {job_id}", "Reporter", once)
        try:
            return download_and_unpack(name, fetch, target, self._limits)
        except ForgeError as error:
            if status_of(error) != 404:
                raise
            return Artifact(name, None, "the artifacts archive is gone (expired or erased)")

    def pipeline_for(self, ref: str, sha: str) -> int | None:
        """The id of a pipeline already running or done for commit `sha` on `ref`, if any."""
        pipelines = self._api.project.pipelines
        found = self._api.call(f"list the pipelines of {ref!r}", "Reporter",
                               lambda: pipelines.list(ref=ref, sha=sha, order_by="id", sort="desc",
                                                      per_page=1, get_all=False))
        return int(found[0].id) if found else None

    def start_pipeline(self, ref: str, variables: Mapping[str, str]) -> int:
        data = {"ref": ref, "variables": [{"key": k, "value": v, "variable_type": "env_var"}
                                          for k, v in variables.items()]}
        pipeline = self._api.call("create pipelines", "Developer",
                                  lambda: self._api.project.pipelines.create(data), idempotent=False)
        return int(pipeline.id)

    def latest_completed_run(self, branch: str, workflow: str = "") -> RunInfo | None:
        """One pipeline definition per project: `workflow` does not apply (issue 16)."""
        return forge_latest.latest_completed_run(self._api, branch)

    def start_ci(self, branch: str, commit: str, workflow: str = "") -> CiStart:
        """A pipeline for `commit` on `branch`: the one already there, else a new one. A project
        has one pipeline definition: `workflow` does not apply."""
        existing = self.pipeline_for(branch, commit)
        if existing is not None:
            return CiStart("already_running", existing)
        return CiStart("started", self.start_pipeline(branch, {}))
