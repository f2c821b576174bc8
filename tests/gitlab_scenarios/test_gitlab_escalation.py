"""The three-failure budget on GitLab (DESIGN.md §4.3): the escalation note exactly once, the
`ci-agent:escalated` label, no fourth model call; a retried job (same pipeline id, new job id)
never counts a failure twice."""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from ci_agent.errors import ExitCode
from tests.fakes.anthropic_fake import Fault
from tests.gitlab_scenarios.harness import FIX_BRANCH, World
from tests.gitlab_scenarios.steps import (
    WRONG_ORDER,
    WRONG_SUMMARIES,
    answer,
    assert_dotenv,
    assert_fix_mr_outputs,
    fail_attempts,
    model_calls,
    status_notes,
    version,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, git


def test_three_failures_escalate_once_and_a_fourth_pipeline_asks_nobody(world: World) -> None:
    said = fail_attempts(world, 3)
    last = world.pipelines[-1]
    assert model_calls(world) == 3
    # attempts 1 and 2 left the same tests failing: the third prompt and status note say so
    assert "no progress" in model.first_user_text(world.api.message_requests[2]).lower()
    assert "no progress" in said[2].lower() and "no progress" not in said[1].lower()

    escalated = world.job(last)

    assert escalated.exit_code == 3, str(escalated)
    assert model_calls(world) == 3, "the budget is checked before any model call"
    mr = world.fix_mr()
    assert_dotenv(escalated, "escalated", branch=FIX_BRANCH, mr_iid=str(mr["iid"]))
    assert "ci-agent:escalated" in mr["labels"] and "ci-agent" in mr["labels"]
    # one escalation note besides the status note (which is edited, never re-posted)
    (escalation,) = [b for b in world.created_notes(mr["iid"]) if parse_marker(b) is None]
    assert "escalat" in escalation.lower()
    for number, name in enumerate(WRONG_ORDER, 1):  # it says what each attempt changed
        assert f"attempt {number}" in escalation and WRONG_SUMMARIES[name] in escalation, name
    assert "test_no_ratings_yet" in escalation, "and what still fails (after the last attempt)"
    posted = len(world.created_notes(mr["iid"]))

    retried = world.job(last)  # "Retry" of the job: same pipeline, a new job id

    assert retried.exit_code == 0, str(retried)
    assert_dotenv(retried, "skipped")

    again = world.job(world.pipeline(FIX_BRANCH))  # a new pipeline of the same commit, still red

    assert again.exit_code == 3, str(again)
    assert_dotenv(again, "escalated")
    assert model_calls(world) == 3, "a fourth attempt must not reach the model"
    assert len(world.created_notes(mr["iid"])) == posted, "escalation posted exactly once"
    assert len(status_notes(world, mr["iid"])) == 1
    assert world.fix_mr()["labels"].count("ci-agent:escalated") == 1


def test_a_retried_job_of_the_same_pipeline_does_not_count_twice(world: World) -> None:
    """Attempt 2 is pushed by the job of pipeline P; someone retries that job. The retry must
    not take P's failure for a new one: no model call, no push, and the next red pipeline gives
    attempt 3 (not an escalation)."""
    fail_attempts(world, 1)
    red = world.pipelines[-1]
    answer(world, "floor", "floor_float", summary=WRONG_SUMMARIES["floor_float"])
    second = world.job(red)
    assert_fix_mr_outputs(world, second, "committed", attempt=2)
    tip = world.origin_tip(FIX_BRANCH)

    retried = world.job(red)

    assert retried.exit_code == 0, str(retried)
    assert retried.outcome == "skipped", str(retried)
    assert model_calls(world) == 2 and world.origin_tip(FIX_BRANCH) == tip
    answer(world, "floor_float", "fix")

    third = world.job(world.pipeline(FIX_BRANCH))

    assert third.exit_code == 0, str(third)
    assert_fix_mr_outputs(world, third, "committed", attempt=3)
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")
    assert len(status_notes(world, world.fix_mr()["iid"])) == 1


def test_a_retry_after_a_model_outage_counts_the_failure_once(world: World) -> None:
    fail_attempts(world, 1)
    red = world.pipelines[-1]
    world.api.reply(Fault(401, "authentication_error", "invalid x-api-key"))

    died = world.job(red)

    assert died.exit_code == ExitCode.EXTERNAL_SERVICE, str(died)
    assert died.outcome == "error", "the dotenv report says the job failed"
    assert "Traceback" not in died.stderr
    tip = world.origin_tip(FIX_BRANCH)
    answer(world, "floor", "fix")

    retried = world.job(red)

    assert retried.exit_code == 0, str(retried)
    assert_fix_mr_outputs(world, retried, "committed", attempt=2)
    assert world.origin_tip(FIX_BRANCH) != tip
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")
    assert model_calls(world) == 3, "attempt 1, the refused call, attempt 2"


def test_a_person_s_commit_on_the_fix_branch_starts_a_new_count(world: World) -> None:
    """DESIGN §4.3: a human commit on the fix branch starts a new count, so three failed
    attempts followed by a person's (still red) commit are no escalation."""
    fail_attempts(world, 3)
    person = world.clone(FIX_BRANCH, "person")
    (person / "NOTES.md").write_text("Looking into the ratings with ci-agent.\n")
    git(person, "add", "NOTES.md")
    git(person, "commit", "-q", "-m", "notes")
    git(person, "push", "-q", "origin", f"HEAD:{FIX_BRANCH}")
    red = world.pipeline(FIX_BRANCH)
    assert red.status == "failed"
    answer(world, "none", "fix")

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    assert model_calls(world) == 4
    mr = world.fix_mr()
    assert "ci-agent:escalated" not in mr["labels"]
    assert [b for b in world.created_notes(mr["iid"]) if parse_marker(b) is None] == [], "no escalation"
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")
    assert world.show(FIX_BRANCH, "NOTES.md").startswith("Looking"), "the person's commit is kept"
