"""Opening the fix request when the forge fails (issue 13, points 6 and 11), on GitHub and GitLab.

The attempt is pushed before the pull / merge request is opened; a 5xx on its create used to end
the job ("... after 0 attempts"), so the rerun paid for a second model conversation. Now the create
is retried with backoff, each try looking up first: a create whose answer was lost may have opened
it, and the next try finds it instead of opening a second. One that cannot be opened after all
attempts says how many were made.
"""

from __future__ import annotations

from ci_agent.errors import ExitCode
from tests.platform_scenarios.base import FIX_BRANCH
from tests.platform_scenarios.platforms import Platform, assert_fix_outputs, the_status_note
from tests.platform_scenarios.steps import answer, model_calls


def test_a_5xx_on_opening_the_fix_request_is_retried_and_the_attempt_kept(platform: Platform,
                                                                            forge_waits: list[float]) -> None:
    platform.fail_creates(502, times=1)
    answer(platform, "broken", "fix")

    run = platform.job(platform.ci("main"))

    assert run.exit_code == 0, str(run)
    request = assert_fix_outputs(platform, run, "committed", attempt=1)
    assert request.draft is True and "ci-agent" in request.labels
    assert platform.creates() == 2, "one failed create, one that worked"
    assert forge_waits, "backed off before the second try"
    assert model_calls(platform) == 1
    assert FIX_BRANCH in platform.world.origin_branches(), "the push is kept"
    the_status_note(platform, request.number)


def test_a_create_whose_answer_was_lost_is_found_not_opened_twice(platform: Platform) -> None:
    """The forge opened it, then the answer was cut off mid-body: the retry's look-up finds it."""
    platform.lose_create_answer()
    answer(platform, "broken", "fix")

    run = platform.job(platform.ci("main"))

    assert run.exit_code == 0, str(run)
    assert len(platform.requests_from(FIX_BRANCH)) == 1, "one fix request, not two"
    assert platform.creates() == 1, "the look-up found it: no second create"
    assert_fix_outputs(platform, run, "committed", attempt=1)


def test_a_fix_request_that_cannot_be_opened_names_the_real_number_of_attempts(
        platform: Platform, forge_waits: list[float]) -> None:
    platform.fail_creates(503, times=100)
    answer(platform, "broken", "fix")

    run = platform.job(platform.ci("main"))

    assert run.exit_code == ExitCode.EXTERNAL_SERVICE, str(run)
    tries = platform.creates()
    assert tries == 5, "the forge adapter's five attempts"
    said = run.stderr + run.stdout
    assert f"after {tries} {platform.create_failure}" in said, said
    assert "after 0 attempts" not in said
    assert "taken back" in said and platform.world.origin_branches() == ["main"]
