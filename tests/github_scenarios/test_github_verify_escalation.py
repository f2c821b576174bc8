"""Escalation inside one job (issue 13 point 3): with the `verify` input every attempt is checked in
the job, so when all three fail nothing is ever pushed and no fix pull request exists. The
escalation must still happen exactly once, where a person looks: the failing branch's own pull
request (comment + `ci-agent:escalated` label), or, with no pull request at all, a comment on the
failing commit. The `tokens` output is the real sum of the three model requests, and a later run
asks the model nothing."""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from tests.fakes.github_fake import forbidden
from tests.github_scenarios.harness import USER_TOKEN, World, open_person_pr, same_repo_pr
from tests.github_scenarios.steps import (
    WRONG_SUMMARIES,
    answer,
    assert_outputs,
    model_calls,
    status_comments,
)
from tests.platform_scenarios.steps import WRONG_ORDER
from tests.scenarios import model_scripts as model
from tests.toolchain import PYTEST

# Every scripted answer reports the same usage (tests/scenarios/model_scripts.USAGE).
TOKENS_PER_CALL = sum(model.USAGE.values())
# The failed run's JUnit artifact is not read (see test_verify_input_checks_each_attempt_...).
LOG_ONLY = {"test_results": "**/*.trx"}


def _three_wrong_answers(world: World) -> None:
    world.inputs.update(github_token=USER_TOKEN, verify=PYTEST)
    for name in WRONG_ORDER:  # each is rolled back after its verify, so each starts from "broken"
        answer(world, "broken", name, summary=WRONG_SUMMARIES[name])


def _assert_escalation_text(body: str, tokens: int, source: str) -> None:
    assert f"escalated after 3 failed attempts to fix `{source}`" in body, body
    assert "nothing was pushed" in body
    for number, name in enumerate(WRONG_ORDER, 1):
        assert f"attempt {number}" in body and WRONG_SUMMARIES[name] in body, name
    assert "test_no_ratings_yet" in body, "what still fails"
    assert f"Tokens used by these attempts: {tokens}." in body


def test_no_pull_request_anywhere_escalates_once_on_the_failing_commit(world: World) -> None:
    _three_wrong_answers(world)
    ci = world.ci("main")

    run = world.after_ci(ci, inputs=LOG_ONLY)

    assert run.exit_code == 3, str(run)
    assert model_calls(world) == 3
    assert_outputs(run, "escalated", pr_number="", pr_url="", tokens=str(3 * TOKENS_PER_CALL))
    assert world.pulls_from("ci-agent/fix/main") == [] and world.github.pulls == {}
    assert world.origin_tip("ci-agent/fix/main") is None, "nothing was pushed"
    (comment,) = world.github.commit_comments.values()
    assert comment["sha"] == ci.sha and comment["user"] == "octocat"
    _assert_escalation_text(comment["body"], 3 * TOKENS_PER_CALL, "main")
    marker = parse_marker(comment["body"])
    assert marker is not None and marker["escalation_posted"] is True and len(marker["tried"]) == 3
    assert f"comment on commit {ci.sha[:12]}" in run.summary, run.summary
    assert "escalated" in run.summary

    rerun = world.after_ci(world.rerun(ci), inputs=LOG_ONLY)  # "Re-run failed jobs"

    assert rerun.exit_code == 0, str(rerun)
    assert_outputs(rerun, "skipped")
    assert model_calls(world) == 3, "a rerun asks nobody"

    again = world.after_ci(world.ci("main"), inputs=LOG_ONLY)  # a new run of the same commit

    assert again.exit_code == 3, str(again)
    assert_outputs(again, "escalated", tokens="0")
    assert model_calls(world) == 3, "the budget is checked before any model call"
    assert len(world.github.commit_comments) == 1, "escalated exactly once"
    world.human_commit("main")  # a person's new commit (still red): a new count on it
    world.api.reply(model.give_up("Not enough to go on."))

    fresh = world.after_ci(world.ci("main"), inputs=LOG_ONLY)

    assert fresh.exit_code == 4, str(fresh)
    assert model_calls(world) == 4, "the new commit carries no escalation record"


def test_the_failing_branchs_pull_request_gets_the_escalation_and_the_label(world: World) -> None:
    _three_wrong_answers(world)
    open_person_pr(world)
    ci = world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                  event="pull_request")

    run = world.after_ci(ci, inputs=LOG_ONLY)

    assert run.exit_code == 3, str(run)
    assert_outputs(run, "escalated", pr_number="", tokens=str(3 * TOKENS_PER_CALL))
    assert world.pulls_from("ci-agent/fix/feature/stars") == []
    assert world.github.pulls[1]["labels"] == ["ci-agent:escalated"]
    (escalation,) = [b for b in world.created_comments(1) if parse_marker(b) is None]
    _assert_escalation_text(escalation, 3 * TOKENS_PER_CALL, "feature/stars")
    (status,) = status_comments(world, 1)
    assert "escalated" in status["body"]
    assert world.github.commit_comments == {}, "the pull request is where people look"
    assert "see #1" in run.summary, run.summary

    again = world.after_ci(world.ci("feature/stars", pull_requests=[same_repo_pr(world, 1, "feature/stars")],
                                    event="pull_request"), inputs=LOG_ONLY)

    assert again.exit_code == 3, str(again)
    assert model_calls(world) == 3, "the source pull request's marker holds the three failures"
    assert len([b for b in world.created_comments(1) if parse_marker(b) is None]) == 1
    assert world.github.pulls[1]["labels"] == ["ci-agent:escalated"]


def test_an_inline_push_step_finds_the_branchs_pull_request_itself(world: World) -> None:
    """The inline step of a `push` run has no pull request in its event: the branch's open one is
    looked up, so the escalation still lands there."""
    _three_wrong_answers(world)
    world.repo.git("push", "-q", "origin", "main:refs/heads/feature/stars")
    number = world.github.add_pull("feature/stars")

    run = world.inline("feature/stars", inputs=LOG_ONLY)

    assert run.exit_code == 3, str(run)
    assert_outputs(run, "escalated", tokens=str(3 * TOKENS_PER_CALL))
    assert world.github.pulls[number]["labels"] == ["ci-agent:escalated"]
    (escalation,) = [b for b in world.created_comments(number) if parse_marker(b) is None]
    _assert_escalation_text(escalation, 3 * TOKENS_PER_CALL, "feature/stars")


def test_a_token_that_may_not_comment_on_commits_still_escalates(world: World) -> None:
    """GitHub refuses the commit comment (a token without `contents: write`): the job still ends
    escalated (exit 3, the real tokens) and its summary says the comment could not be written."""
    _three_wrong_answers(world)
    world.github.inject(forbidden("contents=write"), path=r"/repos/octo/app/commits/[0-9a-f]+/comments",
                        method="POST")

    run = world.after_ci(world.ci("main"), inputs=LOG_ONLY)

    assert run.exit_code == 3, str(run)
    assert_outputs(run, "escalated", tokens=str(3 * TOKENS_PER_CALL))
    assert world.github.commit_comments == {}
    assert "could not be written" in run.summary and "contents" in run.summary, run.summary
