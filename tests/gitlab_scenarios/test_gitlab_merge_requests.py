"""Merge request pipelines of the project's own branches (`CI_PIPELINE_SOURCE=merge_request_event`:
no `CI_COMMIT_BRANCH`, the branch is `CI_MERGE_REQUEST_SOURCE_BRANCH_NAME`), and a dry run."""

from __future__ import annotations

from tests.gitlab_scenarios.harness import World
from tests.gitlab_scenarios.steps import (
    RATINGS,
    answer,
    assert_dotenv,
    model_calls,
    status_notes,
    the_status_note,
    version,
)


def test_a_merge_request_pipeline_gets_a_fix_mr_against_its_source_branch(world: World) -> None:
    world.repo.git("push", "-q", "origin", "main:refs/heads/feature/stars")
    source = world.open_mr("feature/stars", "main", "Stars")
    red = world.pipeline("feature/stars", source="merge_request_event", mr_iid=source)
    answer(world, "broken", "fix")

    run = world.job(red)

    assert "CI_COMMIT_BRANCH" not in run.env and run.env["CI_MERGE_REQUEST_IID"] == str(source)
    assert run.exit_code == 0, str(run)
    (mr,) = world.mrs_from("ci-agent/fix/feature/stars")
    assert mr["target_branch"] == "feature/stars" and mr["iid"] != source
    assert_dotenv(run, "committed", branch="ci-agent/fix/feature/stars", mr_iid=str(mr["iid"]))
    assert world.show("ci-agent/fix/feature/stars", RATINGS) == version(world, "fix")
    the_status_note(world, mr["iid"])
    the_status_note(world, source)  # the person's merge request hears of the fix too
    assert world.gitlab.merge_requests[source]["labels"] == [], "the person's MR is not labelled as ours"
    assert world.origin_tip("feature/stars") == red.sha, "the person's branch is never pushed to"


def test_a_dry_run_pushes_and_posts_nothing(world: World) -> None:
    world.include["dry_run"] = True
    red = world.pipeline("main")

    run = world.job(red)

    assert run.env["CI_AGENT_INPUT_DRY_RUN"] == "true", "the include passes the boolean input as text"
    assert run.exit_code == 0, str(run)
    assert model_calls(world) == 0
    assert world.origin_branches() == ["main"] and world.gitlab.merge_requests == {}
    assert [r for r in world.gitlab.requests if r.method != "GET"] == []
    assert "test_no_ratings_yet" in run.stdout + run.stderr + run.summary, "the request it would send"
    assert status_notes(world, 1) == []
