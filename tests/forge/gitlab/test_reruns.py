"""`GitLabForge.rerun_failed_jobs` and `run_state` (platforms/gitlab/forge_reruns.py) through real
python-gitlab against the GitLab fake: one retry per failed job, the new jobs' ids, a retry still
pending, and the sentences GitLab's refusals become (issue 16)."""

from __future__ import annotations

import pytest

from ci_agent.engine.forge import RunState
from ci_agent.errors import ForgeError
from ci_agent.platforms.gitlab.forge_reruns import pipeline_state
from tests.fakes.breakage import DROP
from tests.fakes.gitlab_fake import FakeJob, Fault, GitLabFake, error
from tests.forge.forges import GITLAB_JOB_TOKEN
from tests.forge.forges import gitlab_forge as make

RETRY = r"/projects/.+/jobs/\d+/retry"


def failed_pipeline(fake: GitLabFake) -> int:
    return fake.add_pipeline("main", "a" * 40, "failed", [
        FakeJob("unit", "failed", b"unit: FAILED test_a\n"), FakeJob("e2e", "failed", b"e2e: FAILED\n"),
        FakeJob("lint", "success", b"ok\n")])


def test_each_failed_job_is_retried_once_and_the_new_jobs_named(fake: GitLabFake) -> None:
    run = failed_pipeline(fake)
    unit, e2e, _lint = fake.job_ids(run)

    rerun = make(fake).rerun_failed_jobs(run)

    assert sorted(r.path.rsplit("/", 2)[-2] for r in fake.requests_to("POST", RETRY)) == sorted(
        [str(unit), str(e2e)])
    assert rerun.attempt == 2 and len(rerun.job_ids) == 2
    assert not {unit, e2e} & set(rerun.job_ids)
    assert {fake.jobs[j]["name"] for j in rerun.job_ids} == {"unit", "e2e"}


def test_a_pending_retry_reads_queued_until_it_finishes(fake: GitLabFake) -> None:
    run = failed_pipeline(fake)
    fake.rerun_ends = "queued"
    forge = make(fake)

    forge.rerun_failed_jobs(run)
    waiting = forge.run_state(run)
    fake.finish_retries(run, "success")
    done = forge.run_state(run)

    assert (waiting.status, waiting.conclusion, waiting.attempt) == ("queued", None, 2)
    assert done.passed and done.failed_job_ids == ()


def test_a_job_token_is_told_to_use_the_project_token(fake: GitLabFake) -> None:
    run = failed_pipeline(fake)

    with pytest.raises(ForgeError) as caught:
        make(fake, GITLAB_JOB_TOKEN).rerun_failed_jobs(run)

    message = str(caught.value)
    assert message.startswith("CI_JOB_TOKEN cannot retry job")
    assert "CI_AGENT_GITLAB_TOKEN" in message and "Developer" in message
    assert fake.requests_to("GET", r"/projects/.+/pipelines/\d+/jobs")  # reading was allowed


def test_a_reporter_is_told_the_role_it_needs(fake: GitLabFake) -> None:
    run = failed_pipeline(fake)
    fake.add_user("reporter", 20)
    fake.add_token("glpat-reporter", "reporter")

    with pytest.raises(ForgeError, match="at least the Developer role"):
        make(fake, "glpat-reporter").rerun_failed_jobs(run)


def test_a_job_that_is_not_retryable_says_so(fake: GitLabFake) -> None:
    run = failed_pipeline(fake)
    fake.add_fault(Fault(error(403, "403 Forbidden - Job is not retryable"), path=RETRY, method="POST"))

    with pytest.raises(ForgeError, match="says the job is not retryable") as caught:
        make(fake).rerun_failed_jobs(run)
    assert "role" not in str(caught.value)  # not a missing permission


def test_a_pipeline_without_failed_jobs_has_nothing_to_retry(fake: GitLabFake) -> None:
    run = fake.add_pipeline("main", "a" * 40, "success", [FakeJob("unit", "success")])

    with pytest.raises(ForgeError, match="no failed job to retry"):
        make(fake).rerun_failed_jobs(run)
    assert fake.requests_to("POST", RETRY) == []


def test_a_lost_answer_is_not_sent_again(fake: GitLabFake) -> None:
    run = failed_pipeline(fake)
    fake.add_transport_fault(DROP, path=RETRY, method="POST")

    with pytest.raises(ForgeError, match="Could not reach GitLab"):
        make(fake).rerun_failed_jobs(run)
    assert len(fake.requests_to("POST", RETRY)) == 1


def test_retried_jobs_leave_the_pipeline_job_list(fake: GitLabFake) -> None:
    run = failed_pipeline(fake)
    rerun = make(fake).rerun_failed_jobs(run)

    assert sorted(j.id for j in make(fake).failed_jobs(run)) == sorted(rerun.job_ids)


# -- the pipeline's state, from its status and jobs ------------------------------------------

def job(job_id: int, name: str, status: str) -> dict[str, object]:
    return {"id": job_id, "name": name, "status": status}


@pytest.mark.parametrize(("status", "expected"), [
    ("success", RunState("completed", "success", 1)),
    ("failed", RunState("completed", "failure", 1, (1,))),
    ("canceled", RunState("completed", "cancelled", 1, (1,))),
    ("running", RunState("in_progress", None, 1, (1,))),
    ("pending", RunState("queued", None, 1, (1,))),
    ("waiting_for_resource", RunState("queued", None, 1, (1,))),
    ("created", RunState("queued", None, 1, (1,))),
])
def test_pipeline_statuses(status: str, expected: RunState) -> None:
    jobs = [] if status == "success" else [job(1, "unit", "failed")]
    assert pipeline_state(status, jobs) == expected


def test_the_newest_job_of_a_name_counts_and_retries_are_attempts() -> None:
    jobs = [job(3, "unit", "success"), job(1, "unit", "failed"), job(2, "lint", "failed"),
            job(5, "unit", "failed"), job(4, "lint", "success")]

    assert pipeline_state("failed", jobs) == RunState("completed", "failure", 3, (5,))


def test_once_retried_the_retried_jobs_decide_not_our_own_running_job() -> None:
    """The fix job runs in `.post` of the same pipeline: the pipeline reads running meanwhile."""
    ours = job(9, "ci-agent-fix", "running")
    first = [job(1, "unit", "failed"), job(2, "lint", "success"), ours]

    assert pipeline_state("running", [*first, job(10, "unit", "success")]) == RunState(
        "completed", "success", 2)
    assert pipeline_state("running", [*first, job(10, "unit", "failed")]) == RunState(
        "completed", "failure", 2, (10,))
    assert pipeline_state("running", [*first, job(10, "unit", "pending")]).status == "queued"
    assert pipeline_state("running", [*first, job(10, "unit", "running")]).status == "in_progress"


def test_a_retried_job_allowed_to_fail_does_not_fail_the_retry() -> None:
    jobs = [job(1, "flaky-lint", "failed"), {**job(2, "flaky-lint", "failed"), "allow_failure": True}]

    assert pipeline_state("success", jobs).passed


def test_a_pipeline_waiting_on_a_manual_job_passed_when_nothing_failed() -> None:
    assert pipeline_state("manual", [job(1, "unit", "success")]).passed
    assert not pipeline_state("manual", [job(1, "unit", "failed")]).passed


def test_a_refusal_part_way_is_an_error_even_after_one_retry_started(fake: GitLabFake) -> None:
    """Only some failed jobs re-run could pass and call a real failure flaky."""
    run = failed_pipeline(fake)
    fake.add_fault(Fault(error(403, "403 Forbidden - Job is not retryable"), path=RETRY, method="POST",
                         skip=1))

    with pytest.raises(ForgeError, match="not retryable"):
        make(fake).rerun_failed_jobs(run)
    assert len(fake.retried) == 1
