"""The failed jobs' outcomes reach the cycle (`Sources.jobs`) from each forge as its API says them:
GitHub's job `conclusion`, GitLab's job `failure_reason`. The real forges (PyGithub,
python-gitlab) against the loopback fakes."""

from __future__ import annotations

from pathlib import Path

from ci_agent.engine.sources import fetched_sources
from ci_agent.engine.types import Trigger
from ci_agent.platforms.github.env import action_inputs
from ci_agent.triage import Verdict
from ci_agent.triage.infra import JobOutcome, classify
from ci_agent.triage.infra_scan import scan_log
from tests.fakes.github_fake import GitHubFake
from tests.fakes.gitlab_fake import FakeJob, GitLabFake
from tests.forge.forges import bare_origin, github_forge, gitlab_forge
from tests.triage.test_infra import EMPTY

TRIGGER = Trigger("workflow_run", "main", "0" * 40, "7", "1", "failure")


def test_github_jobs_carry_their_conclusion(tmp_path: Path) -> None:
    with GitHubFake() as github:
        github.add_run(7, [("build", "failure"), ("lint", "success"), ("test", "timed_out")])
        found = fetched_sources(github_forge(github), TRIGGER, action_inputs({}), tmp_path / "fetched")
        assert github.failures == []
    assert found.jobs == (JobOutcome("build", "failure"), JobOutcome("test", "timed_out"))
    assert len(found.logs) == 2


def test_gitlab_jobs_carry_their_failure_reason(tmp_path: Path) -> None:
    origin, sha = bare_origin(tmp_path)
    with GitLabFake(origin) as gitlab:
        pid = gitlab.add_pipeline("main", sha, "failed", [
            FakeJob("build", "failed", b"$ make\n"), FakeJob("lint", "success"),
            FakeJob("test", "failed", b"Running with gitlab-runner\n",
                    failure_reason="runner_system_failure"),
            FakeJob("docs", "failed", allow_failure=True, failure_reason="stuck_or_timeout_failure")])
        forge = gitlab_forge(gitlab)
        jobs = forge.failed_jobs(pid)
        trig = Trigger("pipeline", "main", sha, str(pid), "1", "failed")
        found = fetched_sources(forge, trig, action_inputs({}), tmp_path / "fetched")
        assert gitlab.failures == []
    assert [(j.name, j.failure_reason) for j in jobs] == [
        ("build", "script_failure"), ("test", "runner_system_failure"), ("docs", "stuck_or_timeout_failure")]
    assert found.jobs == (JobOutcome("build", "failed", "script_failure"),
                          JobOutcome("test", "failed", "runner_system_failure"),
                          JobOutcome("docs", "failed (allowed to fail)", "stuck_or_timeout_failure"))
    # `build` failed by its script: the runner's failure of `test` does not explain it
    assert classify_jobs(found.jobs) is None
    assert classify_jobs(found.jobs[1:]) is not None


def test_the_fake_job_logs_hold_no_signal(tmp_path: Path) -> None:
    """The fakes' default job logs (`build failed`) are a plain failure: every existing scenario
    keeps asking the model."""
    with GitHubFake() as github:
        github.add_run(7, [("build", "failure")])
        found = fetched_sources(github_forge(github), TRIGGER, action_inputs({}), tmp_path / "fetched")
    assert [scan_log(Path(log)) for log in found.logs] == [[]]


def classify_jobs(jobs: tuple[JobOutcome, ...]) -> Verdict | None:
    return classify(EMPTY, [], jobs)
