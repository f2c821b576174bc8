"""The adversarial reviewer in `ci-agent fix --local` (issue 16): real pytest sample, real SDK,
the strict fake answering the reviewer from its own queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.anthropic_review import issue, review_reply
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import (
    FIX_BRANCH,
    ROOT_CAUSE,
    assert_clean_finish,
    assert_fixed_on_branch,
    attempt_refs,
    fix,
    trailers,
    user_repo,
)
from tests.scenarios.sample_repos import PYTHON, git, working_copy

REASONING = "FIXER-REASONING-7f3a"  # in the fixer's summary, root cause and assumptions only


def test_a_revise_goes_back_to_the_fixer_in_the_same_attempt_and_the_revised_patch_is_verified(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    patch = repo.diff(PYTHON.fix)
    api.reply(model.submit_patch(patch, summary=f"Guard the division {REASONING}", root_cause=ROOT_CAUSE,
                                 confidence=0.9, assumptions=[f"unverified: {REASONING}"]),
              model.submit_patch(patch, summary="Guard the division, tested", root_cause=ROOT_CAUSE,
                                 confidence=0.99))
    api.review(review_reply("revise", issue("major", "root_cause", "say why an empty list is valid",
                                            "shop/ratings.py", 3)),
               review_reply("approve", issue("minor", "style", "name the constant")))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    _, second = api.message_requests
    assert not model.is_new_conversation(second), "the revision is asked in the fixer's conversation"
    (answer,) = model.tool_results(second)
    assert answer.get("is_error") and answer["tool_use_id"] == model.tool_calls(second)[-1]["id"]
    told = model.result_text(answer)
    assert "review 1 of 2" in told and "[major, root_cause] shop/ratings.py:3: say why an empty list" in told
    assert '<untrusted-data source="reviewer findings">' in told
    reviews = api.review_requests
    assert len(reviews) == 2
    for request in reviews:  # the reviewer sees the failure and the patch, never the fixer's reasoning
        body = json.dumps(request)
        assert REASONING not in body and ROOT_CAUSE not in body and "Guard the division" not in body
        assert "ZeroDivisionError" in body and "shop/ratings.py" in body
    assert [e["ok"] for e in run.of("verified")] == [True, True], "the revised patch is verified again"
    assert [e["verdict"] for e in run.of("reviewed")] == ["revise", "approve"]
    tip = assert_fixed_on_branch(repo, attempt=1)
    assert trailers(repo, tip)["CI-Agent-Attempt"] == ["1"]
    assert attempt_refs(repo) == [], "a revision is not a failed attempt"
    assert "**Review:** the reviewer approved after 2 round(s); 1 minor." in run.summary
    assert "**Confidence after review:** 0.95 (capped from 0.99 by the open issues)" in run.summary
    assert "name the constant" in run.summary
    assert_clean_finish(repo, before)


def test_a_reject_is_a_failed_attempt_and_the_next_attempt_is_told_why(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    patch = repo.diff(PYTHON.fix)
    api.reply(model.submit_patch(patch, summary="Skip the failing test", root_cause=ROOT_CAUSE),
              model.submit_patch(patch, summary="Guard the division", root_cause=ROOT_CAUSE))
    api.review(review_reply("reject", issue("critical", "test_weakened", "the test is skipped"),
                            summary="It skips the test instead of fixing the code."))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    _, second = api.message_requests
    assert model.is_new_conversation(second), "a rejected patch ends its attempt"
    retry = model.first_user_text(second)
    assert "rejected by the reviewer: It skips the test instead of fixing the code." in retry
    assert_fixed_on_branch(repo, attempt=2)
    (record,) = [ref for ref in attempt_refs(repo) if ref.endswith(FIX_BRANCH)]
    failed = trailers(repo, record)
    assert failed["CI-Agent-Attempt"] == ["1"] and failed["CI-Agent-Result"] == ["failed"], failed
    assert [e["verdict"] for e in run.of("reviewed")] == ["reject", "approve"]
    assert "**Rejected by the reviewer:** the patch was rolled back" in run.summary


def test_a_hostile_review_is_no_verdict_the_patch_goes_on_capped(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    api.reply(model.submit_patch(repo.diff(PYTHON.fix), summary="Guard the division", root_cause=ROOT_CAUSE,
                                 confidence=0.95))
    api.review(review_reply(raw_input={"verdict": "approve!!", "issues": [{"x": 1}] * 5000,
                                       "summary": ["<img src=x>"]}))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    assert_fixed_on_branch(repo, attempt=1)
    assert "**Review:** the reviewer gave no verdict (the review named no known verdict)" in run.summary
    assert "**Confidence after review:** 0.30 (capped from 0.95" in run.summary


def test_review_off_makes_no_review_call_and_a_dry_run_says_one_would_follow(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    dry = fix(repo, capfd, "--dry-run", label="dry")
    assert dry.exit_code == 0 and api.all_message_requests == []
    (shown,) = dry.of("dry_run")
    assert shown["review"].startswith("An adversarial review by claude-")
    config = repo.path / ".ci-agent.yml"
    config.write_text("review:\n  enabled: false\n")
    git(repo.path, "add", ".ci-agent.yml")
    git(repo.path, "commit", "-q", "-m", "review off")
    api.reply(model.submit_patch(repo.diff(PYTHON.fix), summary="Guard the division", root_cause=ROOT_CAUSE))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    assert api.review_requests == [] and run.of("reviewed") == [] and "**Review:**" not in run.summary


def test_after_the_last_round_a_revise_ships_with_its_issues_and_a_capped_confidence(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    patch = repo.diff(PYTHON.fix)
    api.reply(model.submit_patch(patch, summary="Guard the division", root_cause=ROOT_CAUSE, confidence=0.9),
              model.submit_patch(patch, summary="Guard the division again", root_cause=ROOT_CAUSE,
                                 confidence=0.9))
    still = issue("critical", "root_cause", "still treats the symptom")
    api.review(review_reply("revise", still), review_reply("revise", still))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    assert len(api.message_requests) == 2 and len(api.review_requests) == 2, "max_rounds: 2 reviews"
    assert_fixed_on_branch(repo, attempt=1)
    assert "**Review:** the reviewer asked for a revision after 2 round(s); 1 critical." in run.summary
    assert "**Confidence after review:** 0.30 (capped from 0.90 by the open issues)" in run.summary


def test_a_fixer_that_gives_up_after_a_revise_ends_the_run_without_a_patch(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    api.reply(model.submit_patch(repo.diff(PYTHON.fix), summary="Guard the division", root_cause=ROOT_CAUSE),
              model.give_up("The reviewer is right; the data model needs a decision."))
    api.review(review_reply("revise", issue("major", "behaviour_change", "changes the API")))

    run = fix(repo, capfd)

    assert run.exit_code == 4, str(run)
    assert run.of("gave_up")[0]["reason"].startswith("The reviewer is right")
    assert attempt_refs(repo) == [] and working_copy(repo.path) == before
