"""The person's merge request hears how its fix ended (issue 13, point 10).

A merge request pipeline of a person's branch fails; ci-agent opens the fix MR and writes its
status note on both merge requests. The fix branch's own pipeline (a push pipeline: it knows
nothing of the person's MR) then goes green: the note on the person's MR must say so too, not
keep saying "attempt 1 pushed, waiting for CI".
"""

from __future__ import annotations

from tests.gitlab_scenarios.harness import World
from tests.gitlab_scenarios.steps import answer, assert_dotenv, model_calls, the_status_note

FEATURE, FEATURE_FIX = "feature/stars", "ci-agent/fix/feature/stars"


def test_a_green_fix_pipeline_updates_the_note_on_the_source_mr(world: World) -> None:
    world.repo.git("push", "-q", "origin", "main:refs/heads/" + FEATURE)
    source = world.open_mr(FEATURE, "main", "Stars")
    answer(world, "broken", "fix")
    first = world.job(world.pipeline(FEATURE, source="merge_request_event", mr_iid=source))
    assert first.exit_code == 0, str(first)
    (fix,) = world.mrs_from(FEATURE_FIX)
    before = the_status_note(world, source)
    assert "waiting for CI" in before["body"], before["body"]

    green = world.pipeline(FEATURE_FIX)
    assert green.status == "success" and green.mr_iid is None
    done = world.job(green)

    assert done.exit_code == 0, str(done)
    assert_dotenv(done, "fixed", mr_iid=str(fix["iid"]))
    after = the_status_note(world, source)
    assert after["id"] == before["id"], "edited in place, not a second note"
    assert "waiting for CI" not in after["body"] and "green" in after["body"], after["body"]
    assert f"!{fix['iid']}" in after["body"], "the person's MR names the fix MR"
    assert "green" in the_status_note(world, fix["iid"])["body"]
    assert model_calls(world) == 1

