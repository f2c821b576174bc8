"""Escalation inside one job on GitLab (issue 13 point 3): with the include's `verify` input every
attempt is checked in the job; when all three fail nothing is pushed and no fix merge request
exists. The escalation still happens exactly once: on the failing branch's own merge request (note
+ `ci-agent:escalated` label), or on the failing commit when there is none; the dotenv's
`CI_AGENT_TOKENS` is the real sum, and a later job asks the model nothing."""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from tests.gitlab_scenarios.harness import BOT, World
from tests.gitlab_scenarios.steps import WRONG_ORDER, WRONG_SUMMARIES, answer, assert_dotenv, model_calls
from tests.scenarios import model_scripts as model
from tests.toolchain import PYTEST

TOKENS_PER_CALL = sum(model.USAGE.values())  # every scripted answer reports this usage


def _three_wrong_answers(world: World) -> None:
    # results from the trace only: the failed job's JUnit artifact must not pass for the verify's
    world.include.update(verify=PYTEST, test_results="**/*.trx")
    for name in WRONG_ORDER:  # each is rolled back after its verify, so each starts from "broken"
        answer(world, "broken", name, summary=WRONG_SUMMARIES[name])


def _assert_escalation_text(body: str, source: str) -> None:
    assert f"escalated after 3 failed attempts to fix `{source}`" in body, body
    assert "nothing was pushed" in body
    for number, name in enumerate(WRONG_ORDER, 1):
        assert f"attempt {number}" in body and WRONG_SUMMARIES[name] in body, name
    assert "test_no_ratings_yet" in body
    assert f"Tokens used by these attempts: {3 * TOKENS_PER_CALL}." in body


def test_no_merge_request_escalates_once_on_the_failing_commit(world: World) -> None:
    _three_wrong_answers(world)
    red = world.pipeline("main")

    run = world.job(red)

    assert run.exit_code == 3, str(run)
    assert model_calls(world) == 3
    assert_dotenv(run, "escalated", mr_iid="", tokens=str(3 * TOKENS_PER_CALL))
    assert world.gitlab.merge_requests == {} and world.origin_tip("ci-agent/fix/main") is None
    (comment,) = world.gitlab.commit_comments
    assert comment["sha"] == red.sha and comment["json"]["author"]["username"] == BOT
    _assert_escalation_text(comment["json"]["note"], "main")
    marker = parse_marker(comment["json"]["note"])
    assert marker is not None and marker["escalation_posted"] is True
    assert f"comment on commit {red.sha[:12]}" in run.summary, run.summary

    retried = world.job(red)  # "Retry" of the job: same pipeline, a new job id

    assert retried.exit_code == 0, str(retried)
    assert_dotenv(retried, "skipped")
    again = world.job(world.pipeline("main"))  # a new pipeline of the same commit

    assert again.exit_code == 3, str(again)
    assert model_calls(world) == 3, "the budget is checked before any model call"
    assert len(world.gitlab.commit_comments) == 1, "escalated exactly once"


def test_the_failing_branchs_merge_request_gets_the_escalation_and_the_label(world: World) -> None:
    _three_wrong_answers(world)
    world.repo.git("push", "-q", "origin", "main:refs/heads/feature/stars")
    iid = world.open_mr("feature/stars", "main", "Stars")
    red = world.pipeline("feature/stars", source="merge_request_event", mr_iid=iid)

    run = world.job(red)

    assert run.exit_code == 3, str(run)
    assert_dotenv(run, "escalated", mr_iid="", tokens=str(3 * TOKENS_PER_CALL))
    assert world.mrs_from("ci-agent/fix/feature/stars") == []
    assert world.gitlab.merge_requests[iid]["labels"] == ["ci-agent:escalated"]
    (escalation,) = [b for b in world.created_notes(iid) if parse_marker(b) is None]
    _assert_escalation_text(escalation, "feature/stars")
    assert world.gitlab.commit_comments == []

    again = world.job(world.pipeline("feature/stars", source="merge_request_event", mr_iid=iid))

    assert again.exit_code == 3, str(again)
    assert model_calls(world) == 3, "the merge request's marker holds the three failures"
    assert len([b for b in world.created_notes(iid) if parse_marker(b) is None]) == 1
