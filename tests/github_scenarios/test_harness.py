"""The scenario harness itself: the simulated CI run, the live branches, the payloads and the
`GITHUB_OUTPUT` reader behave like GitHub (checked through real PyGithub and our GitHubForge)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from ci_agent.platforms.github.forge import GitHubForge
from tests.github_scenarios.fake_site import workflow_run_event
from tests.github_scenarios.harness import ACTIONS_TOKEN, FIX_BRANCH, World, parse_github_output

# `required` of octokit/webhooks payload-schemas/api.github.com/common/workflow-run.schema.json
WORKFLOW_RUN_REQUIRED = {
    "artifacts_url", "cancel_url", "check_suite_url", "check_suite_id", "conclusion", "created_at",
    "event", "head_branch", "head_commit", "head_repository", "head_sha", "html_url", "id", "jobs_url",
    "logs_url", "node_id", "name", "pull_requests", "repository", "rerun_url", "run_number", "status",
    "updated_at", "url", "workflow_id", "workflow_url", "run_attempt", "previous_attempt_url", "actor",
    "triggering_actor", "path", "display_title"}


def forge(world: World) -> GitHubForge:
    return GitHubForge("octo/app", ACTIONS_TOKEN, base_url=world.github.base_url, throttle=False,
                       sleep=lambda s: None)


def test_a_simulated_ci_run_is_what_the_api_serves(world: World, tmp_path: Path) -> None:
    ci = world.ci("main")
    assert ci.conclusion == "failure" and "test_no_ratings_yet" in ci.log
    assert ci.sha == world.origin_tip("main")
    (job,) = forge(world).failed_jobs(ci.id)
    log = forge(world).download_job_log(job.id, tmp_path / "logs").text_path.read_text()
    assert "ZeroDivisionError" in log
    assert log.startswith("2026-12-02T16:00:00.0000000Z ##[group]Run python -m pytest -q\n")
    (artifact,) = forge(world).download_artifacts(ci.id, tmp_path / "artifacts")
    assert artifact.path is not None
    junit = (artifact.path / "junit.xml").read_text()
    assert "test_no_ratings_yet" in junit and "<failure" in junit
    run = world.github.run_json(ci.id)
    assert (run["head_branch"], run["head_sha"], run["conclusion"]) == ("main", ci.sha, "failure")


def test_payload_has_the_documented_keys(world: World) -> None:
    ci = world.ci("main")
    payload = workflow_run_event("octo/app", world.github.run_json(ci.id), head_repository="evil/app")
    assert set(payload["workflow_run"]) >= WORKFLOW_RUN_REQUIRED
    assert payload["action"] == "completed"
    assert payload["workflow_run"]["head_repository"]["full_name"] == "evil/app"
    assert payload["workflow_run"]["repository"]["full_name"] == "octo/app"


def test_branches_are_the_origins(world: World) -> None:
    assert "main" in world.github.branches and FIX_BRANCH not in world.github.branches
    world.repo.git("push", "-q", "origin", f"main:refs/heads/{FIX_BRANCH}")
    pr = forge(world).open_change_request(FIX_BRANCH, "main", "Fix", "body")
    assert world.fix_pull()["number"] == pr.number and pr.draft
    assert forge(world).protected("main") and not forge(world).protected(FIX_BRANCH)


def test_a_human_commit_lands_on_origin(world: World) -> None:
    before = world.origin_tip("main")
    after = world.human_commit("main")
    assert world.origin_tip("main") == after != before


def test_github_output_reader() -> None:
    text = "outcome=fixed\nsummary<<ghadelimiter_1\nline one\nline=two\nghadelimiter_1\nattempt=2\n"
    assert parse_github_output(text) == {"outcome": "fixed", "summary": "line one\nline=two", "attempt": "2"}


def test_zip_artifact_is_a_real_zip(world: World, tmp_path: Path) -> None:
    ci = world.ci("main")
    (art,) = world.github.runs[ci.id].artifacts
    data = world.github.zips[art["id"]]
    (tmp_path / "a.zip").write_bytes(data)
    assert zipfile.ZipFile(tmp_path / "a.zip").namelist() == ["junit.xml"]
