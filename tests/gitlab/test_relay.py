"""The webhook relay over real HTTP (port 0) in front of the GitLab fake: what GitLab's project
webhook sends (a Note Hook; payload shape from docs.gitlab.com "Webhook events" > Comment events,
`object_attributes.action` added by gitlab-org/gitlab!147856) and what the relay does
with it. No timed assertions: "answers before the pipeline exists" is proved by holding the
pipeline back until the answer has arrived."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ci_agent.cli.serve import gitlab_url, pipeline_starter, run_serve
from ci_agent.errors import UsageError
from ci_agent.relay import MR_VARIABLE, NOTE_VARIABLE, NoteCommand, Relay, SeenNotes, judge
from ci_agent.relay_http import MAX_BODY
from tests.fakes.gitlab_fake import GitLabFake

SECRET = "s3cret-webhook-token-0123456789"
TOKEN = "glpat-bot"
WAIT_S = 30  # a bound for a broken test, never a timing claim


def note_hook(body: str = "/ci-agent fix", *, note_id: int = 1244, iid: int = 7,
              action: str | None = "create", noteable: str = "MergeRequest", system: bool = False,
              username: str = "alice",
              project_id: int = 42, path: str = "acme/shop") -> dict[str, Any]:
    """A Note Hook as GitLab sends it for a merge request comment (trimmed to what matters)."""
    attributes: dict[str, Any] = {
        "id": note_id, "note": body, "noteable_type": noteable, "author_id": 1, "system": system,
        "created_at": "2026-01-01 10:00:00 UTC", "updated_at": "2026-01-01 10:00:00 UTC",
        "project_id": project_id, "noteable_id": 7000 + iid, "discussion_id": "a" * 40, "type": None,
        "url": f"https://gitlab.example.com/{path}/-/merge_requests/{iid}#note_{note_id}"}
    if action is not None:
        attributes["action"] = action
    payload: dict[str, Any] = {
        "object_kind": "note", "event_type": "note",
        "user": {"id": 1, "name": username.title(), "username": username, "avatar_url": None},
        "project_id": project_id,
        "project": {"id": project_id, "name": path.rsplit("/", 1)[-1], "path_with_namespace": path,
                    "web_url": f"https://gitlab.example.com/{path}", "default_branch": "main"},
        "object_attributes": attributes,
        "repository": {"name": path.rsplit("/", 1)[-1], "url": f"git@gitlab.example.com:{path}.git"}}
    if noteable == "MergeRequest":
        payload["merge_request"] = {"id": 7000 + iid, "iid": iid, "source_branch": "feature",
                                    "target_branch": "main", "source_project_id": project_id,
                                    "target_project_id": project_id, "state": "opened"}
    return payload


class Running:
    def __init__(self, relay: Relay, gate: threading.Event) -> None:
        self.relay, self.gate = relay, gate
        self.lines: list[str] = []
        self.done = threading.Semaphore(0)

    def post(self, payload: Any, *, token: str | None = SECRET, event: str = "Note Hook",
             raw: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        host, port = self.relay.address
        connection = http.client.HTTPConnection(host, port, timeout=WAIT_S)
        sent = {"Content-Type": "application/json", "X-Gitlab-Event": event, **(headers or {})}
        if token is not None:
            sent["X-Gitlab-Token"] = token
        data = raw if raw is not None else json.dumps(payload).encode()
        try:
            connection.request("POST", "/webhook", body=data, headers=sent)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            connection.close()


@pytest.fixture
def fake() -> Iterator[GitLabFake]:
    with GitLabFake() as server:
        yield server
    assert server.failures == []


@pytest.fixture
def running(fake: GitLabFake) -> Iterator[Running]:
    gate = threading.Event()
    gate.set()
    real = pipeline_starter(fake.url, TOKEN)
    holder: list[Running] = []

    def start(command: NoteCommand) -> int:
        gate.wait(WAIT_S)
        try:
            return int(real(command))
        finally:
            holder[0].done.release()
    relay = Relay(SECRET, start, port=0, log=lambda line: holder[0].lines.append(line))
    holder.append(Running(relay, gate))
    thread = threading.Thread(target=relay.serve_forever, daemon=True)
    thread.start()
    yield holder[0]
    relay.shutdown()
    thread.join(WAIT_S)
    for line in holder[0].lines:
        assert SECRET not in line and TOKEN not in line


def test_a_command_is_answered_202_before_the_pipeline_exists(running: Running, fake: GitLabFake) -> None:
    running.gate.clear()  # the pipeline cannot be created until the answer is in
    status, body = running.post(note_hook(note_id=1244, iid=7))
    assert (status, body) == (202, {"accepted": 1244})
    assert fake.created_pipelines == []
    running.gate.set()
    assert running.done.acquire(timeout=WAIT_S)
    assert fake.created_pipelines == [{"ref": "main", "variables": [
        {"key": MR_VARIABLE, "value": "7", "variable_type": "env_var"},
        {"key": NOTE_VARIABLE, "value": "1244", "variable_type": "env_var"}]}]
    assert any(re.search(r"pipeline \d+ started for acme/shop!7 note 1244 by alice", line)
               for line in running.lines)


def test_a_redelivery_starts_no_second_pipeline(running: Running, fake: GitLabFake) -> None:
    assert running.post(note_hook())[0] == 202
    assert running.post(note_hook()) == (200, {"ignored": "duplicate"})
    assert running.done.acquire(timeout=WAIT_S)
    assert running.post(note_hook()) == (200, {"ignored": "duplicate"})
    assert len(fake.created_pipelines) == 1


def test_a_note_from_gitlab_before_the_action_field_is_a_creation(running: Running, fake: GitLabFake) -> None:
    assert running.post(note_hook(action=None))[0] == 202
    assert running.done.acquire(timeout=WAIT_S)
    assert len(fake.created_pipelines) == 1


@pytest.mark.parametrize("token", [None, "", "wrong", SECRET + "x", SECRET[:-1]])
def test_a_wrong_or_missing_token_is_401(running: Running, fake: GitLabFake, token: str | None) -> None:
    status, _ = running.post(note_hook(), token=token)
    assert status == 401
    assert fake.created_pipelines == [] and fake.requests == []


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"\"text\"", b"", b"\xff\xfe"])
def test_a_body_that_is_no_json_object_is_400(running: Running, raw: bytes) -> None:
    assert running.post(None, raw=raw)[0] == 400


def test_a_body_over_1_mib_is_413_unread(running: Running) -> None:
    host, port = running.relay.address
    connection = http.client.HTTPConnection(host, port, timeout=WAIT_S)
    connection.putrequest("POST", "/")
    for key, value in (("X-Gitlab-Token", SECRET), ("X-Gitlab-Event", "Note Hook"),
                       ("Content-Length", str(MAX_BODY + 1))):
        connection.putheader(key, value)
    connection.endheaders(b"{}")  # the rest never comes: the relay must not wait for it
    response = connection.getresponse()
    assert response.status == 413
    connection.close()


@pytest.mark.parametrize(("payload", "event", "why"), [
    (note_hook(), "Push Hook", "not a comment event"),
    ({"object_kind": "push"}, "Note Hook", "not a comment event"),
    (note_hook(system=True), "Note Hook", "a system note"),
    (note_hook(action="update"), "Note Hook", "an edited comment never runs a command"),
    (note_hook(noteable="Issue"), "Note Hook", "not a merge request comment"),
    (note_hook(noteable="Commit"), "Note Hook", "not a merge request comment"),
    (note_hook("please run `/ci-agent fix`"), "Note Hook", "no command"),
    (note_hook("> /ci-agent fix\n\nwhy did you?"), "Note Hook", "no command"),
    (note_hook(username="project_42_bot_abc"), "Note Hook", "a bot's comment"),
], ids=["push-hook", "push-payload", "system", "edited", "issue", "commit", "inline", "quoted", "bot"])
def test_everything_else_is_200_ignored(running: Running, fake: GitLabFake, payload: dict[str, Any],
                                        event: str, why: str) -> None:
    assert running.post(payload, event=event) == (200, {"ignored": why})
    assert fake.created_pipelines == []


def test_the_project_allow_list_is_the_id_and_path_gitlab_resolved(fake: GitLabFake) -> None:
    from ci_agent.cli.serve import resolve_projects

    allowed = resolve_projects(fake.url, TOKEN, ["acme/shop", "42", " "])
    assert allowed == {42: "acme/shop"}
    assert isinstance(judge("Note Hook", note_hook(path="ACME/Shop"), allowed), NoteCommand)
    assert judge("Note Hook", note_hook(project_id=99, path="acme/shop"), allowed) == \
        "a project whose id and path are not the pair GitLab gave for the served project"
    assert judge("Note Hook", note_hook(project_id=42, path="evil/shop"), allowed) == \
        "a project whose id and path are not the pair GitLab gave for the served project"
    assert judge("Note Hook", note_hook(project_id=5, path="evil/shop"), allowed) == \
        "a project that is not served here"
    assert isinstance(judge("Note Hook", note_hook(project_id=5, path="evil/shop"), {}), NoteCommand)
    with pytest.raises(UsageError, match="--project 'acme/none'"):
        resolve_projects(fake.url, TOKEN, ["acme/none"])


def test_a_refused_pipeline_is_logged_with_the_remedy_and_may_be_redelivered(
        running: Running, fake: GitLabFake) -> None:
    fake.pipeline_variables_level = None  # GitLab.com's default for new projects: no_one_allowed
    assert running.post(note_hook())[0] == 202
    assert running.done.acquire(timeout=WAIT_S)
    failed = [line for line in running.lines if "failed" in line]
    assert failed and "Minimum role to use pipeline variables" in failed[0]
    fake.pipeline_variables_level = 30
    assert running.post(note_hook())[0] == 202  # forgotten after the failure: GitLab's "Resend" works
    assert running.done.acquire(timeout=WAIT_S)
    assert len(fake.created_pipelines) == 1


def test_healthz_and_unknown_paths(running: Running) -> None:
    host, port = running.relay.address
    connection = http.client.HTTPConnection(host, port, timeout=WAIT_S)
    connection.request("GET", "/healthz")
    response = connection.getresponse()
    assert (response.status, json.loads(response.read())) == (200, {"ok": True})
    connection.request("GET", "/other")
    assert connection.getresponse().status == 404
    connection.close()


def test_seen_notes_are_bounded() -> None:
    seen = SeenNotes(size=3)
    assert all(seen.add((42, n)) for n in range(5))
    assert seen.add((42, 0)) is True  # the oldest were forgotten
    assert seen.add((42, 4)) is False


def test_serve_refuses_to_start_without_a_secret_or_token() -> None:
    from ci_agent.cli.main import build_parser

    args = build_parser().parse_args(["serve", "--port", "0"])
    with pytest.raises(UsageError, match="CI_AGENT_WEBHOOK_SECRET is not set"):
        run_serve(args, {"CI_AGENT_GITLAB_TOKEN": TOKEN})
    with pytest.raises(UsageError, match="shorter than 16"):
        run_serve(args, {"CI_AGENT_WEBHOOK_SECRET": "short", "CI_AGENT_GITLAB_TOKEN": TOKEN})
    with pytest.raises(UsageError, match="CI_AGENT_GITLAB_TOKEN is not set"):
        run_serve(args, {"CI_AGENT_WEBHOOK_SECRET": SECRET})
    assert gitlab_url(None, {"CI_SERVER_URL": "https://gitlab.example.com/"}) == "https://gitlab.example.com"
    with pytest.raises(UsageError):
        gitlab_url("gitlab.example.com", {})


def test_ci_agent_serve_runs_until_sigterm(fake: GitLabFake) -> None:
    env = {**os.environ, "CI_AGENT_WEBHOOK_SECRET": SECRET, "CI_AGENT_GITLAB_TOKEN": TOKEN}
    command = [sys.executable, "-m", "ci_agent", "serve", "--port", "0", "--gitlab-url", fake.url,
               "--project", "acme/shop"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        match = re.search(r"listening on ([\d.]+):(\d+) for acme/shop", first)
        assert match, first
        connection = http.client.HTTPConnection(match[1], int(match[2]), timeout=WAIT_S)
        connection.request("GET", "/healthz")
        assert connection.getresponse().status == 200
        connection.close()
        process.send_signal(signal.SIGTERM)
        assert process.wait(WAIT_S) == 0
        rest = process.stderr.read()
        assert SECRET not in first + rest and TOKEN not in first + rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT_S)
