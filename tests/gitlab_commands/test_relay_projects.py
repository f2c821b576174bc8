"""`ci-agent serve --project` is the project the pipelines are created in (issue 12): the relay
asks GitLab for the id and path of each `--project` once at startup and creates pipelines only
for those ids. A delivery whose project id and path are not that pair (the allowed path with
another id, another id, the allowed id with another path, ids that disagree inside the payload)
is answered 200 `{"ignored": ...}` with one log line, and no request ever reaches another
project. A real `ci-agent serve` process in front of the GitLab fake (one project: acme/shop, 42)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from tests.gitlab_commands.harness import CommandWorld, RelayProcess, note_hook
from tests.gitlab_scenarios.harness import BOT_TOKEN

SERVED = "a project whose id and path are not the pair GitLab gave for the served project"


def _other_project_requests(world: CommandWorld) -> list[str]:
    ours = (f"/api/v4/projects/{world.gitlab.project_id}", f"/api/v4/projects/{world.gitlab.project_path}")
    return [f"{r.method} {r.path}" for r in world.gitlab.requests
            if r.path.startswith("/api/v4/projects/") and not r.path.startswith(ours)]


def _forged(hook: dict[str, Any], *, project_id: int | None = None, path: str | None = None,
            top_id: int | None = None) -> dict[str, Any]:
    project = dict(hook["project"])
    attributes = dict(hook["object_attributes"])
    request = dict(hook["merge_request"])
    if project_id is not None:
        project["id"] = attributes["project_id"] = request["target_project_id"] = project_id
        hook = {**hook, "project_id": project_id}
    if path is not None:
        project["path_with_namespace"] = path
    if top_id is not None:
        hook = {**hook, "project_id": top_id}
    return {**hook, "project": project, "object_attributes": attributes, "merge_request": request}


@pytest.mark.parametrize(("forge", "why"), [
    ({"project_id": 99}, SERVED),  # the allowed path, another project's id
    ({"project_id": 99, "path": "evil/other"}, "a project that is not served here"),
    ({"path": "evil/other"}, SERVED),  # the allowed id under another path
    ({"top_id": 99}, "a comment whose project ids disagree"),
], ids=["allowed-path-other-id", "other-project", "allowed-id-other-path", "ids-disagree"])
def test_a_payload_naming_another_project_id_starts_nothing(world: CommandWorld, forge: dict[str, Any],
                                                            why: str) -> None:
    iid = world.feature_mr()
    note = world.say(iid, "/ci-agent fix")
    hook = _forged(note_hook(world.gitlab, iid, note), **forge)

    with RelayProcess(world.gitlab) as relay:
        answer = relay.deliver(hook)
        assert relay.deliver(note_hook(world.gitlab, iid, note))[0] == 202  # the real one still works
        relay.started()

    assert answer == (200, {"ignored": why})
    assert len(world.command_pipelines()) == 1
    assert _other_project_requests(world) == [], "a request reached a project that is not served"
    said = [line for line in relay.lines if why in line]
    assert len(said) == 1 and "200" in said[0], relay.lines


def test_project_given_by_id_is_resolved_to_its_path(world: CommandWorld) -> None:
    iid = world.feature_mr()
    note = world.say(iid, "/ci-agent status")
    later = world.say(iid, "/ci-agent status")
    before = len(world.gitlab.requests)

    with RelayProcess(world.gitlab, projects=[str(world.gitlab.project_id)]) as relay:
        assert f"for {world.gitlab.project_path} (id {world.gitlab.project_id})" in relay.lines[0]
        resolved = [r.path for r in world.gitlab.requests[before:]]
        assert resolved == [f"/api/v4/projects/{world.gitlab.project_id}"], "resolved once, before listening"
        assert relay.deliver(note_hook(world.gitlab, iid, note))[0] == 202
        relay.started()
        assert relay.deliver(_forged(note_hook(world.gitlab, iid, later), path="evil/other")) == \
            (200, {"ignored": SERVED})

    assert len(world.command_pipelines()) == 1


def test_a_project_the_token_cannot_see_stops_the_relay_at_startup(world: CommandWorld) -> None:
    env = {"PATH": "/usr/bin:/bin", "CI_AGENT_WEBHOOK_SECRET": "relay-webhook-secret-0123456789abcdef",
           "CI_AGENT_GITLAB_TOKEN": BOT_TOKEN, "CI_AGENT_GITLAB_THROTTLE": "0"}
    done = subprocess.run([sys.executable, "-m", "ci_agent", "serve", "--port", "0", "--gitlab-url",
                           world.gitlab.url, "--project", "acme/shop", "--project", "nobody/else"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--project 'nobody/else'" in done.stderr and "Traceback" not in done.stderr
    assert "listening" not in done.stderr
