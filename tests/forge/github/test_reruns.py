"""`GitHubForge.rerun_failed_jobs` and `run_state` (platforms/github/forge_reruns.py) through real
PyGithub against the GitHub fake: the request GitHub gets, a re-run still queued, and the sentences
GitHub's refusals become (issue 16)."""

from __future__ import annotations

import pytest

from ci_agent.errors import ForgeError, status_of
from tests.fakes.breakage import DROP
from tests.fakes.github_fake import GitHubFake, error, forbidden, rate_limited_429
from tests.forge.forges import github_forge as make

RERUN = r"/repos/octo/app/actions/runs/7/rerun-failed-jobs"


def failed_run(fake: GitHubFake) -> int:
    fake.add_run(7, [("test", "failure"), ("lint", "success")])
    return 7


def test_the_rerun_is_one_post_and_its_jobs_are_a_new_attempt(fake: GitHubFake) -> None:
    run = failed_run(fake)
    [first, _lint] = [j["id"] for j in fake.runs[run].jobs]

    rerun = make(fake).rerun_failed_jobs(run)

    assert len(fake.requests_to("POST", RERUN)) == 1
    assert rerun.attempt == 2 and rerun.job_ids == ()  # GitHub names the new jobs later
    newest = [j for j in fake.runs[run].jobs if j["run_attempt"] == 2]
    assert [(j["name"], j["conclusion"]) for j in newest] == [("test", "failure")]
    assert newest[0]["id"] != first


def test_a_queued_rerun_reads_queued_until_it_finishes(fake: GitHubFake) -> None:
    run = failed_run(fake)
    fake.rerun_ends = "queued"
    forge = make(fake)

    forge.rerun_failed_jobs(run)
    waiting = forge.run_state(run)
    fake.finish_rerun(run, "success")
    done = forge.run_state(run)

    assert (waiting.status, waiting.conclusion, waiting.attempt) == ("queued", None, 2)
    assert not waiting.passed
    assert done.passed and done.failed_job_ids == ()


def test_a_rerun_while_the_run_still_runs_says_to_wait(fake: GitHubFake) -> None:
    run = failed_run(fake)
    fake.runs[run].status = "in_progress"

    with pytest.raises(ForgeError) as caught:
        make(fake).rerun_failed_jobs(run)

    message = str(caught.value)
    assert status_of(caught.value) == 403
    assert "still running" in message and "This workflow is already running" in message
    assert "permissions" not in message  # not a missing permission
    assert len(fake.requests_to("POST", RERUN)) == 1


def test_a_run_older_than_30_days_says_so(fake: GitHubFake) -> None:
    run = failed_run(fake)
    fake.inject(error(403, "Unable to retry this workflow run because it was created over a month ago"),
                path=RERUN)

    with pytest.raises(ForgeError, match="older than 30 days"):
        make(fake).rerun_failed_jobs(run)


def test_a_token_without_actions_write_is_told_which_permission(fake: GitHubFake) -> None:
    run = failed_run(fake)
    fake.inject(forbidden("actions=write"), path=RERUN)

    with pytest.raises(ForgeError, match="grant `actions: write`"):
        make(fake).rerun_failed_jobs(run)


def test_an_unknown_run_says_nothing_was_found(fake: GitHubFake) -> None:
    with pytest.raises(ForgeError, match="found nothing to read run 99"):
        make(fake).rerun_failed_jobs(99)


def test_a_lost_answer_is_not_sent_again(fake: GitHubFake) -> None:
    """The re-run may have started: a second request would only be refused as running."""
    run = failed_run(fake)
    fake.inject_transport(DROP, path=RERUN)

    with pytest.raises(ForgeError, match="Could not reach GitHub"):
        make(fake).rerun_failed_jobs(run)
    assert len(fake.requests_to("POST", RERUN)) == 1


def test_a_rate_limited_rerun_is_retried(fake: GitHubFake) -> None:
    """GitHub did nothing when it rate-limited us: asking again is safe."""
    run = failed_run(fake)
    fake.inject(rate_limited_429(), path=RERUN)

    assert make(fake).rerun_failed_jobs(run).attempt == 2
    assert len(fake.requests_to("POST", RERUN)) == 2


def test_every_attempt_stays_listed_with_filter_all(fake: GitHubFake) -> None:
    run = failed_run(fake)
    make(fake).rerun_failed_jobs(run)

    listed = make(fake)._api.repo.get_workflow_run(run).jobs("all")

    assert sorted((j.name, j.conclusion) for j in listed) == [
        ("lint", "success"), ("test", "failure"), ("test", "failure")]
