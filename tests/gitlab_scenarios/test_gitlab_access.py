"""`ci-agent fix --gitlab` refusing and failing well: the pipeline user's role, fork merge
request pipelines, a job token without an access token, job-token pushes (which start no
pipeline), rate limits; and the trace as GitLab serves it (colours, section markers)."""

from __future__ import annotations

from ci_agent.errors import ExitCode
from tests.fakes.gitlab_fake import Fault, rate_limited, server_error
from tests.gitlab_scenarios.harness import BOT, FIX_BRANCH, JOB_TOKEN, World
from tests.gitlab_scenarios.steps import (
    answer,
    assert_dotenv,
    assert_fix_mr_outputs,
    model_calls,
    the_status_note,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

WRITES = ("POST", "PUT", "DELETE")


def api_writes(world: World) -> list[str]:
    return [f"{r.method} {r.path}" for r in world.gitlab.requests if r.method in WRITES]


# -- who may start a fix ------------------------------------------------------------------------


def test_a_pipeline_user_with_the_reporter_role_is_refused(world: World) -> None:
    world.gitlab.add_user("rita", 20)  # Reporter: may read, may not push
    world.gitlab.add_token("job-token-rita", "rita", "job")
    red = world.pipeline("main")

    run = world.job(red, user="rita", env={"CI_JOB_TOKEN": "job-token-rita"})

    assert run.exit_code == 0, str(run)
    assert_dotenv(run, "refused")
    assert "rita" in run.stdout and "Developer" in run.stdout + run.summary, str(run)
    assert model_calls(world) == 0
    assert world.origin_branches() == ["main"] and world.gitlab.merge_requests == {}
    assert api_writes(world) == []


def test_a_fork_merge_request_pipeline_is_refused(world: World) -> None:
    """A merge request from a fork (project 77) whose pipeline runs in this project: the include's
    rules add no ci-agent job; a job that runs anyway (a hand-written include) refuses."""
    fork = world.clone("main", "fork")
    (fork / "README.md").write_text("an innocent change\n")
    git(fork, "commit", "-q", "-am", "innocent change")
    git(fork, "push", "-q", "origin", "HEAD:refs/merge-requests/5/head")  # as GitLab keeps it
    sha = git(fork, "rev-parse", "HEAD").strip()
    red = world.pipeline("main", sha=sha, source="merge_request_event", mr_iid=5, source_project_id=77)
    assert red.status == "failed"

    assert world.after(red) is None, "the include's rules leave the fork's pipeline alone"
    run = world.job(red, user="mallory", force="fix")

    assert run.exit_code == 0, str(run)
    assert_dotenv(run, "refused")
    assert "fork" in (run.stdout + run.summary).lower()
    assert model_calls(world) == 0
    assert world.origin_branches() == ["main"] and world.gitlab.merge_requests == {}
    assert api_writes(world) == []
    assert not world.gitlab.requests_to("GET", r"/projects/(42|acme/shop)/jobs/\d+/trace"), "nothing read"


# -- tokens ----------------------------------------------------------------------------------------


def test_a_job_token_push_gets_its_pipeline_created_through_the_api(world: World) -> None:
    """CI_AGENT_GITLAB_PUSH=job_token: the push uses CI_JOB_TOKEN, and GitLab starts no pipeline
    for it, so ci-agent creates one on the fix branch with the access token."""
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"), env={"CI_AGENT_GITLAB_PUSH": "job_token"})

    assert run.exit_code == 0, str(run)
    mr = assert_fix_mr_outputs(world, run, "committed", attempt=1)
    assert [p["ref"] for p in world.gitlab.created_pipelines] == [FIX_BRANCH]
    (created,) = world.gitlab.requests_to("POST", r"/projects/(42|acme/shop)/pipeline")
    assert created.user == BOT and "private-token" in created.headers, "created with the access token"
    assert "pipeline" in the_status_note(world, mr["iid"])["body"].lower()


def test_an_access_token_push_creates_no_pipeline(world: World) -> None:
    answer(world, "broken", "fix")
    run = world.job(world.pipeline("main"))
    assert run.exit_code == 0, str(run)
    assert world.gitlab.created_pipelines == []


def test_a_job_token_alone_says_which_token_to_add(world: World) -> None:
    """No CI_AGENT_GITLAB_TOKEN: CI_JOB_TOKEN cannot create merge requests or notes. The job must
    fail with the variable to set and the role it needs, not a traceback or a bare 403."""
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"), drop=("CI_AGENT_GITLAB_TOKEN",))

    assert run.exit_code == ExitCode.USAGE, str(run)  # a configuration error, known up front
    said = run.stdout + run.stderr + run.summary
    assert "CI_AGENT_GITLAB_TOKEN" in said and "Developer" in said, said
    assert "Traceback" not in run.stderr
    assert JOB_TOKEN not in said, "the token never appears in what the job prints"
    assert run.outcome == "error"
    assert world.gitlab.merge_requests == {}


def test_a_job_token_alone_fails_before_spending_a_model_call(world: World) -> None:
    answer(world, "broken", "fix")
    run = world.job(world.pipeline("main"), drop=("CI_AGENT_GITLAB_TOKEN",))
    # known from the job's variables before any call: a configuration error (exit 2), not a
    # service failure
    assert run.exit_code == ExitCode.USAGE, str(run)
    said = run.stdout + run.stderr + run.summary
    assert "CI_AGENT_GITLAB_TOKEN" in said and "Developer" in said and "api" in said, said
    assert run.outcome == "error"
    assert model_calls(world) == 0, "no model call for a fix that cannot be proposed"
    assert world.origin_branches() == ["main"], "no fix branch without a merge request"


def test_a_rejected_access_token_is_exit_5_with_a_sentence(world: World) -> None:
    answer(world, "broken", "fix")
    world.variables["CI_AGENT_GITLAB_TOKEN"] = "glpat-revoked"

    run = world.job(world.pipeline("main"))

    assert run.exit_code == ExitCode.EXTERNAL_SERVICE, str(run)
    said = run.stdout + run.stderr + run.summary
    assert "token" in said.lower() and "glpat-revoked" not in said, said
    assert model_calls(world) == 0 and "Traceback" not in run.stderr


# -- rate limits and outages ---------------------------------------------------------------------


def test_a_rate_limit_is_waited_out(world: World, forge_waits: list[float]) -> None:
    world.gitlab.add_fault(Fault(rate_limited("7"), path=r"/merge_requests/\d+/notes$", method="POST"))
    world.gitlab.add_fault(Fault(rate_limited("3"), path=r"/jobs/\d+/trace$", method="GET"))
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"))

    assert run.exit_code == 0, str(run)
    assert 7.0 in forge_waits and 3.0 in forge_waits, f"Retry-After honoured: {forge_waits}"
    the_status_note(world, world.fix_mr()["iid"])
    assert len(world.gitlab.requests_to("POST", r"/projects/(42|acme/shop)/merge_requests/\d+/notes")) == 2


def test_an_api_that_keeps_failing_is_retried_then_exit_5(world: World, forge_waits: list[float]) -> None:
    world.gitlab.add_fault(Fault(server_error(503), path=r"/pipelines/\d+/jobs$", times=100))
    run = world.job(world.pipeline("main"))
    assert run.exit_code == ExitCode.EXTERNAL_SERVICE, str(run)
    assert len(world.gitlab.requests_to("GET", r"/projects/(42|acme/shop)/pipelines/\d+/jobs")) > 1
    assert forge_waits, "waited between attempts"
    assert model_calls(world) == 0 and "Traceback" not in run.stderr


# -- the trace as GitLab serves it -----------------------------------------------------------------


def test_a_coloured_sectioned_trace_is_distilled_to_the_failure(world: World) -> None:
    red = world.pipeline("main")
    served = world.gitlab.traces[red.job_id]
    assert b"\x1b[31m" in served or b"\x1b[31;1m" in served, "pytest's own colours are in the trace"
    assert b"section_start:" in served and b"\r\x1b[0K" in served
    answer(world, "broken", "fix")

    run = world.job(red, env={"CI_AGENT_INPUT_TEST_RESULTS": "**/*.trx"})  # the trace alone

    assert run.exit_code == 0, str(run)
    prompt = model.first_user_text(world.api.message_requests[0])
    assert "test_no_ratings_yet" in prompt and "ZeroDivisionError" in prompt
    for leftover in ("\x1b", "[0K", "[0;m", "[31", "section_start", "section_end", "\r"):
        assert leftover not in prompt, f"{leftover!r} reached the model"
    assert "test" in prompt, "the failed job is named"
