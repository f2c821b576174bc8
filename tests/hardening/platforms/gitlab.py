"""The GitLab side of the hardening tests: GitLab CI (the include) and the GitLab fake
(tests/gitlab_scenarios, tests/gitlab_commands)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ci_agent.engine.forge import parse_marker
from tests.gitlab_commands.harness import CommandWorld
from tests.gitlab_commands.steps import FEATURE_FIX
from tests.gitlab_scenarios import harness as gitlab
from tests.gitlab_scenarios import steps as gitlab_steps
from tests.hardening.concurrency.races import Proc, prepared, spawn
from tests.hardening.platforms.common import FIX_BRANCH, Ran, Red, SideBase
from tests.hardening.secrets.canaries import gitlab_token
from tests.scenarios.sample_repos import git


class GitLabSide(SideBase):
    """GitLab CI (the include) and the GitLab fake: pipelines, merge requests, notes."""

    name: ClassVar[str] = "gitlab"
    service: ClassVar[str] = "GitLab"
    run_word: ClassVar[str] = "pipeline"
    change_requests: ClassVar[str] = r"/merge_requests$"
    comments: ClassVar[str] = r"/merge_requests/\d+/notes$"
    comment_edits: ClassVar[tuple[str, str]] = ("PUT", r"/merge_requests/\d+/notes/\d+$")
    ci_file_attack: ClassVar[str] = "gitlab_ci"
    command_fix_branch: ClassVar[str] = FEATURE_FIX
    fresh_token = staticmethod(gitlab_token)

    world: gitlab.World

    def __init__(self, world: gitlab.World) -> None:
        self.world = world

    @property
    def fake(self) -> Any:
        return self.world.gitlab

    def pushes_start_ci(self) -> None:
        """The project access token's pushes start pipelines already."""

    def real_token(self) -> str:
        """A project access token shaped like a real one (`glpat-bot` reads as a word), given to
        ci-agent as the CI/CD variable."""
        token = "glpat-" + secrets.token_hex(12)
        self.world.gitlab.add_token(token, gitlab.BOT, "project")
        self.world.variables["CI_AGENT_GITLAB_TOKEN"] = token
        return token

    def set_input(self, name: str, value: str) -> None:
        """An input of the include (`inputs:`)."""
        self.world.include[name] = value

    def give_secrets(self, api_key: str, token: str, custom: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """CI/CD variables: the API key, the project access token (its bot's) and a custom secret."""
        self.world.gitlab.add_token(token, gitlab.BOT, "project")
        self.world.variables.update(ANTHROPIC_API_KEY=api_key, CI_AGENT_GITLAB_TOKEN=token,
                                    DEPLOY_SECRET=custom)

    def red(self, branch: str = "main") -> gitlab.Pipeline:
        return self.world.pipeline(branch)

    def last_red(self) -> gitlab.Pipeline:
        return self.world.pipelines[-1]

    @staticmethod
    def failed(pipeline: Red) -> bool:
        return isinstance(pipeline, gitlab.Pipeline) and pipeline.status == "failed"

    def fail_attempts(self, count: int) -> None:
        gitlab_steps.fail_attempts(self.world, count)

    def run(self, pipeline: Red, **kwargs: Any) -> Ran:
        """The include's ci-agent job after `pipeline`, in this process."""
        assert isinstance(pipeline, gitlab.Pipeline)
        return _ran_gitlab(self.world.job(pipeline, **kwargs))

    def run_in_process(self, pipeline: Red, env: dict[str, str],
                       checkout: Callable[[Path], None]) -> Ran:
        """The job after `pipeline` as its container runs it; `checkout` prepares its workspace
        (ci-agent's job's only: another job's checkout is not ours to touch)."""
        assert isinstance(pipeline, gitlab.Pipeline)
        plain_clone = self.world.clone

        def runner_clone(ref: str, name: str) -> Path:
            path = plain_clone(ref, name)
            if name.startswith("job-"):
                checkout(path)
            return path

        self.world.clone = runner_clone  # type: ignore[method-assign]
        try:
            return _ran_gitlab(self.world.job(pipeline, env=env, process=True))
        finally:
            del self.world.clone

    def start(self, pipeline: Red, label: str, job_id: int | None = None) -> Proc:
        """The job after `pipeline` started as a child process (`job_id`: its job id)."""
        assert isinstance(pipeline, gitlab.Pipeline)
        with prepared(self.world) as seen:
            self.world.job(pipeline, job_id=job_id)
        ((variables, workspace),) = seen
        return spawn(label, variables, workspace, ["fix", "--gitlab"])

    def retry(self, pipeline: Red, label: str, job_id: int) -> Proc:
        """Job `job_id` after `pipeline` again: GitLab's Retry (a new job of the same pipeline)."""
        return self.start(pipeline, label, job_id + 1)

    def person_pushes(self, branch: str, path: str, text: str, message: str) -> str:
        """A person's commit adding `text` to `path` on `branch`, from their own clone; its sha."""
        clone = self.world.clone(branch, "person")
        target = clone / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((target.read_text() if target.exists() else "") + text)
        git(clone, "add", path)
        git(clone, "commit", "-q", "-m", message)
        git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return git(clone, "rev-parse", "HEAD").strip()

    def red_request(self) -> tuple[int, gitlab.Pipeline]:
        """A person's merge request whose pipeline failed (the command world)."""
        assert isinstance(self.world, CommandWorld)
        return self.world.red_mr()

    def say(self, iid: int, body: str) -> int:
        """A Developer's note on merge request `iid`; its id."""
        assert isinstance(self.world, CommandWorld)
        return self.world.say(iid, body)

    def command(self, iid: int, note: int) -> Ran:
        """The command pipeline's job for `note` (its token is the CI/CD variable)."""
        assert isinstance(self.world, CommandWorld)
        return _ran_gitlab(self.world.command(iid, note))

    def fix_requests(self, branch: str = FIX_BRANCH) -> list[dict[str, Any]]:
        return self.world.mrs_from(branch)

    def open_fix(self, branch: str = FIX_BRANCH) -> list[int]:
        return [int(m["iid"]) for m in self.world.mrs_from(branch) if m["state"] == "opened"]

    def bodies(self, iid: int) -> list[str]:
        return [str(n["body"]) for n in self.world.notes_on(iid)]

    def status_comments(self, iid: int) -> list[tuple[str, str]]:
        """(author, body) of each note carrying our marker on !`iid`."""
        found = self.world.notes_on(iid)
        return [(n["author"]["username"], n["body"]) for n in found if parse_marker(n["body"]) is not None]

    def status_body(self) -> str:
        """Our one status note on the one fix merge request."""
        return str(gitlab_steps.the_status_note(self.world, self.world.fix_mr()["iid"])["body"])

    def forge_text(self) -> str:
        """Everything ci-agent sent to GitLab (request bodies) or left there (MRs, notes)."""
        sent = "\n".join(str(r.body) for r in self.world.gitlab.requests if r.body)
        return sent + "\n" + str(self.world.gitlab.merge_requests) + str(self.world.gitlab.notes)

    def ours_on_forge(self, exclude_comment: int | None = None) -> str:
        """What ci-agent sent to GitLab (path and body; people's notes are not HTTP here) or left
        there (the person's own note `exclude_comment` is not ours)."""
        fake = self.world.gitlab
        sent = [f"{r.path} {r.body}" for r in fake.requests if r.body]
        notes = [n for ns in fake.notes.values() for n in ns if n.get("id") != exclude_comment]
        return "\n".join(sent) + str(fake.merge_requests) + str(notes)



def _ran_gitlab(done: gitlab.JobRun) -> Ran:
    dotenv = done.workspace / "ci-agent.env"
    return Ran(done.exit_code, done.outcome, dotenv.read_text() if dotenv.is_file() else "", done.summary,
               done.stdout, done.stderr, done.workspace, done)
