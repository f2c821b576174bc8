"""The GitHub side of the hardening tests: GitHub Actions and the GitHub fake (tests/github_scenarios,
tests/github_commands)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ci_agent.engine.forge import parse_marker
from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import red_pr
from tests.github_scenarios import harness as github
from tests.github_scenarios import steps as github_steps
from tests.hardening.concurrency.races import Proc, prepared, spawn
from tests.hardening.platforms.common import FIX_BRANCH, Ran, Red, SideBase
from tests.hardening.secrets.canaries import github_token


class GitHubSide(SideBase):
    """GitHub Actions and the GitHub fake: workflow runs, pull requests, issue comments."""

    name: ClassVar[str] = "github"
    service: ClassVar[str] = "GitHub"
    run_word: ClassVar[str] = "run"  # what one CI run is called (the race figure's labels)
    change_requests: ClassVar[str] = r"/repos/octo/app/pulls$"
    comments: ClassVar[str] = r"/repos/octo/app/issues/\d+/comments$"
    comment_edits: ClassVar[tuple[str, str]] = ("PATCH", r"/repos/octo/app/issues/comments/\d+$")
    ci_file_attack: ClassVar[str] = "workflow_curl_sh"  # the MALICIOUS patch of the forge's CI files
    command_fix_branch: ClassVar[str] = "ci-agent/fix/feature"  # of the command world's red PR
    fresh_token = staticmethod(github_token)  # a token of the forge's shape

    world: github.World

    def __init__(self, world: github.World) -> None:
        self.world = world

    @property
    def fake(self) -> Any:
        return self.world.github

    def pushes_start_ci(self) -> None:
        """ci-agent pushes with a person's PAT, whose pushes start CI by themselves."""
        self.world.inputs["github_token"] = github.USER_TOKEN

    def real_token(self) -> str:
        """A PAT of octocat shaped like a real one, given to ci-agent (the scenarios' `ghp_fake_user`
        is lowercase words, which the redactor deliberately takes for a setting, not a secret)."""
        token = "ghp_" + secrets.token_hex(18)
        self.world.github.tokens[token] = "octocat"
        self.world.inputs["github_token"] = token
        return token

    def set_input(self, name: str, value: str) -> None:
        """An input of the action (`with:`)."""
        self.world.inputs[name] = value

    def give_secrets(self, api_key: str, token: str, custom: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """The action's API key and token inputs (the token octocat's), and a custom secret in the
        job's environment (a repository secret the workflow exposes)."""
        self.world.github.tokens[token] = "octocat"
        self.world.inputs.update(anthropic_api_key=api_key, github_token=token)
        monkeypatch.setenv("DEPLOY_SECRET", custom)

    def red(self, branch: str = "main") -> github.CiRun:
        return self.world.ci(branch)

    def last_red(self) -> github.CiRun:
        return self.world.ci_runs[-1]

    @staticmethod
    def failed(ci: Red) -> bool:
        return isinstance(ci, github.CiRun) and ci.conclusion == "failure"

    def fail_attempts(self, count: int) -> None:
        github_steps.fail_attempts(self.world, count)

    def run(self, ci: Red, **kwargs: Any) -> Ran:
        """The ci-agent workflow_run job after `ci`, in this process."""
        assert isinstance(ci, github.CiRun)
        return _ran_github(self.world.after_ci(ci, **kwargs))

    def run_in_process(self, ci: Red, env: dict[str, str], checkout: Callable[[Path], None]) -> Ran:
        """The job after `ci` as the container's entrypoint runs it; `checkout` prepares its
        workspace first (as the runner's checkout leaves it)."""
        assert isinstance(ci, github.CiRun)
        job = self.world.job_after_ci(ci, env=env)
        checkout(job.workspace)
        return _ran_github(job.run(process=True))

    def start(self, ci: Red, label: str, job_id: int | None = None) -> Proc:
        """The job after `ci` started as a child process (`job_id`: its run id)."""
        return self._start(ci, label, run_id=job_id)

    def retry(self, ci: Red, label: str, job_id: int) -> Proc:
        """Job `job_id` after `ci` again: "Re-run jobs" (the same run id, run_attempt 2)."""
        return self._start(ci, label, run_id=job_id, run_attempt=2)

    def _start(self, ci: Red, label: str, **kwargs: Any) -> Proc:
        assert isinstance(ci, github.CiRun)
        with prepared(self.world):
            job = self.world.job_after_ci(ci, **{k: v for k, v in kwargs.items() if v is not None})
        return spawn(label, job.variables, job.workspace, ["fix", "--github"])

    def person_pushes(self, branch: str, path: str, text: str, message: str) -> str:
        """A person's commit adding `text` to `path` on `branch`, from their own clone; its sha."""
        return self.world.human_commit(branch, path, text, message)

    def red_request(self) -> tuple[int, github.CiRun]:
        """A person's same-repository pull request whose CI run failed (the command world)."""
        assert isinstance(self.world, CommandWorld)
        return red_pr(self.world)

    def say(self, number: int, body: str) -> int:
        """A writer's comment on pull request `number`; its id."""
        assert isinstance(self.world, CommandWorld)
        return self.world.say(number, body)

    def command(self, number: int, comment: int) -> Ran:
        """The command workflow's job for `comment`, given the token the fix workflow has."""
        assert isinstance(self.world, CommandWorld)
        return _ran_github(self.world.command(number, comment,
                                              inputs={"github_token": self.world.inputs["github_token"]}))

    def fix_requests(self, branch: str = FIX_BRANCH) -> list[dict[str, Any]]:
        return self.world.pulls_from(branch)

    def open_fix(self, branch: str = FIX_BRANCH) -> list[int]:
        return [p["number"] for p in self.world.pulls_from(branch) if p["state"] == "open"]

    def bodies(self, number: int) -> list[str]:
        return [c["body"] for c in self.world.comments_on(number)]

    def status_comments(self, number: int) -> list[tuple[str, str]]:
        """(author, body) of each comment carrying our marker on #`number`."""
        found = self.world.comments_on(number)
        return [(c["user"], c["body"]) for c in found if parse_marker(c["body"]) is not None]

    def status_body(self) -> str:
        """Our one status comment on the one fix pull request."""
        return str(github_steps.the_status_comment(self.world, self.world.fix_pull()["number"])["body"])

    def forge_text(self) -> str:
        """Everything ci-agent sent to GitHub or left there."""
        return self.world.all_github_text()

    def ours_on_forge(self, exclude_comment: int | None = None) -> str:
        """What ci-agent sent to GitHub (path and body) or left there (the person's own comment
        `exclude_comment` is not ours)."""
        github_site = self.world.github
        sent = [f"{r.path} {r.body}" for r in github_site.requests if r.server == "api" and r.body]
        held: list[Any] = list(github_site.pulls.values())
        held += [c for i, c in github_site.comments.items() if i != exclude_comment]
        return "\n".join(sent + [str(h) for h in held])



def _ran_github(done: github.ActionRun) -> Ran:
    return Ran(done.exit_code, done.outputs.get("outcome"), str(done.outputs), done.summary, done.stdout,
               done.stderr, done.workspace, done)
