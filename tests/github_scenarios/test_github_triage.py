"""The flaky check where only GitHub differs (issue 16; both forges: tests/platform_scenarios/
test_triage_flaky.py): an inline step runs inside the failing job, which cannot be re-run; and
the completion of a re-run our own token started names our token's account as the one who
triggered it, which is not refused as a person without write access would be."""

from __future__ import annotations

from tests.github_scenarios.harness import ACTIONS_BOT, USER_TOKEN, World, open_person_pr, same_repo_pr
from tests.platform_scenarios.steps import answer, model_calls

RERUNS = r".*/actions/runs/\d+/rerun-failed-jobs"


def test_an_inline_step_asks_for_no_re_run_and_says_so(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")

    run = world.inline("main")

    assert run.outputs["outcome"] == "committed", str(run)
    assert world.github.requests_to("POST", RERUNS) == []
    assert "still running and cannot be re-run: no flaky check" in run.summary, run.summary


def test_the_completion_of_our_own_re_run_is_not_refused(world: World) -> None:
    """With the workflow's GITHUB_TOKEN the re-run's `triggering_actor` is github-actions[bot],
    which has no collaborator permission: the run's first attempt was checked, ours is let on."""
    open_person_pr(world)
    ci = world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                  event="pull_request")
    world.github.rerun_ends = "queued"
    waiting = world.after_ci(ci)
    assert waiting.outputs["outcome"] == "skipped", str(waiting)
    world.github.finish_rerun(ci.id, "failure")
    answer(world, "broken", "fix")

    done = world.after_ci(world.rerun(ci), actor=ACTIONS_BOT)

    assert done.outputs["outcome"] == "committed", str(done)
    assert model_calls(world) == 1
    assert len(world.github.requests_to("POST", RERUNS)) == 1
