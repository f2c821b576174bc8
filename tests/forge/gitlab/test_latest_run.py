"""`GitLabForge.latest_completed_run`: the newest finished pipeline of a ref, the branch's own CI
before pipelines made through the API (issue 16)."""

from __future__ import annotations

from typing import Any

from ci_agent.platforms.gitlab.forge_latest import newest_pipeline
from tests.fakes.gitlab_fake import GitLabFake
from tests.forge.forges import gitlab_forge as make

SHA = "a" * 40


def test_the_finished_pipeline_of_the_ref_newest_first(fake: GitLabFake) -> None:
    red = fake.add_pipeline("main", SHA, "failed", [])
    fake.add_pipeline("main", SHA, "running", [])
    fake.add_pipeline("feature", SHA, "success", [])
    latest = make(fake).latest_completed_run("main", "ci.yml")
    assert latest is not None and (latest.run_id, latest.sha, latest.red) == (red, SHA, True)
    assert latest.url.endswith(f"/-/pipelines/{red}")
    (request,) = fake.requests_to("GET", r".*/pipelines")
    query = request.query
    assert (query["ref"], query["scope"], query["order_by"]) == ("main", "finished", "id")


def test_the_branchs_own_ci_before_an_api_pipeline(fake: GitLabFake) -> None:
    red = fake.add_pipeline("main", SHA, "failed", [], source="push")
    fake.add_pipeline("main", SHA, "success", [], source="api")  # e.g. ci-agent's command pipeline
    latest = make(fake).latest_completed_run("main")
    assert latest is not None and latest.run_id == red


def test_only_api_pipelines_still_count(fake: GitLabFake) -> None:
    only = fake.add_pipeline("main", SHA, "success", [], source="api")
    latest = make(fake).latest_completed_run("main")
    assert latest is not None and (latest.run_id, latest.green) == (only, True)


def test_malformed_pipelines_are_left_out() -> None:
    good: dict[str, Any] = {"id": 9, "ref": "main", "status": "failed", "sha": None, "source": "push"}
    hostile: list[Any] = [None, [], {"id": "9", "ref": "main", "status": "failed"},
                          {"id": False, "ref": "main", "status": "failed"},
                          {"id": 10, "ref": "main", "status": "running"},
                          {"id": 11, "ref": "x", "status": "failed"}]
    assert newest_pipeline(hostile, "main") is None
    found = newest_pipeline([*hostile, good], "main")
    assert found is not None and (found.run_id, found.sha, found.red) == (9, "", True)
