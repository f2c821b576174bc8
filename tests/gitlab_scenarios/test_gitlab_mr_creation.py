"""Opening the fix merge request when GitLab fails (issue 13, point 11).

A single 5xx on `POST /merge_requests` used to end the job with "GitLab kept failing ... after 0
attempts". Now the create is retried with backoff, each try looking up first (a create whose answer
was lost may have opened the merge request), and a failure after all attempts names their number.
"""

from __future__ import annotations

from ci_agent.errors import ExitCode
from tests.fakes.breakage import PARTIAL
from tests.fakes.gitlab_fake import Fault, server_error
from tests.gitlab_scenarios.harness import FIX_BRANCH, World
from tests.gitlab_scenarios.steps import answer, assert_fix_mr_outputs, model_calls, the_status_note

MRS = r"/projects/(42|acme%2Fshop|acme/shop)/merge_requests"


def test_a_5xx_on_opening_the_mr_is_retried_and_the_attempt_kept(world: World,
                                                                   forge_waits: list[float]) -> None:
    world.gitlab.add_fault(Fault(server_error(502), path=r"/merge_requests$", method="POST"))
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"))

    assert run.exit_code == 0, str(run)
    mr = assert_fix_mr_outputs(world, run, "committed", attempt=1)
    assert len(world.gitlab.requests_to("POST", MRS)) == 2, "one failed create, one that worked"
    assert forge_waits, "backed off before the second try"
    assert model_calls(world) == 1
    assert FIX_BRANCH in world.origin_branches(), "the push is kept"
    the_status_note(world, mr["iid"])


def test_a_create_whose_answer_was_lost_is_found_not_opened_twice(world: World) -> None:
    world.gitlab.add_transport_fault(PARTIAL, path=r"/merge_requests$", method="POST")
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"))

    assert run.exit_code == 0, str(run)
    assert len(world.mrs_from(FIX_BRANCH)) == 1, "one merge request, not two"
    assert len(world.gitlab.requests_to("POST", MRS)) == 1, "the look-up found it: no second create"
    assert_fix_mr_outputs(world, run, "committed", attempt=1)


def test_an_mr_that_cannot_be_opened_names_the_real_number_of_attempts(world: World,
                                                                        forge_waits: list[float]) -> None:
    world.gitlab.add_fault(Fault(server_error(503), path=r"/merge_requests$", method="POST", times=100))
    answer(world, "broken", "fix")

    run = world.job(world.pipeline("main"))

    assert run.exit_code == ExitCode.EXTERNAL_SERVICE, str(run)
    tries = len(world.gitlab.requests_to("POST", MRS))
    assert tries == 5, "GitLabForge's five attempts"
    said = run.stderr + run.stdout
    assert f"after {tries} attempts to create merge requests" in said, said
    assert "after 0 attempts" not in said
    assert "taken back" in said and world.origin_branches() == ["main"]
