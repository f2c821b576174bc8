"""`ci-agent fix --gitlab` across simulated pipelines: fixed on attempt 1, then a green pipeline
on the fix branch runs the success job, which marks the draft merge request ready. (Fixed on
attempt 2, the same on GitHub: tests/platform_scenarios/test_fix_cycle.py.)

Every step is what GitLab would do: a pipeline runs the sample's real pytest on a branch of the
bare origin and is recorded in the fake; the job the include adds to it (by its rules) then starts
from a fresh checkout of the pipeline's commit. Nothing carries over but git and the fake's state.
"""

from __future__ import annotations

from tests.github_scenarios.harness import ROOT_CAUSE
from tests.gitlab_scenarios.harness import BOT, FIX_BRANCH, World
from tests.gitlab_scenarios.steps import (
    RATINGS,
    answer,
    assert_dotenv,
    assert_fix_mr_outputs,
    model_calls,
    the_status_note,
    version,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

MIB = 1024 * 1024


def test_fixed_on_attempt_1_then_a_green_pipeline_makes_it_ready(world: World) -> None:
    red = world.pipeline("main")
    assert red.status == "failed"
    answer(world, "broken", "fix")
    main_tip = world.origin_tip("main")

    first = world.job(red)

    assert first.name == "ci-agent-fix" and first.env["CI_AGENT_TRIGGER"] == "on_failure"
    assert first.exit_code == 0, str(first)
    assert model_calls(world) == 1
    report = model.first_user_text(world.api.message_requests[0])
    assert "test_no_ratings_yet" in report and "ZeroDivisionError" in report
    assert "junit.xml" in report, "the test job's artifacts (JUnit XML) were fetched and read"
    # the fix branch: one commit on the failing commit, holding exactly the fix, with our trailers
    assert main_tip is not None and world.origin_tip("main") == main_tip, "main is never pushed to"
    (tip,) = world.commits(main_tip, FIX_BRANCH)
    assert world.show(FIX_BRANCH, RATINGS) == version(world, "fix")
    assert world.trailers(tip).get("CI-Agent-Attempt") == ["1"]
    # the draft merge request against the failing branch, labelled, explaining the fix
    mr = assert_fix_mr_outputs(world, first, "committed", attempt=1)
    assert mr["draft"] is True and mr["title"].startswith("Draft: ")
    assert mr["target_branch"] == "main" and mr["state"] == "opened"
    assert "ci-agent" in mr["labels"]
    body = mr["description"]
    assert ROOT_CAUSE in body and RATINGS in body
    assert "test_no_ratings_yet" in body, "the failure"
    assert "+    if not ratings:" in body, "the patch"
    spent = sum(model.USAGE.values())  # one model call: input, output, cache write and read
    assert str(spent) in body and first.dotenv["CI_AGENT_TOKENS"] == str(spent), "token usage"
    status = the_status_note(world, mr["iid"])
    assert status["author"]["username"] == BOT, "written by the access token's bot user"
    assert "attempt 1" in status["body"].lower()
    assert world.gitlab.created_pipelines == [], "a push with the access token starts CI by itself"
    # the summary artifact
    assert RATINGS in first.summary and "test_no_ratings_yet" in first.summary
    assert len(first.summary.encode()) <= MIB

    green = world.pipeline(FIX_BRANCH)
    assert green.status == "success"
    second = world.job(green)

    assert second.name == "ci-agent-success" and second.env["CI_AGENT_TRIGGER"] == "on_success"
    assert second.exit_code == 0, str(second)
    assert model_calls(world) == 1, "a green pipeline asks the model nothing"
    assert_dotenv(second, "fixed", branch=FIX_BRANCH, mr_iid=str(mr["iid"]))
    ready = world.fix_mr()
    assert ready["draft"] is False and not ready["title"].lower().startswith("draft")
    assert ready["title"] == mr["title"].removeprefix("Draft: "), "only the prefix is dropped"
    edited = the_status_note(world, mr["iid"])
    assert edited["id"] == status["id"] and edited["body"] != status["body"], "edited in place"
    assert "green" in edited["body"].lower() or "passed" in edited["body"].lower()
    assert len(world.created_notes(mr["iid"])) == 1
    assert world.origin_tip(FIX_BRANCH) == tip, "nothing pushed on green"


def test_the_include_adds_a_ci_agent_job_only_where_its_rules_say(world: World) -> None:
    """A green pipeline of a branch that is no fix branch has no ci-agent job; a red one of a
    `ci-agent/` branch that is no fix branch has none either (no fix of a fix)."""
    for branch in ("feature/guard", "ci-agent/experiment"):
        person = world.clone("main", "person")
        git(person, "checkout", "-q", "-b", branch)
        if branch == "feature/guard":
            (person / RATINGS).write_text(version(world, "fix"))
            git(person, "commit", "-q", "-am", "guard empty ratings")
        git(person, "push", "-q", "origin", branch)
    green = world.pipeline("feature/guard")
    red = world.pipeline("ci-agent/experiment")
    assert (green.status, red.status) == ("success", "failed")

    assert world.after(green) is None and world.after(red) is None
    assert model_calls(world) == 0 and world.gitlab.requests == []
