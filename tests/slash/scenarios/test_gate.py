"""The gate, the same on both forges: one comment runs once however often its job is started; the
sixth command within the hour on one change request is refused and answered; fix and apply on a
fork's change request are refused with the fork sentence."""

from __future__ import annotations

import pytest

from tests.slash.scenarios.scene import Scene


def test_the_same_comment_started_twice_runs_once(scene: Scene) -> None:
    """GitHub redelivered the event, or the relay and the poller both created a pipeline."""
    number, head = scene.red_change_request()
    comment = scene.say(number, "/ci-agent fix")
    scene.answer("broken", "fix")
    first, second = scene.command_job(number, comment), scene.command_job(number, comment)

    acted = first()
    tip = scene.origin_tip(scene.feature_fix)
    since = scene.requests()
    again = second()

    assert acted.exit_code == 0 and (acted.outcome, acted.attempt) == ("committed", "1"), str(acted)
    assert again.exit_code == 0 and again.outcome == "skipped", str(again)
    assert "already handled" in again.stdout
    assert scene.model_calls() == 1
    assert scene.writes(since) == [], "the second job writes nothing"
    assert tip is not None and scene.origin_tip(scene.feature_fix) == tip
    assert len(scene.commits(head, scene.feature_fix)) == 1
    assert scene.acknowledged(comment)


def test_the_sixth_command_within_the_hour_is_refused_and_answered(scene: Scene) -> None:
    number = scene.change_request()
    for _ in range(5):
        assert scene.command(number, scene.say(number, "/ci-agent help")).exit_code == 0
    sixth = scene.say(number, "/ci-agent fix")

    run = scene.command(number, sixth)

    assert run.exit_code == 0 and run.outcome == "refused", str(run)
    assert scene.model_calls() == 0 and scene.origin_branches() == [scene.feature, "main"]
    said = scene.status_body(number)
    assert "command not run" in said and "At most 5 commands per hour" in said
    assert scene.acknowledged(sixth), "answered, so acknowledged"
    other = scene.change_request("other")  # the limit is per change request
    assert scene.command(other, scene.say(other, "/ci-agent help")).exit_code == 0
    assert "Commands" in scene.status_body(other)


@pytest.mark.parametrize("name", ["fix", "apply"])
def test_fix_and_apply_on_a_fork_s_change_request_are_refused(scene: Scene, name: str) -> None:
    number = scene.fork_change_request()
    scene.answer("broken", "fix")
    comment = scene.say(number, f"/ci-agent {name}")
    branches = scene.origin_branches()

    run = scene.command(number, comment)

    assert run.exit_code == 0 and run.outcome == "refused", str(run)
    said = scene.status_body(number)
    assert "comes from a fork" in said and "secrets" in said
    assert scene.model_calls() == 0 and scene.origin_branches() == branches == ["main"]
    assert scene.change_requests() == [number]
    assert scene.acknowledged(comment)
