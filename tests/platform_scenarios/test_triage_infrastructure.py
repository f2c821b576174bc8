"""The infrastructure verdict in the CI cycle (issue 16), the same on GitHub and on GitLab: a run
that failed because the environment did (a package index that could not be resolved) gets no
patch and no model call; the outcome, the outputs, the job summary and the status comment say
why. On the fix branch such a run decides nothing about the attempt: it is not counted as failed.
Each test runs once per platform (the `platform` fixture)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.fakes.gitlab_fake_routes import FakeJob
from tests.github_scenarios import harness as github
from tests.gitlab_scenarios import harness as gitlab
from tests.platform_scenarios.base import FIX_BRANCH, push_file
from tests.platform_scenarios.platforms import Job, Platform, Run, assert_outputs, the_status_note
from tests.platform_scenarios.steps import answer, model_calls

INFRA = Path(__file__).resolve().parents[1] / "fixtures" / "infra"
# Real output of `pip install` against an index whose host does not resolve (PROVENANCE there).
PIP_DNS = (INFRA / "pip-dns.log").read_text(encoding="utf-8")
FEATURE = "feature/stars"


def failed_for_the_environment(platform: Platform, branch: str, output: str,
                               request: int | None = None) -> Run:
    """A CI run of `branch` (for the person's change request `request`, if given) whose one job
    failed printing `output`, not the sample's tests."""
    world = platform.world
    sha = world.origin_tip(branch)
    assert sha is not None
    if platform.name == "github":
        run_id = next(world._run_ids)
        text = (f"##[group]Run pip install -r requirements.txt\n{output}"
                "##[error]Process completed with exit code 1.\n")
        pulls = [github.same_repo_pr(world, request, branch)] if request is not None else None
        job_id = world.github.add_ci_run(run_id, head_branch=branch, head_sha=sha, conclusion="failure",
                                         log=github.timestamped(text), pull_requests=pulls,
                                         event="push" if request is None else "pull_request")
        found: Run = github.CiRun(run_id, branch, sha, "failure", output, job_id)
        world.ci_runs.append(found)
        return found
    source = "push" if request is None else "merge_request_event"
    trace = gitlab.runner_trace("pip install -r requirements.txt", output, 1, sha, branch)
    pipeline_id = world.gitlab.add_pipeline(branch, sha, "failed", [FakeJob("install", "failed", trace)],
                                            source=source)
    job_id = max(world.gitlab.job_ids(pipeline_id))
    pipeline = gitlab.Pipeline(pipeline_id, branch, sha, "failed", output, job_id, source, request)
    world.pipelines.append(pipeline)
    return pipeline


def verdict_output(platform: Platform, job: Job) -> str:
    """The verdict's kind as the platform's outputs give it (GitHub: JSON; GitLab: the kind)."""
    value = job.outputs.get("verdict", "")
    return str(json.loads(value)["kind"]) if platform.name == "github" and value else value


def test_an_index_that_does_not_resolve_gets_no_model_call_and_no_patch(platform: Platform) -> None:
    red = failed_for_the_environment(platform, "main", PIP_DNS)

    job = platform.job(red)

    assert job.exit_code == 0, str(job)
    assert_outputs(job, "infrastructure", attempt="", request="")
    assert verdict_output(platform, job) == "infrastructure"
    assert model_calls(platform) == 0
    assert platform.world.origin_tip(FIX_BRANCH) is None, "nothing pushed"
    assert platform.requests_from(FIX_BRANCH) == []
    assert "## ci-agent: infrastructure failure: no patch" in job.summary, job.summary
    assert "Name or service not known" in job.summary, "the evidence, in the summary"
    data = re.search(r"```json\n(.*?)\n```", job.summary, re.S)
    assert data is not None and json.loads(data.group(1))["kind"] == "infrastructure", job.summary
    # a rerun of the job judges again (free) and says the same: nothing recorded as handled
    again = platform.rerun_job(red)
    assert_outputs(again, "infrastructure")
    assert model_calls(platform) == 0


def test_the_persons_change_request_is_told_why_nothing_was_patched(platform: Platform) -> None:
    push_file(platform.repo, FEATURE, "requirements.txt", "requests\n", new_branch=True)
    number = platform.open_person_request(FEATURE)
    red = failed_for_the_environment(platform, FEATURE, PIP_DNS, request=number)

    job = platform.job(red)

    assert_outputs(job, "infrastructure")
    assert model_calls(platform) == 0
    body = the_status_note(platform, number)["body"]
    assert "### ci-agent: infrastructure: the environment failed, not the code; no patch" in body, body
    assert "Name or service not known" in body, "the evidence"
    (person,) = platform.requests_from(FEATURE)
    assert "ci-agent:flaky" not in person.labels


def test_an_attempts_ci_that_failed_for_the_environment_is_not_counted(platform: Platform) -> None:
    answer(platform, "broken", "floor")
    first = platform.job(platform.ci("main"))
    assert_outputs(first, "committed", attempt="1")

    judged = platform.job(failed_for_the_environment(platform, FIX_BRANCH, PIP_DNS))

    assert_outputs(judged, "infrastructure", attempt="")
    assert model_calls(platform) == 1
    body = the_status_note(platform, platform.fix_request().number)["body"]
    assert "decides nothing about the attempt" in body, body
    assert "attempt 1 of 3 waiting for CI; 0 failed" in body, body
    # the next run of the fix branch decides attempt 1: red, so attempt 2 (1 failed)
    answer(platform, "floor", "fix")
    second = platform.job(platform.ci(FIX_BRANCH))
    assert_outputs(second, "committed", attempt="2")
    body = the_status_note(platform, platform.fix_request().number)["body"]
    assert "1 failed" in body, body
