"""The GitLab scenario harness (tests/gitlab_scenarios) extended with slash-command pipelines.

What GitLab does that the base harness does not need, and this one does:

- `CommandFake`: a merge request's `sha` follows its source branch (GitLab moves it on every push;
  the base fake keeps the sha it was created with); a pipeline created through the API keeps its
  variables (`pipeline_variables[id]`) so the jobs of that pipeline see them, as GitLab gives
  pipeline variables to every job; a job the harness ran is recorded in its pipeline (a failed
  `ci-agent-fix` job shows up among the pipeline's failed jobs, as on GitLab).
- `CommandWorld.job(pipeline)` runs whichever job of the rendered include its `rules:` add to
  that pipeline (api pipeline with the command variables → `<prefix>-command`, a schedule with
  `CI_AGENT_POLL=true` → `<prefix>-poll`), and runs exactly the job's `script:` lines
  (`ci-agent command --gitlab`, `ci-agent poll`) through `ci_agent.cli.main.main` in this process; a
  job with `GIT_STRATEGY: none` gets an empty project directory.
- `RelayProcess`: a real `ci-agent serve` (subprocess, port 0) in front of the fake; deliveries
  are real HTTP with the webhook's `X-Gitlab-Token`, bodies shaped like GitLab's Note Hook
  (docs.gitlab.com/user/project/integrations/webhook_events/#comment-events).
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from ci_agent.platforms.gitlab.forge import GitLabForge
from ci_agent.relay import start_command_pipeline
from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.gitlab_fake import FakeJob, GitLabFake
from tests.fakes.gitlab_fake_commands import stamp
from tests.fakes.gitlab_fake_routes import Call, Reply
from tests.gitlab.gitlab_ci import job_when, render
from tests.gitlab_scenarios.harness import (
    _OURS,
    _SECRETS,
    BOT,
    BOT_TOKEN,
    INCLUDE_FILE,
    JobRun,
    Pipeline,
    World,
)
from tests.platform_scenarios.base import run_in_process, world_builder
from tests.scenarios.sample_repos import git

SECRET = "relay-webhook-secret-0123456789abcdef"
WAIT_S = 30  # a bound for a broken test, never a timing claim
DEV, DEV_TOKEN = "dana", "glpat-dana"  # Developer (30): may run commands
REPORTER = "rita"  # Reporter (20): may not
OTHER_BOT = "project_42_bot_f00d"  # another project access token's user (Developer, a bot)
FEATURE = "feature/stars"


class CommandFake(GitLabFake):
    def __init__(self, origin: Path | None = None) -> None:
        super().__init__(origin)
        self.pipeline_variables: dict[int, dict[str, str]] = {}
        self.add_user(DEV, 30)
        self.add_token(DEV_TOKEN, DEV, "personal")
        self.add_user(REPORTER, 20)
        self.add_user(OTHER_BOT, 30, bot=True)

    def _live(self, mr: dict[str, Any]) -> None:
        if mr["source_project_id"] == self.project_id:
            sha = self.branch_sha(mr["source_branch"])
            if sha:
                mr["sha"] = sha

    def r_mr(self, call: Call, iid: str) -> Reply:
        mr = self._mr(iid)
        if mr is not None:
            self._live(mr)
        return super().r_mr(call, iid)

    def r_merge_requests(self, call: Call) -> list[dict[str, Any]]:
        for mr in self.merge_requests.values():
            self._live(mr)
        return super().r_merge_requests(call)

    def r_create_pipeline(self, call: Call) -> Reply:
        reply = super().r_create_pipeline(call)
        if reply.status == 201:
            body = call.body if isinstance(call.body, dict) else {}
            self.pipeline_variables[int(reply.body["id"])] = {
                str(v["key"]): str(v["value"]) for v in body.get("variables") or []}
        return reply

    def record_job(self, pipeline_id: int, name: str, status: str, trace: str) -> None:
        with self._lock:
            job_id = next(self._job_ids)
            job = FakeJob(name, status, trace.encode(), stage=".post")
            self.jobs[job_id] = self.job_json(job_id, self.pipelines[pipeline_id], job)
            self.traces[job_id] = job.trace

    def awards(self, note_id: int) -> list[tuple[str, str]]:
        return [(name, who) for _, n, name, who in self.award_emoji if n == note_id]


class CommandWorld(World):
    gitlab: CommandFake

    # -- pipelines -----------------------------------------------------------------------------

    def api_pipeline(self, pipeline_id: int) -> Pipeline:
        """A pipeline the relay or the poller created (source api), as its jobs see it."""
        data = self.gitlab.pipelines[pipeline_id]
        assert data["source"] == "api", data
        return Pipeline(pipeline_id, data["ref"], data["sha"], "running", "", 0, "api")

    def start_command(self, iid: int, note_id: int) -> Pipeline:
        """What the relay's worker does for an accepted note (`start_command_pipeline` with the
        relay's token), for scenarios about the command job rather than the delivery."""
        forge = GitLabForge(self.gitlab.project_path, BOT_TOKEN, url=self.gitlab.url, sleep=lambda s: None)
        return self.api_pipeline(start_command_pipeline(forge, iid, note_id))

    def command(self, iid: int, note_id: int, **kwargs: Any) -> JobRun:
        return self.job(self.start_command(iid, note_id), **kwargs)

    def schedule(self, variables: dict[str, str] | None = None) -> Pipeline:
        """A run of a pipeline schedule on the default branch with its schedule variables."""
        tip = self.origin_tip("main")
        assert tip is not None
        pipeline_id = self.gitlab.add_pipeline("main", tip, "running", [], source="schedule")
        self.gitlab.pipeline_variables[pipeline_id] = dict(variables or {"CI_AGENT_POLL": "true"})
        return Pipeline(pipeline_id, "main", tip, "running", "", 0, "schedule")

    def command_pipelines(self) -> list[tuple[int, dict[str, str]]]:
        return sorted((i, v) for i, v in self.gitlab.pipeline_variables.items()
                      if self.gitlab.pipelines[i]["source"] == "api" and "CI_AGENT_COMMAND_NOTE_ID" in v)

    # -- the job -------------------------------------------------------------------------------

    def predefined(self, p: Pipeline, workspace: Path, user: str, job_id: int) -> dict[str, str]:
        found = super().predefined(p, workspace, user, job_id)
        found["CI_JOB_STARTED_AT"] = stamp(datetime.now(UTC))
        found.update(self.gitlab.pipeline_variables.get(p.id, {}))  # pipeline/schedule variables
        return found

    def ci_agent_job(self, p: Pipeline, env: dict[str, str]) -> tuple[str, dict[str, Any]] | None:
        config = render(INCLUDE_FILE.read_text(), self.include)
        wanted = "on_failure" if p.status == "failed" else "on_success"
        found = [(n, j) for n, j in config.items()
                 if isinstance(j, dict) and "script" in j and job_when(j, env) == wanted]
        assert len(found) <= 1, f"more than one ci-agent job in pipeline {p}: {[n for n, _ in found]}"
        return found[0] if found else None

    def run_job(self, p: Pipeline, **kwargs: Any) -> JobRun | None:
        found = super().run_job(p, **kwargs)
        if found is not None and p.id in self.gitlab.pipelines:
            status = "success" if found.exit_code == 0 else "failed"
            self.gitlab.record_job(p.id, found.name, status, found.stdout + found.stderr)
        return found

    def _invoke(self, variables: dict[str, str], workspace: Path) -> tuple[int, str, str]:
        config = render(INCLUDE_FILE.read_text(), self.include)
        script = [str(line) for line in config[variables["CI_JOB_NAME"]]["script"]]
        if variables.get("GIT_STRATEGY") == "none":
            workspace = workspace.parent / (workspace.name + "-empty")
            workspace.mkdir()
            variables = {**variables, "CI_PROJECT_DIR": str(workspace)}
        code, out, err = 0, "", ""
        for line in script:  # the job's script, line by line, stopping at the first that fails
            words = shlex.split(line)
            assert words[0] == "ci-agent", line
            code, more_out, more_err = run_in_process(self.monkeypatch, self.capfd, variables, workspace,
                                                      words[1:], _OURS)
            out, err = out + more_out, err + more_err
            if code:
                break
        return code, out, err

    # -- people --------------------------------------------------------------------------------

    def feature_mr(self, branch: str = FEATURE, author_token: str = DEV_TOKEN) -> int:
        """A Developer's branch (main plus one commit of theirs, so the sample's bug is on it too)
        and their merge request into main."""
        clone = self.clone("main", "dev")
        git(clone, "checkout", "-q", "-b", branch)
        (clone / "NOTES.md").write_text("A person's note.\n")
        git(clone, "add", "NOTES.md")
        git(clone, "commit", "-q", "-m", "docs: a note")
        git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return self.open_mr(branch, "main", "Stars", token=author_token)

    def red_mr(self, branch: str = FEATURE) -> tuple[int, Pipeline]:
        iid = self.feature_mr(branch)
        red = self.pipeline(branch, source="merge_request_event", mr_iid=iid)
        assert red.status == "failed"
        return iid, red

    def say(self, iid: int, body: str, author: str = DEV) -> int:
        return self.gitlab.add_note(iid, body, author)

    def status_body(self, iid: int) -> str:
        from tests.gitlab_scenarios.steps import the_status_note

        return str(the_status_note(self, iid)["body"])

    def our_eyes(self, note_id: int) -> list[tuple[str, str]]:
        return self.gitlab.awards(note_id)


@contextmanager
def command_world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
                  capfd: pytest.CaptureFixture[str]) -> Iterator[CommandWorld]:
    """A `CommandWorld`: the sample repo and its bare origin, the command-aware fake. The fake's
    clock starts an hour before the wall clock, so the poller (which looks back from `now`) sees
    the notes of a test."""
    builder = world_builder(tmp_path, anthropic_fake, monkeypatch, capfd, CommandFake, CommandWorld)
    try:
        world = next(builder)()
        world.gitlab.now = datetime.now(UTC) - timedelta(hours=1)
        yield world
    finally:
        next(builder, None)  # stops the fake; it must have seen no unexpected request


# -- the relay -----------------------------------------------------------------------------------


def note_hook(fake: GitLabFake, iid: int, note_id: int, *, action: str | None = "create") -> dict[str, Any]:
    """The Note Hook GitLab sends for note `note_id` on merge request `iid`, from the fake's state
    (keys as in GitLab's documented comment-on-merge-request example)."""
    note = next(n for n in fake.notes[iid] if n["id"] == note_id)
    mr = fake.merge_requests[iid]
    author = fake.users[note["author"]["username"]]
    web, path = fake.web_url, fake.project_path
    when = note["created_at"].replace("T", " ").split(".")[0] + " UTC"
    attributes: dict[str, Any] = {
        "id": note_id, "note": note["body"], "noteable_type": "MergeRequest", "author_id": author["id"],
        "created_at": when, "updated_at": when, "project_id": fake.project_id, "attachment": None,
        "line_code": None, "commit_id": "", "noteable_id": mr["id"], "system": note["system"],
        "st_diff": None, "type": None, "discussion_id": "d" * 40,
        "url": f"{web}/-/merge_requests/{iid}#note_{note_id}"}
    if action is not None:
        attributes["action"] = action
    project = {"id": fake.project_id, "name": path.rsplit("/", 1)[-1], "description": "", "web_url": web,
               "avatar_url": None, "git_ssh_url": f"git@gitlab.example.com:{path}.git",
               "git_http_url": f"{web}.git", "namespace": path.split("/")[0], "visibility_level": 0,
               "path_with_namespace": path, "default_branch": fake.default_branch,
               "homepage": web, "url": f"git@gitlab.example.com:{path}.git"}
    return {
        "object_kind": "note", "event_type": "note",
        "user": {"id": author["id"], "name": author["name"], "username": author["username"],
                 "avatar_url": None, "email": "[REDACTED]"},
        "project_id": fake.project_id, "project": project, "object_attributes": attributes,
        "repository": {"name": project["name"], "url": project["url"], "description": "", "homepage": web},
        "merge_request": {
            "id": mr["id"], "iid": iid, "title": mr["title"], "state": mr["state"],
            "source_branch": mr["source_branch"], "target_branch": mr["target_branch"],
            "source_project_id": mr["source_project_id"], "target_project_id": mr["target_project_id"],
            "author_id": fake.users[mr["author"]["username"]]["id"], "description": mr["description"] or "",
            "merge_status": "can_be_merged", "draft": mr["draft"], "work_in_progress": mr["draft"],
            "last_commit": {"id": mr["sha"]}, "url": mr["web_url"]}}


class RelayProcess:
    """`ci-agent serve --port 0` as a process, creating pipelines in the fake with the bot's token."""

    def __init__(self, fake: GitLabFake, *, secret: str = SECRET, token: str = BOT_TOKEN,
                 projects: list[str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_OURS) and k not in _SECRETS}
        env.update(CI_AGENT_WEBHOOK_SECRET=secret, CI_AGENT_GITLAB_TOKEN=token, CI_AGENT_GITLAB_THROTTLE="0")
        self.secret, self.token = secret, token
        served = [fake.project_path] if projects is None else projects
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ci_agent", "serve", "--port", "0", "--gitlab-url", fake.url,
             *(arg for name in served for arg in ("--project", name))],
            env=env, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        first = self._next()
        match = re.search(r"listening on ([\d.]+):(\d+)", first)
        assert match, first
        self.host, self.port = match[1], int(match[2])

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.put(line)

    def _next(self) -> str:
        line = self._lines.get(timeout=WAIT_S)
        self.lines.append(line)
        return line

    def __enter__(self) -> RelayProcess:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(WAIT_S)
        self._reader.join(WAIT_S)
        while not self._lines.empty():
            self.lines.append(self._lines.get_nowait())
        text = "".join(self.lines)
        assert self.secret not in text and self.token not in text, "the relay logged a secret"

    def deliver(self, payload: dict[str, Any], *, token: str | None = None,
                event: str = "Note Hook") -> tuple[int, Any]:
        """One webhook delivery, as GitLab makes it (POST, JSON, the event and token headers)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=WAIT_S)
        headers = {"Content-Type": "application/json", "User-Agent": "GitLab/17.5.1",
                   "X-Gitlab-Event": event, "X-Gitlab-Instance": "https://gitlab.example.com",
                   "X-Gitlab-Webhook-UUID": "2b1c4d5e-0000-4000-8000-000000000001",
                   "X-Gitlab-Event-UUID": "7e1c4d5e-0000-4000-8000-000000000002"}
        headers["X-Gitlab-Token"] = self.secret if token is None else token
        try:
            connection.request("POST", "/", body=json.dumps(payload).encode(), headers=headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            connection.close()

    def started(self) -> int:
        """Wait for the worker's log line of the next created pipeline; its id."""
        while True:
            line = self._next()
            match = re.search(r"pipeline (\d+) started for", line)
            if match:
                return int(match[1])
            assert "failed" not in line, line


__all__ = ["BOT", "DEV", "FEATURE", "OTHER_BOT", "REPORTER", "CommandFake", "CommandWorld", "RelayProcess",
           "command_world", "note_hook"]
