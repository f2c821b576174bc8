"""The adversarial reviewer in a CI cycle (issue 16), the same on GitHub and on GitLab: a reject is
a counted failed attempt (the marker keeps it, the next attempt is told why), a revise is a second
round in the same attempt whose revised patch is pushed, and the verdict summary is in the fix
request's body."""

from __future__ import annotations

import json

from ci_agent.engine.forge import parse_marker
from tests.fakes.anthropic_review import issue, review_reply
from tests.platform_scenarios.base import FIX_BRANCH, ROOT_CAUSE, push_file
from tests.platform_scenarios.platforms import Platform, assert_fix_outputs, the_status_note
from tests.platform_scenarios.steps import RATINGS, answer, diff, model_calls, version
from tests.scenarios import model_scripts as model

HOSTILE = "@octocat <img src=x onerror=alert(1)> [click](https://evil.example)"


def test_a_reject_is_a_counted_failed_attempt_and_the_next_attempt_is_told_why(platform: Platform) -> None:
    answer(platform, "broken", "floor", summary="Clamp the divisor")
    answer(platform, "broken", "fix", summary="Return 0 for a product without ratings")
    platform.api.review(review_reply("reject", issue("critical", "root_cause", "hides the empty case"),
                                     summary="It clamps the divisor instead of handling no ratings."))

    job = platform.job(platform.ci("main"))

    assert job.exit_code == 0, str(job)
    request = assert_fix_outputs(platform, job, "committed", attempt=2)
    assert model_calls(platform) == 2 and len(platform.api.review_requests) == 2
    retry = platform.api.message_requests[1]
    assert model.is_new_conversation(retry), "a reject ends the attempt"
    assert "rejected by the reviewer: It clamps the divisor" in model.first_user_text(retry)
    assert platform.world.show(FIX_BRANCH, RATINGS) == version(platform, "fix"), "only the approved patch"
    tip = platform.world.origin_tip(FIX_BRANCH)
    assert tip is not None and platform.world.trailers(tip).get("CI-Agent-Attempt") == ["2"]
    note = the_status_note(platform, request.number)
    marker = parse_marker(note["body"])
    assert marker is not None
    (tried,) = marker["tried"]
    assert tried["n"] == 1 and "rejected by the reviewer" in tried["summary"], tried
    assert "attempt 2 of 3 waiting for CI; 1 failed" in note["body"], "the rejected attempt counts"
    body = platform.fix_request().body
    assert "**Review:** the reviewer rejected; 1 critical." in body
    assert "**Rejected by the reviewer:** the patch was rolled back" in body
    assert "**Review:** the reviewer approved; no issues." in body


def test_a_revise_is_a_second_round_in_the_same_attempt_and_the_revised_patch_is_pushed(
        platform: Platform) -> None:
    answer(platform, "broken", "floor", summary="Clamp the divisor")
    platform.api.reply(model.submit_patch(diff(version(platform, "broken"), version(platform, "fix")),
                                          summary="Return 0 without ratings", root_cause=ROOT_CAUSE,
                                          confidence=0.9))
    platform.api.review(review_reply("revise", issue("major", "root_cause", "clamping hides the empty case",
                                                     "shop/ratings.py", 3)),
                        review_reply("approve", issue("major", "behaviour_change", "callers may expect None"),
                                     summary=HOSTILE))

    job = platform.job(platform.ci("main"))

    assert job.exit_code == 0, str(job)
    assert_fix_outputs(platform, job, "committed", attempt=1)
    _, second = platform.api.message_requests
    assert not model.is_new_conversation(second), "the findings go back into the fixer's conversation"
    (findings,) = model.tool_results(second)
    assert findings.get("is_error") and "clamping hides the empty case" in model.result_text(findings)
    for review in platform.api.review_requests:  # never the fixer's reasoning
        assert ROOT_CAUSE not in json.dumps(review) and "Clamp the divisor" not in json.dumps(review)
    assert platform.world.show(FIX_BRANCH, RATINGS) == version(platform, "fix"), "the revised patch"
    body = platform.fix_request().body
    assert "**Review:** the reviewer approved after 2 round(s); 1 major." in body
    assert "**Confidence after review:** 0.85 (capped from 0.90 by the open issues)" in body
    assert "callers may expect None" in body
    # the reviewer's words are untrusted: no mention, no HTML (a word joiner after `@` and `<`)
    assert "@octocat" not in body and "<img" not in body
    assert "@\u2060octocat <\u2060img" in body


def test_review_model_from_the_trusted_config_picks_the_reviewer(platform: Platform) -> None:
    push_file(platform.repo, "main", ".ci-agent.yml", "review:\n  model: claude-cheap-reviewer\n")
    answer(platform, "broken", "fix")
    job = platform.job(platform.ci("main"))
    assert job.exit_code == 0, str(job)
    (review,) = platform.api.review_requests
    assert review["model"] == "claude-cheap-reviewer"
    assert platform.api.message_requests[0]["model"] != review["model"], "the fixer keeps its model"
    assert review["tool_choice"] == {"type": "tool", "name": "submit_review"}


def test_review_off_makes_no_review_call(platform: Platform) -> None:
    push_file(platform.repo, "main", ".ci-agent.yml", "review:\n  enabled: false\n")
    answer(platform, "broken", "fix")
    job = platform.job(platform.ci("main"))
    assert job.exit_code == 0, str(job)
    assert platform.api.review_requests == [] and "**Review:**" not in platform.fix_request().body
