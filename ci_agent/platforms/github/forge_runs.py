"""GitHub Actions for `GitHubForge`: a run's failed jobs, job logs and artifacts (streamed to disk
under the caps of `Limits`, archives extracted by `download`), the newest failed run of a commit,
and starting a workflow on a branch (`workflow_dispatch`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ci_agent.engine.forge import Artifact, CiStart, Job, JobLog, Limits, RunInfo
from ci_agent.errors import ForgeError, status_of
from ci_agent.platforms.download import download_and_unpack, safe_name, stream_to_file
from ci_agent.platforms.github import forge_latest
from ci_agent.platforms.github.forge_calls import GitHubCalls, location

FAILED_CONCLUSIONS = frozenset({"failure", "timed_out", "startup_failure"})


class GitHubRuns:
    """The Actions half of `GitHubForge` (its base): runs, logs, artifacts, dispatches."""

    def __init__(self, api: GitHubCalls, limits: Limits) -> None:
        self._api = api
        self._limits = limits

    def failed_jobs(self, run_id: int) -> list[Job]:
        def fetch() -> list[Job]:
            run = self._api.repo.get_workflow_run(run_id)
            return [Job(j.id, j.name, j.conclusion or "") for j in run.jobs("latest")
                    if j.conclusion in FAILED_CONCLUSIONS]
        return self._api.call(f"list the jobs of run {run_id}", "actions: read", fetch)

    def download_job_log(self, job_id: int, dest: Path) -> JobLog:
        dest.mkdir(parents=True, exist_ok=True)

        def fetch() -> JobLog:
            job = self._api.repo.get_workflow_job(job_id)
            path = dest / f"{job_id}-{safe_name(job.name, 'job')}.log"
            with self._api.storage(location(job.logs_url)) as chunks:
                truncated = stream_to_file(chunks, path, self._limits.max_log_bytes)
            return JobLog(job_id, job.name, path, truncated)
        return self._api.call(f"download the log of job {job_id}", "actions: read", fetch)

    def download_artifacts(self, run_id: int, dest: Path,
                           jobs: Sequence[int] | None = None) -> list[Artifact]:
        # An Actions artifact belongs to the run, not to a job: `jobs` cannot narrow it.
        listed = self._api.call(
            f"list the artifacts of run {run_id}", "actions: read",
            lambda: [(a.name, a.archive_download_url, a.expired)
                     for a in self._api.repo.get_workflow_run(run_id).get_artifacts()])
        results: list[Artifact] = []
        taken: set[str] = set()
        for name, url, expired in listed:
            folder = safe_name(name, "artifact")
            while folder in taken:
                folder += "_"
            taken.add(folder)
            if expired:
                results.append(Artifact(name, None, "the artifact has expired"))
                continue
            results.append(self._download_artifact(name, url, dest / folder))
        return results

    def _download_artifact(self, name: str, url: str, target: Path) -> Artifact:
        def redirect() -> str:
            return str(self._api.gh.requester.requestBlobAndCheck("GET", url)[0]["location"])

        def fetch(zip_path: Path) -> bool:
            def once() -> bool:
                with self._api.storage(location(redirect)) as chunks:
                    return stream_to_file(chunks, zip_path, self._limits.max_archive_bytes)
            return self._api.call(f"download artifact {name!r}", "actions: read", once)
        return download_and_unpack(name, fetch, target, self._limits, "zip")

    def latest_failed_run(self, branch: str, sha: str) -> int | None:
        """`status=failure` filters on the conclusion; GitHub lists the newest first, and we still
        pick by creation time so a proxy's order cannot make us fix an older run."""
        url = f"{self._api.repo.url}/actions/runs"
        params = {"branch": branch, "head_sha": sha, "status": "failure", "per_page": "20",
                  "exclude_pull_requests": "true"}
        data = self._api.call(f"list the failed runs of {branch!r} at {sha[:12]}", "actions: read",
                              lambda: self._api.get_json(url, params))
        runs = [r for r in (data.get("workflow_runs") if isinstance(data, dict) else None) or []
                if isinstance(r, dict) and isinstance(r.get("id"), int)
                and r.get("head_sha") == sha and r.get("conclusion") == "failure"]
        if not runs:
            return None
        newest = max(runs, key=lambda r: (str(r.get("created_at") or ""), int(r["id"])))
        return int(newest["id"])

    def latest_completed_run(self, branch: str, workflow: str = "") -> RunInfo | None:
        return forge_latest.latest_completed_run(self._api, branch, workflow)  # issue 16

    def start_ci(self, branch: str, commit: str, workflow: str = "") -> CiStart:
        """`workflow_dispatch` of `workflow` on `branch` (GitHub runs the branch's tip, `commit`).
        Without a workflow named, or one without a `workflow_dispatch` trigger, CI cannot start."""
        if not workflow:
            return CiStart("not_startable")
        try:
            workflows = self._api.repo.get_workflow
            self._api.call(f"start workflow {workflow!r} on {branch!r}", "actions: write",
                           lambda: workflows(workflow).create_dispatch(branch, {}, throw=True),
                           idempotent=False)
        except ForgeError as error:
            if status_of(error) == 422 and "workflow_dispatch" in str(error):
                return CiStart("not_startable")
            raise
        return CiStart("started")
