"""`GitHubForge.latest_completed_run`: what GitHub lists for a branch that is not the branch's own
CI (issue 16). The REST shapes are the fake's (`GET /actions/runs`, newest first)."""

from __future__ import annotations

from typing import Any

from ci_agent.platforms.github.forge_latest import newest_run
from tests.fakes.github_fake import GitHubFake
from tests.forge.forges import github_forge as make


def test_a_forks_pull_request_from_its_main_is_not_main(fake: GitHubFake) -> None:
    ours = fake.add_run(1, [], branch="main", conclusion="failure", created_at="2026-01-01T01:00:00Z")
    fake.add_run(2, [], branch="main", conclusion="success", event="pull_request",
                 head_repo="someone/app", created_at="2026-01-01T02:00:00Z")
    fake.add_run(3, [], branch="main", conclusion="success", event="pull_request",
                 created_at="2026-01-01T03:00:00Z")  # a merge commit's test, not the branch's
    latest = make(fake).latest_completed_run("main")
    assert ours == [] and latest is not None and (latest.run_id, latest.red) == (1, True)
    assert latest.url.endswith("/actions/runs/1")
    (request,) = fake.requests_to("GET", r".*/actions/runs")
    assert (request.query["branch"], request.query["status"]) == ("main", "completed")


def test_a_workflow_is_matched_by_id_file_path_or_name(fake: GitHubFake) -> None:
    fake.add_run(1, [], branch="main", conclusion="failure", workflow="test.yml",
                 created_at="2026-01-01T01:00:00Z")
    fake.add_run(2, [], branch="main", conclusion="success", workflow="lint.yml",
                 created_at="2026-01-01T02:00:00Z")
    forge = make(fake)
    for name in ("test.yml", ".github/workflows/test.yml", "TEST"):
        found = forge.latest_completed_run("main", name)
        assert found is not None and found.run_id == 1, name
    by_id = newest_run([_run(1, workflow_id=77), _run(2, workflow_id=78, created="2026-01-02")], "main", "77")
    assert by_id is not None and by_id.run_id == 1


def _run(run_id: Any, **fields: Any) -> dict[str, Any]:
    run = {"id": run_id, "head_branch": "main", "status": "completed", "conclusion": "failure",
           "head_sha": "a" * 40, "event": "push", "created_at": fields.pop("created", "2026-01-01")}
    return {**run, **fields}


def test_malformed_runs_are_left_out() -> None:
    hostile: list[Any] = [None, "run", [], {"id": "7"}, {"id": True, "head_branch": "main"},
                          _run(3, status="in_progress"), _run(4, head_branch="mainline"),
                          _run(5, head_sha=None, conclusion=None, created=None)]
    found = newest_run(hostile, "main")
    assert found is not None and (found.run_id, found.sha, found.conclusion, found.red) == (5, "", "", False)
    assert newest_run(hostile[:-1], "main") is None
