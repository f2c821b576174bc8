"""`ci-agent fix --github` across simulated CI runs (workflow_run mode): fixed on attempt 1, then
green CI on the fix branch marks the draft PR ready for review; `verify` checks each attempt before
its push. (Fixed on attempt 2, the same on GitLab: tests/platform_scenarios/test_fix_cycle.py.)

Every step is what GitHub would do: CI runs the sample's real pytest on a branch of the bare
origin and is recorded in the fake; the ci-agent job then starts from a fresh checkout with the
`workflow_run` payload of that run. Nothing is carried from one job to the next but git and the
fake's state (the runner is ephemeral).
"""

from __future__ import annotations

from tests.github_scenarios.harness import FIX_BRANCH, ROOT_CAUSE, USER_TOKEN, World
from tests.github_scenarios.steps import (
    RATINGS,
    answer,
    assert_fix_pr_outputs,
    assert_outputs,
    model_calls,
    the_status_comment,
    version,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTEST

MIB = 1024 * 1024


def test_fixed_on_attempt_1_then_green_ci_makes_it_ready(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN  # a PAT: its push starts CI by itself
    red = world.ci("main")
    answer(world, "broken", "fix")
    main_tip = world.origin_tip("main")

    first = world.after_ci(red)

    assert first.exit_code == 0, str(first)
    assert model_calls(world) == 1
    report = model.first_user_text(world.api.message_requests[0])
    assert "test_no_ratings_yet" in report and "ZeroDivisionError" in report
    assert "junit.xml" in report, "the run's artifact (JUnit XML) was fetched and read, besides the log"
    # the fix branch: one commit on the failing commit, holding exactly the fix, with our trailers
    assert main_tip is not None and world.origin_tip("main") == main_tip, "main is never pushed to"
    (tip,) = world.commits(main_tip, FIX_BRANCH)
    assert world.show(FIX_BRANCH, RATINGS) == version(world, "fix")
    assert world.trailers(tip).get("CI-Agent-Attempt") == ["1"]
    # the draft fix PR against the failing branch, labelled, explaining the fix
    pull = assert_fix_pr_outputs(world, first, "committed", attempt=1)
    assert pull["draft"] is True and pull["base"] == "main" and pull["state"] == "open"
    assert "ci-agent" in pull["labels"]
    assert ROOT_CAUSE in (pull["body"] or "") and RATINGS in (pull["body"] or "")
    body = pull["body"]
    assert "test_no_ratings_yet" in body, "the failure"
    assert "+    if not ratings:" in body, "the patch"
    spent = sum(model.USAGE.values())  # one model call: input, output, cache write and read
    assert str(spent) in body and first.outputs["tokens"] == str(spent), "token usage"
    status = dict(the_status_comment(world, pull["number"]))  # a copy: the fake edits its own
    assert status["user"] == "octocat", "written by the token's account"
    assert "attempt 1" in status["body"].lower()
    # the job summary
    assert RATINGS in first.summary and "test_no_ratings_yet" in first.summary
    assert len(first.summary.encode()) <= MIB

    green = world.ci(FIX_BRANCH)
    assert green.conclusion == "success"
    second = world.after_ci(green)

    assert second.exit_code == 0, str(second)
    assert model_calls(world) == 1, "a green run asks the model nothing"
    assert_outputs(second, "fixed", branch=FIX_BRANCH, pr_number=str(pull["number"]))
    assert world.fix_pull()["draft"] is False, "marked ready for review"
    edited = the_status_comment(world, pull["number"])
    assert edited["id"] == status["id"] and edited["body"] != status["body"], "edited in place"
    assert "green" in edited["body"].lower()
    assert len(world.created_comments(pull["number"])) == 1
    assert world.origin_tip(FIX_BRANCH) == tip, "nothing pushed on green"


def test_verify_input_checks_each_attempt_before_the_push(world: World) -> None:
    """With `verify`, a patch that fails it is rolled back within the job (never pushed) and the
    next attempt follows; only the verified fix reaches the branch.

    The results are read from the job log only (`test_results` matches no artifact file): the
    failed run's JUnit artifact, extracted less than a second before a verify starts, would be
    taken for the verify's own result (collect's one-second mtime slack) and fail a good patch."""
    world.inputs.update(github_token=USER_TOKEN, verify=PYTEST)
    answer(world, "broken", "floor", summary="Divide with //.")
    answer(world, "broken", "fix")
    main_tip = world.origin_tip("main")
    assert main_tip is not None

    run = world.after_ci(world.ci("main"), inputs={"test_results": "**/*.trx"})

    assert run.exit_code == 0, str(run)
    assert model_calls(world) == 2
    assert_fix_pr_outputs(world, run, "fixed", attempt=2)
    (tip,) = world.commits(main_tip, FIX_BRANCH)
    assert world.show(FIX_BRANCH, RATINGS) == version(world, "fix")
    assert world.trailers(tip).get("CI-Agent-Attempt") == ["2"]
    body = the_status_comment(world, world.fix_pull()["number"])["body"]
    assert "1 of 3" in body or "attempt 2" in body.lower(), body
