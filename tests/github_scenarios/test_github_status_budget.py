"""What the status comment says about the budget while an attempt waits for CI (issue 13 point 16):
a pushed attempt CI has not judged is waiting, not failed."""

from __future__ import annotations

from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import WRONG_SUMMARIES, answer, the_status_comment


def test_a_pushed_attempt_is_waiting_for_ci_not_a_used_failure(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "floor", summary=WRONG_SUMMARIES["floor"])

    first = world.after_ci(world.ci("main"))

    assert first.exit_code == 0, str(first)
    number = world.fix_pull()["number"]
    said = the_status_comment(world, number)["body"]
    assert "Budget: attempt 1 of 3 waiting for CI; 0 failed." in said, said
    assert "1 of 3 consecutive failed" not in said
    answer(world, "floor", "fix")

    second = world.after_ci(world.ci(FIX_BRANCH))  # attempt 1 failed on the fix branch: attempt 2

    assert second.exit_code == 0, str(second)
    said = the_status_comment(world, number)["body"]
    assert "Budget: attempt 2 of 3 waiting for CI; 1 failed." in said, said
    # the job summary tells the budget attempt 2 was made with: attempt 1 failed
    assert "Budget: 1 of 3 consecutive failed attempts used." in second.summary, second.summary

    fixed = world.after_ci(world.ci(FIX_BRANCH))

    assert fixed.exit_code == 0, str(fixed)
    said = the_status_comment(world, number)["body"]
    assert "Budget: 0 of 3 consecutive failed attempts used." in said, said
