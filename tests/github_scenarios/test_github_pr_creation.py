"""Opening the fix pull request when GitHub fails (issue 13, point 6).

The attempt is pushed before the PR is opened; a 5xx on `POST /pulls` used to end the job (the push
taken back, exit 5), so the rerun paid for a second model conversation. Now the create is retried
with backoff, each try looking up first: a create whose answer was lost may have opened the PR,
and the next try finds it instead of opening a second. A PR that cannot be opened after all
attempts says how many were made.
"""

from __future__ import annotations

from ci_agent.errors import ExitCode
from tests.fakes.breakage import PARTIAL
from tests.fakes.github_fake import server_error
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import answer, assert_fix_pr_outputs, model_calls, the_status_comment

PULLS = r"/repos/octo/app/pulls$"


def test_a_5xx_on_opening_the_pr_is_retried_and_the_attempt_kept(world: World,
                                                                   forge_waits: list[float]) -> None:
    world.inputs["github_token"] = USER_TOKEN
    world.github.inject(server_error(502), path=PULLS, method="POST", times=1)
    answer(world, "broken", "fix")

    run = world.after_ci(world.ci("main"))

    assert run.exit_code == 0, str(run)
    pull = assert_fix_pr_outputs(world, run, "committed", attempt=1)
    assert pull["draft"] is True and "ci-agent" in pull["labels"]
    assert len(world.github.requests_to("POST", PULLS)) == 2, "one failed create, one that worked"
    assert forge_waits, "backed off before the second try"
    assert model_calls(world) == 1
    assert FIX_BRANCH in world.origin_branches(), "the push is kept"
    the_status_comment(world, pull["number"])


def test_a_create_whose_answer_was_lost_is_found_not_opened_twice(world: World) -> None:
    """GitHub opened the PR, then the answer was cut off mid-body: the retry's look-up finds it."""
    world.inputs["github_token"] = USER_TOKEN
    world.github.inject_transport(PARTIAL, path=PULLS, method="POST", times=1)
    answer(world, "broken", "fix")

    run = world.after_ci(world.ci("main"))

    assert run.exit_code == 0, str(run)
    assert len(world.pulls_from(FIX_BRANCH)) == 1, "one PR, not two"
    assert len(world.github.requests_to("POST", PULLS)) == 1, "the look-up found it: no second create"
    assert_fix_pr_outputs(world, run, "committed", attempt=1)


def test_a_pr_that_cannot_be_opened_names_the_real_number_of_attempts(world: World,
                                                                       forge_waits: list[float]) -> None:
    world.inputs["github_token"] = USER_TOKEN
    world.github.inject(server_error(503), path=PULLS, method="POST", times=100)
    answer(world, "broken", "fix")

    run = world.after_ci(world.ci("main"))

    assert run.exit_code == ExitCode.EXTERNAL_SERVICE, str(run)
    tries = len(world.github.requests_to("POST", PULLS))
    assert tries == 5, "GitHubForge's five attempts"
    said = run.stderr + run.stdout
    assert f"after {tries} attempts to open a pull request" in said, said
    assert "after 0 attempts" not in said
    assert "taken back" in said and world.origin_branches() == ["main"]
