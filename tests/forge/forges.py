"""The three `Forge` implementations as test subjects: the local forge, `GitHubForge` through real
PyGithub against the GitHub fake, `GitLabForge` through real python-gitlab against the GitLab
fake. A `Subject` is the forge plus what a test needs to arrange and read back *on the forge's
side* (what "GitHub" holds), so one contract test states one expectation for all three.

Also the constructors the per-forge tests share: `github_forge`, `gitlab_forge`, `zip_bytes`.
"""

from __future__ import annotations

import io
import stat
import subprocess
import zipfile
from pathlib import Path
from typing import Any, Protocol

from ci_agent.engine.forge import Forge, Permission
from ci_agent.platforms.github.forge import GitHubForge
from ci_agent.platforms.gitlab.forge import GitLabForge
from ci_agent.platforms.local.forge import LocalForge
from ci_agent.platforms.local.forge_latest import record_run
from ci_agent.retry import Waiting
from tests.fakes.github_fake import GitHubFake
from tests.fakes.gitlab_fake import FakeJob, GitLabFake

FIX = "ci-agent/fix/main"
GITHUB_ACTIONS_TOKEN = "ghs_fake_actions"
GITLAB_BOT_TOKEN = "glpat-bot"
GITLAB_JOB_TOKEN = "job-token-1"
GITLAB_BOT_USER = "project_42_bot_abc"  # the fake's project access token acts as this user
STARTABLE, NOT_STARTABLE = "ci.yml", "manual.yml"
# No test sleeps: a forge's waits are recorded (`forge.waits`) and never slept.
NO_SLEEP = Waiting(sleep=lambda seconds: None, pace=False)


def github_forge(fake: GitHubFake, token: str = GITHUB_ACTIONS_TOKEN, **kwargs: Any) -> GitHubForge:
    kwargs.setdefault("waiting", NO_SLEEP)
    return GitHubForge(f"{fake.owner}/{fake.repo}", token, base_url=fake.base_url, **kwargs)


def gitlab_forge(fake: GitLabFake, token: str = GITLAB_BOT_TOKEN, **kwargs: Any) -> GitLabForge:
    kwargs.setdefault("waiting", NO_SLEEP)
    if token == GITLAB_JOB_TOKEN:
        kwargs.setdefault("token_kind", "job")
    return GitLabForge(kwargs.pop("project", "acme/shop"), token, url=fake.url, **kwargs)


def zip_bytes(*members: tuple[str, bytes], symlink: str | None = None) -> bytes:
    """A zip of `members`; `symlink` adds a member that is a symbolic link (refused on download)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members:
            archive.writestr(name, data)
        if symlink is not None:
            info = zipfile.ZipInfo(symlink)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buf.getvalue()


def bare_origin(tmp_path: Path) -> tuple[Path, str]:
    """A bare repository with `main` and the fix branch at one commit, and that commit's sha:
    the GitLab fake checks branches and commits against it."""
    bare, work = tmp_path / "origin.git", tmp_path / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    for branch in ("main", FIX):
        subprocess.run(["git", "-C", str(work), "push", "-q", str(bare), f"HEAD:refs/heads/{branch}"],
                       check=True)
    sha = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    return bare, sha


class Subject(Protocol):
    """One forge under test, with the forge-side arranging and reading its tests need."""

    name: str
    sha: str  # the commit `main` and the fix branch point at

    @property
    def forge(self) -> Forge: ...

    def comment_by(self, number: int, body: str, author: str) -> int:
        """A comment written by someone else (a person) on change request `number`."""
        ...

    def grant(self, username: str, permission: Permission) -> None: ...

    def reactions(self, number: int, comment_id: int) -> list[str]:
        """The reactions our account put on the comment, as the forge holds them."""
        ...

    def failed_run(self, failed: str, passed: str) -> tuple[int, int, bytes]:
        """A finished run with job `failed` failed and `passed` passed: (run id, the failed job's
        id, its log as the forge holds it)."""
        ...

    def run_with_artifacts(self, archives: dict[str, bytes]) -> int:
        """A failed run whose artifacts are `archives` (name -> zip)."""
        ...

    def ci_started_on(self) -> list[str]:
        """The branches CI was started on through the forge, oldest first."""
        ...

    def failed_run_of(self, branch: str, sha: str) -> int:
        """A failed run of `branch` at commit `sha`; its id."""
        ...

    def rerun_ends(self, run_id: int, ends: str) -> None:
        """How the next re-run of run `run_id`'s failed jobs ends: "failure" (the same way) or
        "success"."""
        ...

    # -- issue 16: the default branch's latest completed run ----------------------------------

    def run_of(self, branch: str, sha: str, outcome: str, workflow: str = "ci.yml") -> int:
        """A run of `branch` at `sha`, newer than every run before it, of `workflow` where the
        forge has several: `outcome` is "failed", "passed", "cancelled" or "running" (not done).
        Its id."""
        ...


class LocalSubject:
    name = "local"

    def __init__(self, tmp_path: Path) -> None:
        self.forge = self.local = LocalForge(tmp_path / "forge")
        self.local.configure(protected=["main"], workflows={STARTABLE: True, NOT_STARTABLE: False})
        self.sha = "c" * 40
        self._runs = tmp_path / "forge" / "runs"
        self._next_run = 100

    def comment_by(self, number: int, body: str, author: str) -> int:
        return self.local.add_comment(number, body, author)

    def grant(self, username: str, permission: Permission) -> None:
        self.local.configure(permissions={username: permission.name.lower()})

    def reactions(self, number: int, comment_id: int) -> list[str]:
        return [content for cid, content, _login in self.local.read()["reactions"] if cid == comment_id]

    def failed_run(self, failed: str, passed: str) -> tuple[int, int, bytes]:
        # The local forge keeps a log per *failed* job only: the passing job has no file.
        jobs = self._runs / "7" / "jobs"
        jobs.mkdir(parents=True)
        log = f"{failed}: error CS1002\n".encode()
        (jobs / f"11-{failed}.log").write_bytes(log)
        return 7, 11, log

    def run_with_artifacts(self, archives: dict[str, bytes]) -> int:
        folder = self._runs / "8" / "artifacts"
        folder.mkdir(parents=True)
        for name, data in archives.items():
            (folder / f"{name}.zip").write_bytes(data)
        return 8

    def ci_started_on(self) -> list[str]:
        return [start["ref"] for start in self.local.read()["dispatches"]]

    def run_of(self, branch: str, sha: str, outcome: str, workflow: str = "ci.yml") -> int:
        self._next_run += 1
        conclusion = {"failed": "failure", "passed": "success", "cancelled": "cancelled"}.get(outcome, "")
        record_run(self._runs, self._next_run, branch=branch, sha=sha, conclusion=conclusion,
                   workflow=workflow, status="in_progress" if outcome == "running" else "completed")
        return self._next_run

    def failed_run_of(self, branch: str, sha: str) -> int:
        raise NotImplementedError("the local forge's runs are folders, without branch or commit")

    def rerun_ends(self, run_id: int, ends: str) -> None:
        # Nothing runs jobs locally: the next attempt's folder says how it ends.
        attempt = 2 + sum(1 for r in self.local.read()["reruns"] if r["run"] == run_id)
        jobs = self._runs / str(run_id) / "attempts" / str(attempt) / "jobs"
        jobs.mkdir(parents=True)
        for log in (self._runs / str(run_id) / "jobs").iterdir() if ends == "failure" else ():
            job_id, name = log.name.split("-", 1)
            (jobs / f"{int(job_id) + 100 * attempt}-{name}").write_bytes(log.read_bytes())


class GitHubSubject:
    name = "github"

    def __init__(self, fake: GitHubFake, sha: str) -> None:
        self.fake, self.sha = fake, sha
        fake.branches[FIX] = False
        fake.add_workflow(STARTABLE, dispatchable=True)
        fake.add_workflow(NOT_STARTABLE, dispatchable=False)
        self.forge = github_forge(fake)

    def comment_by(self, number: int, body: str, author: str) -> int:
        return self.fake.add_comment(number, body, author)

    def grant(self, username: str, permission: Permission) -> None:
        self.fake.collaborators[username] = permission.name.lower()

    def reactions(self, number: int, comment_id: int) -> list[str]:
        return [content for cid, content, _login in self.fake.reactions if cid == comment_id]

    def failed_run(self, failed: str, passed: str) -> tuple[int, int, bytes]:
        ids = self.fake.add_run(7, [(failed, "failure"), (passed, "success")])
        return 7, ids[0], self.fake.logs[ids[0]]

    def run_with_artifacts(self, archives: dict[str, bytes]) -> int:
        self.fake.add_run(8, [("build", "failure")], list(archives.items()))
        return 8

    def ci_started_on(self) -> list[str]:
        return [str(dispatch["ref"]) for dispatch in self.fake.dispatches]

    def failed_run_of(self, branch: str, sha: str) -> int:
        self.fake.add_run(9, [("build", "failure")], branch=branch, sha=sha)
        return 9

    def rerun_ends(self, run_id: int, ends: str) -> None:
        self.fake.runs[run_id].rerun_ends = ends

    def run_of(self, branch: str, sha: str, outcome: str, workflow: str = "ci.yml") -> int:
        run_id = 100 + len(self.fake.runs)
        conclusion = {"failed": "failure", "passed": "success", "cancelled": "cancelled"}.get(outcome, "")
        self.fake.add_run(run_id, [], branch=branch, sha=sha, conclusion=conclusion, workflow=workflow,
                          status="in_progress" if outcome == "running" else "completed",
                          created_at=f"2026-01-01T{run_id // 60 % 24:02d}:{run_id % 60:02d}:00Z")
        return run_id


# GitLab access levels (Guest ... Owner) for each permission
GITLAB_LEVELS = {Permission.READ: 10, Permission.TRIAGE: 20, Permission.WRITE: 30, Permission.MAINTAIN: 40,
                 Permission.ADMIN: 50}


class GitLabSubject:
    name = "gitlab"

    def __init__(self, fake: GitLabFake, sha: str) -> None:
        self.fake, self.sha = fake, sha
        self.forge = gitlab_forge(fake)

    def comment_by(self, number: int, body: str, author: str) -> int:
        return self.fake.add_note(number, body, author)

    def grant(self, username: str, permission: Permission) -> None:
        self.fake.add_user(username, GITLAB_LEVELS[permission])

    def reactions(self, number: int, comment_id: int) -> list[str]:
        return [name for iid, note, name, _user in self.fake.award_emoji
                if (iid, note) == (number, comment_id)]

    def failed_run(self, failed: str, passed: str) -> tuple[int, int, bytes]:
        log = f"{failed}: error CS1002\n".encode()
        run = self.fake.add_pipeline("main", self.sha, "failed",
                                     [FakeJob(failed, "failed", log), FakeJob(passed, "success", b"ok\n")])
        return run, self.fake.job_ids(run)[0], log

    def run_with_artifacts(self, archives: dict[str, bytes]) -> int:
        # A GitLab artifacts archive belongs to a job: one failed job per archive, named like it.
        return self.fake.add_pipeline("main", self.sha, "failed",
                                      [FakeJob(name, "failed", b"", data) for name, data in archives.items()])

    def ci_started_on(self) -> list[str]:
        return [str(created["ref"]) for created in self.fake.created_pipelines]

    def failed_run_of(self, branch: str, sha: str) -> int:
        return self.fake.add_pipeline(branch, sha, "failed", [FakeJob("build", "failed")])

    def rerun_ends(self, run_id: int, ends: str) -> None:
        self.fake.rerun_ends_for[run_id] = ends

    def run_of(self, branch: str, sha: str, outcome: str, workflow: str = "ci.yml") -> int:
        status = {"failed": "failed", "passed": "success", "cancelled": "canceled"}.get(outcome, "running")
        return self.fake.add_pipeline(branch, sha, status, [])
