"""What GitLab CI gives the ci-agent job, laid out for `ci-agent fix --gitlab` in-process.

A `World` holds one scenario: the sample repository (a developer's clone and its bare `origin`,
tests/scenarios/sample_repos.py), the GitLab fake (tests/fakes/gitlab_fake.py) checking branches
against that origin, the Anthropic fake and a runner directory.

`world.pipeline(branch)` is one pipeline of the project's own CI on a branch: a checkout of the
branch tip, the sample's real test command (pytest with colours forced, a JUnit XML result), the
job's trace kept as GitLab serves it (the runner's ANSI colours and collapsible-section markers,
`section_start:<epoch>:<name>\\r\\x1b[0K`), and the result uploaded as the job's artifacts zip;
the pipeline is recorded in the fake (status failed/success).

`world.after(pipeline)` is the job our include file (pipelines/gitlab/ci-agent.yml, rendered with
the inputs of `world.include`) adds to that pipeline: its `rules:` are evaluated for the
pipeline's predefined variables (tests/gitlab/gitlab_ci.py), the job whose `when` matches the
pipeline's status runs (`on_failure` → `<prefix>-fix`, `on_success` → `<prefix>-success`), with the
job's `variables:` as rendered, the predefined `CI_*` variables and the CI/CD variables (secrets).
Its checkout is a clone of origin at the pipeline's commit (detached, full history: GIT_DEPTH 0).
Nothing carries over from one job to the next but git and the fake's state.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.archives import zip_folder
from tests.fakes.gitlab_fake import FakeJob, GitLabFake
from tests.github_scenarios.harness import API_KEY, CI_COMMAND
from tests.gitlab.gitlab_ci import job_when, render
from tests.platform_scenarios.base import (
    FIX_BRANCH,
    SECRETS,
    OriginReads,
    child_command,
    child_environment,
    run_in_process,
)
from tests.scenarios.sample_repos import SampleRepo, git, run

__all__ = ["API_KEY", "BOT", "BOT_TOKEN", "FIX_BRANCH", "JobRun", "Pipeline", "World"]

INCLUDE_FILE = Path(__file__).resolve().parents[2] / "pipelines" / "gitlab" / "ci-agent.yml"
BOT_TOKEN = "glpat-bot"  # the fake's project access token (Developer)
BOT = "project_42_bot_abc"
JOB_TOKEN = "job-token-1"  # the fake's CI_JOB_TOKEN of user `maint`
# The project's .gitlab-ci.yml includes ci-agent with the result globs of its test job.
DEFAULT_INCLUDE: dict[str, Any] = {"test_results": "**/*.trx, **/junit*.xml"}
# pytest with colours forced: the trace holds the real escape codes a coloured tool prints.
PIPELINE_COMMAND = f"{CI_COMMAND} --color=yes"
# Variables of the test process that must not leak into the job (the runner starts clean).
_OURS = ("GITHUB_", "INPUT_", "CI_", "GITLAB_", "RUNNER_")
_SECRETS = SECRETS
ESC = "\x1b"
HEADER = f"{ESC}[36;1m"  # how the runner colours a section's title
COMMAND = f"{ESC}[32;1m"  # ... the script lines it echoes
RED = f"{ESC}[31;1m"
RESET = f"{ESC}[0;m"


@dataclass(frozen=True)
class Pipeline:
    id: int
    branch: str
    sha: str
    status: str  # success | failed
    log: str  # the test command's output, as it printed it (with its colours)
    job_id: int
    source: str = "push"
    mr_iid: int | None = None
    source_project_id: int | None = None  # a merge request pipeline of a fork: the fork's id


@dataclass(frozen=True)
class JobRun:
    """One ci-agent job: exit code, what it printed, and what it left for the pipeline."""

    name: str
    exit_code: int
    stdout: str
    stderr: str
    dotenv: dict[str, str]  # artifacts:reports:dotenv (ci-agent.env)
    summary: str  # ci-agent-summary.md
    workspace: Path
    env: dict[str, str]

    def __str__(self) -> str:
        return (f"{self.name}: exit {self.exit_code}\ndotenv {self.dotenv}\n--- stdout\n{self.stdout}\n"
                f"--- stderr\n{self.stderr}\n--- summary\n{self.summary[:3000]}")

    @property
    def outcome(self) -> str | None:
        return self.dotenv.get("CI_AGENT_OUTCOME")


def parse_dotenv(text: str) -> dict[str, str]:
    """`KEY=value` lines as GitLab's dotenv report takes them: a variable name, `=`, the value on
    the same line (GitLab refuses multi-line values and names it cannot use)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep and name.isidentifier() and name == name.strip(), f"not a dotenv line: {line!r}"
        found[name] = value
    return found


def section(name: str, title: str, body: str, started: int) -> str:
    """A collapsible section as gitlab-runner writes it into the trace."""
    text = body if body.endswith("\n") or not body else body + "\n"
    return (f"section_start:{started}:{name}\r{ESC}[0K{ESC}[0K{HEADER}{title}{RESET}\n{text}"
            f"section_end:{started + 1}:{name}\r{ESC}[0K\n")


def runner_trace(command: str, output: str, exit_code: int, sha: str, branch: str) -> bytes:
    """The whole trace of a docker-executor job that ran `command` and printed `output`."""
    started = int(time.time())
    parts = [
        f"{ESC}[0KRunning with gitlab-runner 17.5.1 (e1c7ee5a){RESET}\n",
        f"{ESC}[0K  on docker-runner-1 t3_xYz, system ID: s_0123456789ab{RESET}\n",
        section("prepare_executor", 'Preparing the "docker" executor',
                f"{ESC}[0KUsing Docker executor with image python:3.11 ...{RESET}\n", started),
        section("get_sources", "Getting source from Git repository",
                f"{COMMAND}Fetching changes...{RESET}\nChecking out {sha[:8]} as detached HEAD (ref is "
                f"{branch})...\n{COMMAND}Skipping Git submodules setup{RESET}\n", started + 2),
        section("step_script", 'Executing "step_script" stage of the job script',
                f"{COMMAND}$ {command}{RESET}\n{output}", started + 4),
    ]
    if exit_code:
        parts.append(section("upload_artifacts_on_failure", "Uploading artifacts for failed job",
                             f"{COMMAND}Uploading artifacts...{RESET}\ntest-results/: found 2 matching "
                             f"artifact files and directories{RESET}\n", started + 9))
        parts.append(section("cleanup_file_variables", "Cleaning up project directory and file based "
                             "variables", "", started + 11))
        parts.append(f"{RED}ERROR: Job failed: exit code {exit_code}\n{RESET}\n")
    else:
        parts.append(f"{COMMAND}Job succeeded{RESET}\n")
    return "".join(parts).encode()


@dataclass
class World(OriginReads):
    tmp: Path
    repo: SampleRepo
    gitlab: GitLabFake
    api: AnthropicFake
    monkeypatch: pytest.MonkeyPatch
    capfd: pytest.CaptureFixture[str]
    include: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_INCLUDE))
    # CI/CD variables of the project (Settings > CI/CD > Variables)
    variables: dict[str, str] = field(default_factory=lambda: {"ANTHROPIC_API_KEY": API_KEY,
                                                              "CI_AGENT_GITLAB_TOKEN": BOT_TOKEN})
    # ... of those, the ones marked "Protected": absent from jobs of unprotected refs
    protected_variables: set[str] = field(default_factory=set)
    pipelines: list[Pipeline] = field(default_factory=list)
    jobs: list[JobRun] = field(default_factory=list)
    _job_ids: Iterator[int] = field(default_factory=lambda: itertools.count(70001))
    _clones: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    # -- git (reads of origin: OriginReads) ---------------------------------------------------

    def clone(self, ref: str, name: str) -> Path:
        path = self.tmp / "runner" / f"{name}-{next(self._clones)}"
        path.parent.mkdir(parents=True, exist_ok=True)
        git(self.tmp, "clone", "-q", f"file://{self.repo.origin}", str(path))
        # A merge request pipeline's commit may be only in refs/merge-requests/<iid>/head (a
        # fork's), which the runner fetches for it.
        git(path, "fetch", "-q", "origin", "+refs/merge-requests/*:refs/merge-requests/*")
        git(path, "checkout", "-q", "--detach", ref if len(ref) == 40 else f"origin/{ref}")
        git(path, "config", "user.name", "Dev Person")
        git(path, "config", "user.email", "dev@example.com")
        return path

    # -- the project's pipeline -------------------------------------------------------------------

    def pipeline(self, branch: str, *, sha: str | None = None, source: str = "push",
                 mr_iid: int | None = None, source_project_id: int | None = None,
                 test_files: Mapping[str, str] | None = None,
                 lint_files: Mapping[str, str] | None = None) -> Pipeline:
        """One pipeline of the project's CI at `branch`'s tip (or `sha`), recorded in the fake.
        `test_files` / `lint_files`: more files in the test / (passing) lint job's artifacts, by
        their path in the project directory (a build log the job tee'd, say)."""
        tip = sha or self.origin_tip(branch)
        assert tip is not None, f"no branch {branch} in origin"
        checkout = self.clone(tip, "ci")
        done = run(PIPELINE_COMMAND, checkout)
        output = done.stdout + done.stderr
        status = "success" if done.returncode == 0 else "failed"
        trace = runner_trace("python -m pytest -q --junitxml=test-results/junit.xml --color=yes", output,
                             done.returncode, tip, branch)
        results = checkout / "test-results"
        # GitLab's artifacts archive holds the uploaded paths relative to the project directory.
        staged = self.tmp / "runner" / f"artifacts-{next(self._clones)}"
        if results.is_dir():
            (staged / "test-results").mkdir(parents=True)
            for path in results.iterdir():
                (staged / "test-results" / path.name).write_bytes(path.read_bytes())
        _stage(staged, test_files or {})
        archive = zip_folder(staged) if results.is_dir() or test_files else None
        lint_trace = runner_trace("ruff check .", "All checks passed!\n", 0, tip, branch)
        lint_archive = None
        if lint_files:
            lint_staged = self.tmp / "runner" / f"artifacts-{next(self._clones)}"
            _stage(lint_staged, lint_files)
            lint_archive = zip_folder(lint_staged)
        lint = FakeJob("lint", "success", lint_trace, lint_archive, stage="build")
        test = FakeJob("test", status, trace, archive)
        pipeline_id = self.gitlab.add_pipeline(branch, tip, status, [lint, test], source=source)
        job_id = max(self.gitlab.job_ids(pipeline_id))
        found = Pipeline(pipeline_id, branch, tip, status, output, job_id, source, mr_iid, source_project_id)
        self.pipelines.append(found)
        return found

    # -- the ci-agent job ----------------------------------------------------------------------

    def protected(self, branch: str) -> bool:
        """Protected branches are names or wildcards (`ci-agent/fix/*`; `*` matches any text)."""
        return any(fnmatch.fnmatchcase(branch, name) for name in self.gitlab.protected_branches)

    def predefined(self, p: Pipeline, workspace: Path, user: str, job_id: int) -> dict[str, str]:
        """GitLab's predefined variables of a job of pipeline `p`."""
        url = self.gitlab.url
        mr = p.source == "merge_request_event"
        slug = p.branch.lower().replace("/", "-")
        found = {
            "CI": "true", "GITLAB_CI": "true", "CI_SERVER_URL": url, "CI_API_V4_URL": f"{url}/api/v4",
            "CI_SERVER_FQDN": url.split("//", 1)[1], "CI_PROJECT_PATH": self.gitlab.project_path,
            "CI_PROJECT_ID": str(self.gitlab.project_id), "CI_PROJECT_NAME": "shop",
            "CI_PROJECT_URL": f"{url}/{self.gitlab.project_path}", "CI_PIPELINE_ID": str(p.id),
            "CI_PIPELINE_SOURCE": p.source,
            "CI_PIPELINE_URL": f"{url}/{self.gitlab.project_path}/-/pipelines/{p.id}",
            "CI_COMMIT_SHA": p.sha, "CI_COMMIT_SHORT_SHA": p.sha[:8], "CI_COMMIT_REF_NAME": p.branch,
            "CI_COMMIT_REF_SLUG": slug, "CI_DEFAULT_BRANCH": self.gitlab.default_branch,
            "CI_COMMIT_REF_PROTECTED": "true" if self.protected(p.branch) else "false",
            "CI_PROJECT_DIR": str(workspace), "CI_BUILDS_DIR": str(workspace.parent),
            "GITLAB_USER_LOGIN": user, "CI_JOB_TOKEN": JOB_TOKEN, "CI_JOB_ID": str(job_id),
            "CI_JOB_NAME": "", "CI_JOB_STAGE": ".post", "GIT_DEPTH": "0",
            # GitLab gives every job the full message of the pipeline's commit
            "CI_COMMIT_MESSAGE": git(self.repo.origin, "log", "-1", "--format=%B", p.sha),
        }
        if mr:
            project = str(self.gitlab.project_id)
            found.update(CI_MERGE_REQUEST_IID=str(p.mr_iid or ""),
                         CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=p.branch,
                         CI_MERGE_REQUEST_TARGET_BRANCH_NAME=self.gitlab.default_branch,
                         CI_MERGE_REQUEST_PROJECT_ID=project,
                         CI_MERGE_REQUEST_SOURCE_PROJECT_ID=str(p.source_project_id or project))
        else:
            found["CI_COMMIT_BRANCH"] = p.branch
        return found

    def ci_agent_job(self, p: Pipeline, env: dict[str, str]) -> tuple[str, dict[str, Any]] | None:
        """The job of the rendered include that runs after `p`, or None (its rules leave it out)."""
        config = render(INCLUDE_FILE.read_text(), self.include)
        wanted = "on_failure" if p.status == "failed" else "on_success"
        for name, job in config.items():
            if isinstance(job, dict) and "script" in job and job_when(job, env) == wanted:
                return name, job
        return None

    def after(self, p: Pipeline, **kwargs: Any) -> JobRun | None:
        """The ci-agent job GitLab runs after pipeline `p`, run to its end; None when no job runs."""
        return self.run_job(p, **kwargs)

    def job(self, p: Pipeline, **kwargs: Any) -> JobRun:
        found = self.run_job(p, **kwargs)
        assert found is not None, f"the include adds no ci-agent job to pipeline {p}"
        return found

    def run_job(self, p: Pipeline, *, user: str = "maint", job_id: int | None = None,
                env: dict[str, str] | None = None, drop: tuple[str, ...] = (),
                force: str | None = None, process: bool = False) -> JobRun | None:
        """`force` names the job to run whatever its rules say (a hand-written or older include).
        `process`: `python -m ci_agent fix --gitlab` in a child process, as the job's container runs
        it (its environment is then that process's own, as /proc shows it), not in this one."""
        job_number = job_id if job_id is not None else next(self._job_ids)
        workspace = self.clone(p.sha, f"job-{job_number}")
        predefined = self.predefined(p, workspace, user, job_number)
        picked = self.ci_agent_job(p, predefined)
        if force is not None:
            config = render(INCLUDE_FILE.read_text(), self.include)
            picked = next((n, j) for n, j in config.items() if n.endswith(f"-{force}"))
        if picked is None:
            return None
        name, job = picked
        variables = {**predefined, "CI_JOB_NAME": name}
        variables.update({k: _as_variable(v) for k, v in (job.get("variables") or {}).items()})
        protected_ref = predefined["CI_COMMIT_REF_PROTECTED"] == "true"
        variables.update({k: v for k, v in self.variables.items()
                          if protected_ref or k not in self.protected_variables})
        variables.update({"CI_AGENT_ANTHROPIC_BASE_URL": self.api.base_url, "CI_AGENT_GITLAB_THROTTLE": "0",
                          "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        variables.update(env or {})
        for gone in drop:
            variables.pop(gone, None)
        code, out, err = (self._spawn if process else self._invoke)(variables, workspace)
        dotenv_path, summary_path = workspace / "ci-agent.env", workspace / "ci-agent-summary.md"
        # what the job wrote; a link the branch committed under that name is not its report
        written = dotenv_path.is_file() and not dotenv_path.is_symlink()
        dotenv = parse_dotenv(dotenv_path.read_text()) if written else {}
        summary = summary_path.read_text() if summary_path.exists() else ""
        found = JobRun(name, code, out, err, dotenv, summary, workspace, variables)
        self.jobs.append(found)
        return found

    def _spawn(self, variables: dict[str, str], workspace: Path) -> tuple[int, str, str]:
        done = subprocess.run(child_command("fix", "--gitlab"), cwd=workspace,
                              env=child_environment(variables, _OURS), text=True,
                              capture_output=True, timeout=300, check=False)
        return done.returncode, done.stdout, done.stderr

    def _invoke(self, variables: dict[str, str], workspace: Path) -> tuple[int, str, str]:
        return run_in_process(self.monkeypatch, self.capfd, variables, workspace, ["fix", "--gitlab"], _OURS)

    # -- what GitLab holds --------------------------------------------------------------------

    def open_mr(self, source: str, target: str, title: str, token: str = "glpat-maint") -> int:
        """A person opens a merge request through the API, as the web UI does; returns its iid."""
        data = json.dumps({"source_branch": source, "target_branch": target, "title": title}).encode()
        request = urllib.request.Request(
            f"{self.gitlab.url}/api/v4/projects/{self.gitlab.project_id}/merge_requests", data=data,
            method="POST", headers={"PRIVATE-TOKEN": token, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(json.load(reply)["iid"])

    def mrs_from(self, branch: str) -> list[dict[str, Any]]:
        return [m for m in self.gitlab.merge_requests.values() if m["source_branch"] == branch]

    def fix_mr(self) -> dict[str, Any]:
        (mr,) = self.mrs_from(FIX_BRANCH)
        return mr

    def notes_on(self, iid: int) -> list[dict[str, Any]]:
        return [n for n in self.gitlab.notes.get(iid, []) if not n.get("system")]

    def created_notes(self, iid: int) -> list[str]:
        """Bodies of every note ci-agent created on `iid` (edits are not creations)."""
        posts = self.gitlab.requests_to("POST", rf"/projects/(42|acme/shop)/merge_requests/{iid}/notes")
        return [str(r.body["body"]) for r in posts if isinstance(r.body, dict)]


def _stage(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _as_variable(value: Any) -> str:
    """A job variable as the job sees it: GitLab passes numbers and booleans as their YAML text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
