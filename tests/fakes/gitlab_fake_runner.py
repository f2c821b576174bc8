"""The GitLab fake for pipelines that a local runner really runs (gitlab-ci-local, tests/gitlab/).

On GitLab a job's trace and artifacts archive are what its runner uploaded when the job ended; a
later job of the same pipeline (our `.post` fix job) reads them through the API. Here the runner
is `gitlab-ci-local`, which writes a job's output to `.gitlab-ci-local/output/<job>.log` and its
artifacts to `.gitlab-ci-local/artifacts/<job>/`: `follow(job_id, ...)` serves those paths as they
are at the moment of each request (trace, archive, and the job's `artifacts` listing), so the
fix job sees exactly what the test job left, with no step in between.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.archives import zip_folder
from tests.fakes.gitlab_fake import GitLabFake
from tests.fakes.gitlab_fake_routes import Call, FakeJob, Reply


class RunnerBackedGitLabFake(GitLabFake):
    def __init__(self, origin: Path | None = None) -> None:
        super().__init__(origin)
        self.followed: dict[int, tuple[Path, Path]] = {}

    def follow(self, job_id: int, trace: Path, artifacts: Path) -> None:
        self.followed[job_id] = (trace, artifacts)

    def _settle(self) -> None:
        """Called with the request lock held (every handler is)."""
        for job_id, (trace_path, folder) in self.followed.items():
            old = self.jobs[job_id]
            trace = trace_path.read_bytes() if trace_path.is_file() else b""
            archive = zip_folder(folder) if folder.is_dir() and any(folder.rglob("*")) else None
            job = FakeJob(old["name"], old["status"], trace, archive, stage=old["stage"],
                          allow_failure=old["allow_failure"])
            self.jobs[job_id] = self.job_json(job_id, self.pipelines[old["pipeline"]["id"]], job)
            self.traces[job_id] = trace
            if archive is not None:
                self.archives[job_id] = archive

    def r_pipeline_jobs(self, call: Call, pipeline: str) -> Reply | list[dict[str, Any]]:
        self._settle()
        return super().r_pipeline_jobs(call, pipeline)

    def r_job(self, call: Call, job: str) -> Reply:
        self._settle()
        return super().r_job(call, job)

    def r_trace(self, call: Call, job: str) -> Reply:
        self._settle()
        return super().r_trace(call, job)

    def r_artifacts(self, call: Call, job: str) -> Reply:
        self._settle()
        return super().r_artifacts(call, job)
