"""The flaky verdict in the CI cycle (issue 16), the same on GitHub and on GitLab: before any model
call the forge re-runs the failed jobs once (GitHub's "re-run failed jobs", GitLab's job retry).
A failure that passes then gets no patch, a label, a record per test in the marker, and a test
flaky again and again is named a quarantine candidate; a failure that fails again is patched as
before; a re-run still running ends the job and its completion decides. Each test runs once per
platform (the `platform` fixture)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from ci_agent.engine.forge import parse_marker
from tests.platform_scenarios.base import FIX_BRANCH, push_file
from tests.platform_scenarios.platforms import Platform, Run, assert_outputs, the_status_note
from tests.platform_scenarios.steps import answer, model_calls

FEATURE = "feature/stars"
FEATURE_FIX = "ci-agent/fix/feature/stars"
# the sample's failing tests, as the job log names them
FAILING_TEST = re.compile(r"test_ratings\.test_no_ratings_yet")


def reruns_end(platform: Platform, ends: str) -> None:
    """How the forge's re-run of failed jobs ends from now on: "failure", "success" or "queued"."""
    fake = platform.world.github if platform.name == "github" else platform.world.gitlab
    fake.rerun_ends = ends


def reruns_asked(platform: Platform) -> int:
    if platform.name == "github":
        return len(platform.world.github.requests_to("POST", r".*/actions/runs/\d+/rerun-failed-jobs"))
    return len(platform.world.gitlab.requests_to("POST", r".*/jobs/\d+/retry"))


def person_request(platform: Platform) -> int:
    """A person's change request from FEATURE (main's broken code, and one change of theirs)."""
    push_file(platform.repo, FEATURE, "NOTES.md", "stars\n", new_branch=True)
    return platform.open_person_request(FEATURE)


def red_request_run(platform: Platform, number: int) -> Run:
    red = platform.request_ci(FEATURE, number)
    assert platform.failed(red)
    return red


def marker_of(platform: Platform, number: int) -> dict[str, object]:
    found = parse_marker(the_status_note(platform, number)["body"])
    assert found is not None
    return found


def test_a_failure_that_passes_when_re_run_is_flaky_not_patched(platform: Platform) -> None:
    number = person_request(platform)
    reruns_end(platform, "success")

    red = red_request_run(platform, number)

    job = platform.job(red)

    assert job.exit_code == 0, str(job)
    assert_outputs(job, "flaky", attempt="")
    assert model_calls(platform) == 0, "no model call"
    assert reruns_asked(platform) == 1
    assert platform.world.origin_tip(FEATURE_FIX) is None, "nothing pushed"
    (person,) = platform.requests_from(FEATURE)
    assert "ci-agent:flaky" in person.labels
    body = the_status_note(platform, number)["body"]
    assert "### ci-agent: flaky: the failed tests passed when re-run; no patch" in body, body
    assert FAILING_TEST.search(body), "the tests named"
    assert "Quarantine candidates" not in body, "flaky once is not yet a pattern"
    flaky = marker_of(platform, number)["flaky"]
    assert isinstance(flaky, dict) and any(FAILING_TEST.search(name) for name in flaky), flaky
    if platform.name == "github":
        verdict = json.loads(job.outputs["verdict"])
        assert verdict["kind"] == "flaky" and any(FAILING_TEST.search(t) for t in verdict["tests"])
    else:
        assert job.outputs["verdict"] == "flaky"
    assert "### Verdict: flaky" in job.summary

    # a rerun of this job asks for no second re-run: the run was handled
    again = platform.rerun_job(red)
    assert_outputs(again, "skipped")
    assert reruns_asked(platform) == 1 and model_calls(platform) == 0


def test_a_test_flaky_twice_is_a_quarantine_candidate(platform: Platform) -> None:
    number = person_request(platform)
    reruns_end(platform, "success")
    assert_outputs(platform.job(red_request_run(platform, number)), "flaky")

    second = platform.job(red_request_run(platform, number))  # another run, the same test flakes

    assert_outputs(second, "flaky")
    assert reruns_asked(platform) == 2
    assert model_calls(platform) == 0
    body = the_status_note(platform, number)["body"]
    quarantine = re.search(r"Quarantine candidates[^\n]*", body)
    assert quarantine is not None and FAILING_TEST.search(quarantine.group(0)), body


def test_a_failure_that_fails_again_is_patched_as_before(platform: Platform) -> None:
    # the fakes' default: the re-run fails the same way
    answer(platform, "broken", "fix")

    job = platform.job(platform.ci("main"))

    assert_outputs(job, "committed", attempt="1")
    assert reruns_asked(platform) == 1, "re-run once before the model"
    assert model_calls(platform) == 1


def test_a_re_run_still_running_ends_the_job_and_its_completion_decides(platform: Platform) -> None:
    number = person_request(platform)
    reruns_end(platform, "queued")
    red = red_request_run(platform, number)

    waiting = platform.job(red)

    assert_outputs(waiting, "skipped", attempt="")
    assert "once to tell a flaky test from a broken one; the re-run's result decides" in waiting.summary
    assert model_calls(platform) == 0
    reruns = marker_of(platform, number)["reruns"]
    assert isinstance(reruns, dict) and [r["state"] for r in reruns.values()] == ["pending"], reruns

    # the re-run fails again; its completion (GitHub: the run's next attempt; GitLab: the
    # pipeline's ci-agent job again) concludes the check: real, so the attempt is made
    if platform.name == "github":
        platform.world.github.finish_rerun(red.id, "failure")
    else:
        platform.world.gitlab.finish_retries(red.id, "failure")
    answer(platform, "broken", "fix")
    done = platform.retry(red)

    assert_outputs(done, "committed", attempt="1")
    assert reruns_asked(platform) == 1, "no second re-run"
    assert model_calls(platform) == 1


def test_a_flaky_failure_of_our_attempts_ci_is_not_a_failed_attempt(platform: Platform) -> None:
    answer(platform, "broken", "floor")  # a patch whose CI fails: here, as if a test flaked
    assert_outputs(platform.job(platform.ci("main")), "committed", attempt="1")
    red = platform.ci(FIX_BRANCH)
    assert platform.failed(red)
    reruns_end(platform, "success")

    judged = platform.job(red)

    assert_outputs(judged, "flaky", attempt="")
    assert model_calls(platform) == 1, "only attempt 1's"
    request = platform.fix_request()
    assert "ci-agent:flaky" in request.labels
    body = the_status_note(platform, request.number)["body"]
    assert "decides nothing about the attempt" in body, body
    assert "attempt 1 of 3 waiting for CI; 0 failed" in body, body
    # the re-run passed: its completion is a green run of the attempt's commit, which decides it
    # (GitHub: the run's next attempt, green; GitLab: the pipeline, green now, runs its success job)
    green = red if platform.name == "github" else replace(red, status="success")
    done = platform.retry(green)
    assert_outputs(done, "fixed")
    assert model_calls(platform) == 1
