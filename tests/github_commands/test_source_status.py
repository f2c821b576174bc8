"""The person's pull request hears how its fix ended (issue 13, point 10, on GitHub too).

The person's PR run fails; ci-agent opens the fix PR and writes its status comment on both. The
fix branch's own run then goes green: the comment on the person's PR must say so, not keep
saying "attempt 1 pushed, waiting for CI".
"""

from __future__ import annotations

from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import FEATURE_FIX, red_pr, status_body
from tests.github_scenarios.harness import USER_TOKEN
from tests.github_scenarios.steps import answer, assert_outputs, model_calls


def test_a_green_fix_run_updates_the_comment_on_the_source_pr(world: CommandWorld) -> None:
    world.inputs["github_token"] = USER_TOKEN
    number, ci = red_pr(world)
    answer(world, "broken", "fix")
    assert world.after_ci(ci).outputs["outcome"] == "committed"
    (fix,) = world.pulls_from(FEATURE_FIX)
    assert "waiting for CI" in status_body(world, number)

    done = world.after_ci(world.ci(FEATURE_FIX))

    assert_outputs(done, "fixed", pr_number=str(fix["number"]))
    said = status_body(world, number)
    assert "waiting for CI" not in said and "green" in said, said
    assert f"#{fix['number']}" in said, "the person's PR names the fix PR"
    assert "green" in status_body(world, fix["number"])
    assert model_calls(world) == 1
