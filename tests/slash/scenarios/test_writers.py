"""Commands written by a person with write access, the same on both forges: explain posts the
root cause and pushes nothing; help and an unknown word answer with the list; fix in mode push
commits onto the change request's own branch."""

from __future__ import annotations

import pytest

from tests.github_scenarios.harness import ROOT_CAUSE
from tests.slash.scenarios.scene import RATINGS, Scene

NAMES = ("fix", "explain", "retry", "stop", "resume", "status", "apply", "help")


def test_explain_posts_the_root_cause_and_pushes_nothing(scene: Scene) -> None:
    number, head = scene.red_change_request()
    comment = scene.say(number, "/ci-agent explain")
    scene.answer("broken", "fix")
    branches = scene.origin_branches()

    run = scene.command(number, comment)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "explained", str(run)
    assert scene.model_calls() == 1
    assert "explain only" in scene.first_prompt()
    said = scene.status_body(number)
    assert "Root cause" in said and ROOT_CAUSE in said
    assert scene.origin_branches() == branches == [scene.feature, "main"], "no fix branch"
    assert scene.origin_tip(scene.feature) == head, "nothing pushed"
    assert scene.change_requests() == [number], "no change request opened"
    assert scene.acknowledged(comment)


@pytest.mark.parametrize(("body", "first_line"), [
    ("/ci-agent help", "Commands (at the start of a line"),
    ("/ci-agent", "Commands (at the start of a line"),
    ("/ci-agent frobnicate <b>now</b>", "`/ci-agent frobnicate` is not a command."),
], ids=["help", "no word", "unknown word"])
def test_help_and_an_unknown_word_answer_with_the_list(scene: Scene, body: str, first_line: str) -> None:
    number = scene.change_request()
    comment = scene.say(number, body)

    run = scene.command(number, comment)

    assert run.exit_code == 0, str(run)
    assert scene.model_calls() == 0
    said = scene.status_body(number)
    assert first_line in said
    for name in NAMES:
        assert f"`/ci-agent {name}" in said, name
    assert ("is not a command" in said) == ("frobnicate" in body)
    assert "<b>" not in said
    assert scene.origin_branches() == [scene.feature, "main"]
    assert scene.acknowledged(comment)


def test_fix_in_mode_push_commits_onto_the_change_request_s_branch(scene: Scene) -> None:
    scene.use_mode("push")
    number, head = scene.red_change_request()
    labels_title = scene.labels_and_title(number)
    comment = scene.say(number, "/ci-agent fix")
    scene.answer("broken", "fix")

    run = scene.command(number, comment)

    assert run.exit_code == 0, str(run)
    assert (run.outcome, run.attempt, run.branch) == ("committed", "1", scene.feature), str(run)
    tip = scene.origin_tip(scene.feature)
    assert tip is not None and scene.commits(head, scene.feature) == [tip], "one commit on its branch"
    assert scene.show(scene.feature, RATINGS) == scene.version("fix")
    assert scene.origin_branches() == [scene.feature, "main"], "no fix branch"
    assert scene.origin_tip(scene.feature_fix) is None and scene.change_requests() == [number], "no fix one"
    labels, _ = labels_title
    assert labels == [] and scene.labels_and_title(number) == labels_title, \
        "the person's change request is neither retitled nor relabelled"
    assert "attempt 1 pushed" in scene.status_body(number)
    assert scene.acknowledged(comment)
