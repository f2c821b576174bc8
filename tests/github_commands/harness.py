"""The GitHub scenario harness (tests/github_scenarios) extended with the slash-command job.

`CommandWorld.command(number, comment_id)` is one job of pipelines/github/ci-agent-command.yml:
the comment event GitHub writes to `GITHUB_EVENT_PATH` (`issue_comment` or
`pull_request_review_comment`, built from the comment as the fake holds it, the way octokit's
recorded payloads nest it), the job's checkout as the workflow makes it (the pull request's head
commit, detached, full history, and NO checkout when the head repository is another one), the
inputs the workflow passes on top of actions/command/action.yml's defaults, then
`ci_agent.cli.main.main(["command", "--github"])` in this process.

`CommandSite` is the scenario fake with one thing more that a multi-job command scenario needs:
a same-repository pull request's `head.sha` is the live tip of its branch on the bare origin
(GitHub moves it on every push; the base fake keeps the sha it was created with).
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.anthropic_fake import AnthropicFake
from tests.github_scenarios.fake_site import SERVER_URL, LiveBranches, SiteFake, repository_json, user_json
from tests.github_scenarios.gh_expr import evaluate_if
from tests.github_scenarios.harness import _OURS, ACTIONS_TOKEN, ActionRun, Job, World
from tests.platform_scenarios.base import child_command, child_environment, run_in_process, world_builder
from tests.scenarios.sample_repos import git

ROOT = Path(__file__).resolve().parents[2]
COMMAND_ACTION = ROOT / "actions" / "command" / "action.yml"
COMMAND_WORKFLOW = ROOT / "pipelines" / "github" / "ci-agent-command.yml"
WRITER = "maintainer"  # a collaborator with write access
COMMENT_EVENTS = ("issue_comment", "pull_request_review_comment")


_HOLD = threading.local()  # one wait per request, whichever entry point the base fake has


class CommandSite(SiteFake):
    # Set to a Barrier(n) to hold the 👀 POSTs until n jobs claim at once (a deterministic race).
    claim_barrier: threading.Barrier | None = None

    def handle(self, server: str, method: str, target: str, headers: dict[str, str], body: Any) -> Any:
        with self._held(method, target):
            return super().handle(server, method, target, headers, body)

    def dispatch(self, server: str, method: str, target: str, headers: dict[str, str], body: Any) -> Any:
        """The HTTP entry of newer versions of the base fake (`handle` in older ones)."""
        with self._held(method, target):
            return super().dispatch(server, method, target, headers, body)

    @contextlib.contextmanager
    def _held(self, method: str, target: str) -> Iterator[None]:
        barrier = self.claim_barrier
        holding = getattr(_HOLD, "on", False)
        if not holding and barrier is not None and method == "POST" and target.split("?")[0].endswith(
                "/reactions"):
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                self.failures.append("the jobs never claimed the comment at the same time")
        _HOLD.on = True
        try:
            yield
        finally:
            _HOLD.on = holding

    def _pull_json(self, pull: dict[str, Any]) -> dict[str, Any]:
        shape = super()._pull_json(pull)
        here = self.full_name
        live = self.branches
        if isinstance(live, LiveBranches) and pull.get("head_repo", here) == here and pull["head"] in live:
            shape["head"]["sha"] = git(live.origin, "rev-parse", f"refs/heads/{pull['head']}").strip()
        return shape


def action_defaults() -> dict[str, str]:
    """actions/command/action.yml's inputs and their defaults (the runner passes every one)."""
    data = yaml.safe_load(COMMAND_ACTION.read_text())
    found = {name: str(spec.get("default", "")) for name, spec in data["inputs"].items()}
    found["github_token"] = ACTIONS_TOKEN  # `${{ github.token }}`
    return found


def workflow_with() -> dict[str, str]:
    """What pipelines/github/ci-agent-command.yml passes to the action (secrets resolved)."""
    data = yaml.safe_load(COMMAND_WORKFLOW.read_text())
    (job,) = data["jobs"].values()
    step = next(s for s in job["steps"] if "actions/command" in str(s.get("uses", "")))
    passed = {k: str(v) for k, v in step["with"].items()}
    passed.pop("anthropic_api_key")  # `${{ secrets.ANTHROPIC_API_KEY }}`: the world's key
    passed.pop("github_token")  # `${{ secrets.CI_AGENT_TOKEN || github.token }}`: no CI_AGENT_TOKEN
    return passed


def comment_payload(site: SiteFake, number: int, comment_id: int, *, review: bool, action: str,
                    body: str | None = None) -> dict[str, Any]:
    """The event GitHub delivers for a comment on pull request `number` (octokit/webhooks
    `issue_comment/created` and `pull_request_review_comment/created` shapes, keys a consumer reads)."""
    store = site.review_comments if review else site.comments
    held = store[comment_id]
    pull = site._pull_json(site.pulls[number])
    author = user_json(held["user"])
    author["type"] = held["type"]
    text = held["body"] if body is None else body
    comment = {"id": comment_id, "node_id": f"IC_{comment_id}", "body": text,
               "user": author, "author_association": held.get("association", "NONE"),
               "created_at": held.get("created_at", "2026-01-01T00:00:00Z"),
               "updated_at": held.get("created_at", "2026-01-01T00:00:00Z"),
               "html_url": f"{SERVER_URL}/{site.full_name}/pull/{number}#issuecomment-{comment_id}"}
    payload: dict[str, Any] = {"action": action, "comment": comment,
                               "repository": repository_json(site.full_name), "sender": author}
    if action == "edited":
        payload["changes"] = {"body": {"from": "(before the edit)"}}
    if review:
        comment["pull_request_url"] = pull["url"]
        payload["pull_request"] = {k: pull[k] for k in ("number", "url", "html_url", "state", "title",
                                                         "head", "base", "user", "draft")}
    else:
        payload["issue"] = {"number": number, "title": pull["title"], "state": pull["state"],
                            "user": pull["user"], "labels": pull["labels"],
                            "pull_request": {"url": pull["url"], "html_url": pull["html_url"]}}
    return payload


def start_command(job: Job) -> Job:
    """`python -m ci_agent command --github` in a child process (the container's entrypoint), so
    two jobs for one comment can really run at the same time."""
    job.child = subprocess.Popen(child_command("command", "--github"), cwd=job.workspace,
                                 env=child_environment(job.variables, _OURS), text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return job


def workflow_starts(event: str, payload: dict[str, Any]) -> bool:
    """Whether GitHub starts the command workflow's job for this event (its `if:`, evaluated as
    tests/github_scenarios/gh_expr.py does for the other templates)."""
    data = yaml.safe_load(COMMAND_WORKFLOW.read_text())
    (job,) = data["jobs"].values()
    context = {"github": {"event_name": event, "event": payload, "repository": "octo/app"}}
    return evaluate_if(job.get("if"), context)


class CommandWorld(World):
    last_event: tuple[str, dict[str, Any]] = ("", {})

    def command(self, number: int, comment_id: int, *, review: bool = False, action: str = "created",
                inputs: dict[str, str] | None = None, body: str | None = None) -> ActionRun:
        """One job of the command workflow for this comment, run to its end."""
        return self.command_job(number, comment_id, review=review, action=action, inputs=inputs,
                                body=body).run()

    def command_job(self, number: int, comment_id: int, *, review: bool = False, action: str = "created",
                    inputs: dict[str, str] | None = None, body: str | None = None) -> Job:
        """One job of the command workflow for this comment, prepared (event written, checkout made)."""
        site = self.github
        event = COMMENT_EVENTS[1] if review else COMMENT_EVENTS[0]
        payload = comment_payload(site, number, comment_id, review=review, action=action, body=body)
        self.last_event = (event, payload)
        pull = site._pull_json(site.pulls[number])
        same = (pull["head"]["repo"] or {}).get("full_name") == site.full_name
        main_tip = self.origin_tip("main")
        assert main_tip is not None
        declared = {**action_defaults(), **workflow_with(),
                    "anthropic_api_key": self.inputs["anthropic_api_key"], **(inputs or {})}
        saved = self.inputs
        self.inputs = {}
        try:
            # Comment events run on the default branch; the workflow checks out the PR head only
            # for a same-repository pull request (fetch-depth 0, detached at head.sha).
            job = self._prepare(event, payload, ref="main", sha=main_tip, no_checkout=not same,
                                detach_at=pull["head"]["sha"] if same else None, inputs=declared,
                                actor=payload["sender"]["login"])
        finally:
            self.inputs = saved
        job.variables["GITHUB_JOB"] = "command"
        job.variables["GITHUB_WORKFLOW"] = "ci-agent command"
        return job

    def _invoke(self, variables: dict[str, str], workspace: Path) -> tuple[int, str, str]:
        verb = "command" if variables.get("GITHUB_EVENT_NAME") in COMMENT_EVENTS else "fix"
        return run_in_process(self.monkeypatch, self.capfd, variables, workspace, [verb, "--github"], _OURS)

    # -- setting the stage ---------------------------------------------------------------------

    def open_pr(self, branch: str = "feature", *, fork: str | None = None, title: str = "Add a note",
                user: str = "alice") -> int:
        """A person's pull request from `branch` (made from main with one commit of theirs, so the
        sample's bug is on it too). `fork` names the head repository of a fork's pull request:
        then the branch is not on origin at all."""
        if fork is not None:
            tip = self.origin_tip("main")
            return self.github.add_pull(branch, head_repo=fork, sha=tip or "", title=title, user=user)
        clone = self.checkout("main", f"pr-{branch.replace('/', '-')}")
        git(clone, "checkout", "-q", "-b", branch)
        (clone / "NOTES.md").write_text("A person's note.\n")
        git(clone, "add", "NOTES.md")
        git(clone, "commit", "-q", "-m", "docs: a note")
        git(clone, "push", "-q", "origin", branch)
        return self.github.add_pull(branch, title=title, user=user)

    def say(self, number: int, body: str, author: str = WRITER, *, association: str = "MEMBER",
            bot: bool = False, review: bool = False) -> int:
        """`author` writes a comment on pull request `number`; returns its id."""
        if review:
            return self.github.add_review_comment(number, body, author, bot=bot, association=association)
        return self.github.add_comment(number, body, author, bot=bot, association=association)

    def writes(self, since: int = 0) -> list[str]:
        """The API requests that change something (everything but GET and GraphQL queries, e.g. the
        `viewer` lookup that names an integration token's bot), from request `since` on."""
        return [f"{r.method} {r.path}" for r in self.github.requests[since:]
                if r.server == "api" and r.method != "GET" and not _graphql_query(r.path, r.body)]


def _graphql_query(path: str, body: object) -> bool:
    query = body.get("query", "") if isinstance(body, dict) else ""
    return path == "/graphql" and isinstance(query, str) and query.lstrip().startswith("query")


@contextlib.contextmanager
def command_world(tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
                  capfd: pytest.CaptureFixture[str]) -> Iterator[CommandWorld]:
    """A `CommandWorld`: the sample repo and its bare origin, the fake with live pull request
    heads, two collaborators with write access and the CI workflow the command template names."""
    builder = world_builder(tmp_path, anthropic_fake, monkeypatch, capfd, CommandSite, CommandWorld)
    try:
        world = next(builder)()
        world.github.collaborators[WRITER] = "write"
        world.github.collaborators["alice"] = "write"
        world.github.add_workflow("ci.yml")  # the CI workflow the command template names (ci_workflow)
        yield world
    finally:
        next(builder, None)  # stops the fake; it must have seen no unexpected request
