"""What GitHub Actions gives a container step, laid out for `ci-agent fix --github` in-process.

A `World` holds one scenario: the sample repository (a developer's clone and its bare `origin`,
tests/scenarios/sample_repos.py), the GitHub fake wired to that origin (`SiteFake`), the
Anthropic fake, and a runner directory. Each `world.action(...)` is one job of the ci-agent
workflow: a fresh checkout of `origin` (as actions/checkout makes), the event payload written to
`GITHUB_EVENT_PATH`, the `GITHUB_*` variables and `INPUT_*` inputs the runner sets, fresh
`GITHUB_OUTPUT` / `GITHUB_STEP_SUMMARY` files, then `ci_agent.cli.main.main(["fix", "--github"])`.

`world.ci(branch)` simulates one run of the repository's CI workflow on a branch: a checkout of
the branch tip, the sample's real test command (pytest, with a JUnit XML result), the log kept
as GitHub serves it (timestamped lines) and the result uploaded as an artifact zip; the run is
recorded in the fake (conclusion success/failure), so the next workflow_run job can fetch it.
"""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.archives import zip_folder
from tests.github_scenarios.fake_site import (
    SERVER_URL,
    SiteFake,
    pull_request_event,
    push_event,
    run_pull_request,
    workflow_run_event,
)
from tests.platform_scenarios.base import (
    FIX_BRANCH,
    ROOT_CAUSE,
    SUMMARY,
    OriginReads,
    child_command,
    child_environment,
    run_in_process,
)
from tests.scenarios.sample_repos import PYTEST, SampleRepo, git, run

__all__ = ["ACTIONS_BOT", "ACTIONS_TOKEN", "API_KEY", "FIX_BRANCH", "ROOT_CAUSE", "SUMMARY", "USER_TOKEN",
           "ActionRun", "CiRun", "Job", "World", "open_person_pr", "refuse_rewinds", "same_repo_pr"]

ACTIONS_TOKEN = "ghs_fake_actions"  # GITHUB_TOKEN: acts as github-actions[bot]
USER_TOKEN = "ghp_fake_user"  # a PAT of octocat (admin): its pushes start CI by themselves
ACTIONS_BOT = "github-actions[bot]"
API_KEY = "sk-ant-api03-github-scenario-key-0000000000"
# The action's inputs with the defaults of the contract; the runner passes every declared input.
DEFAULT_INPUTS = {"anthropic_api_key": API_KEY, "github_token": ACTIONS_TOKEN, "build_logs": "",
                  "test_results": "**/*.trx", "verify": "", "mode": "pr", "max_attempts": "3",
                  "model": "", "config": ".ci-agent.yml", "ci_workflow": "", "draft": "true",
                  "dry_run": "false", "job_status": ""}
CI_COMMAND = f"{PYTEST} --junitxml=test-results/junit.xml"
# The result globs pipelines/github/ci-agent-on-failure.yml passes (the run's artifacts are read).
TEMPLATE_RESULTS = "**/*.trx\n**/junit*.xml"
# Variables of the test process that must not leak into the job (the runner starts clean).
_OURS = ("GITHUB_", "INPUT_", "CI_AGENT_", "RUNNER_")


@dataclass(frozen=True)
class CiRun:
    id: int
    branch: str
    sha: str
    conclusion: str  # success | failure
    log: str  # the test command's output, as it printed it
    job_id: int


@dataclass(frozen=True)
class ActionRun:
    """One ci-agent job: exit code, what it printed, and what it left for the workflow."""

    exit_code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    workspace: Path
    env: dict[str, str]

    def __str__(self) -> str:
        return (f"exit {self.exit_code}\noutputs {self.outputs}\n--- stdout\n{self.stdout}\n"
                f"--- stderr\n{self.stderr}\n--- summary\n{self.summary[:3000]}")


@dataclass
class Job:
    """A prepared ci-agent job: its environment, workspace and step files."""

    world: World
    variables: dict[str, str]
    workspace: Path
    output: Path
    summary: Path
    child: subprocess.Popen[str] | None = None

    def run(self, process: bool = False) -> ActionRun:
        if process:
            self.start()
            return self.wait()
        code, out, err = self.world._invoke(self.variables, self.workspace)
        return self.world.finish(self, code, out, err)

    def start(self) -> Job:
        """`python -m ci_agent fix --github` in a child process, as the container's entrypoint."""
        self.child = subprocess.Popen(child_command("fix", "--github"), cwd=self.workspace,
                                      env=child_environment(self.variables, _OURS), text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return self

    def wait(self) -> ActionRun:
        assert self.child is not None
        out, err = self.child.communicate(timeout=300)
        return self.world.finish(self, self.child.returncode, out, err)


def parse_github_output(text: str) -> dict[str, str]:
    """`name=value` lines and `name<<DELIMITER` ... `DELIMITER` blocks, as the runner reads them."""
    found: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            for inner in lines:
                if inner == delimiter:
                    break
                body.append(inner)
            else:
                raise AssertionError(f"output {name!r}: delimiter {delimiter!r} never closed")
            found[name] = "\n".join(body)
        else:
            name, sep, value = line.partition("=")
            assert sep, f"not an output line: {line!r}"
            found[name] = value
    return found


def timestamped(text: str, when: str = "2026-12-02T16:00:00.0000000Z") -> bytes:
    """A job log as GitHub serves it: every line prefixed with its timestamp."""
    return "".join(f"{when} {line}\n" for line in text.splitlines()).encode()


@dataclass
class World(OriginReads):
    tmp: Path
    repo: SampleRepo
    github: SiteFake
    api: AnthropicFake
    monkeypatch: pytest.MonkeyPatch
    capfd: pytest.CaptureFixture[str]
    inputs: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_INPUTS))
    ci_runs: list[CiRun] = field(default_factory=list)
    actions: list[ActionRun] = field(default_factory=list)
    _run_ids: Iterator[int] = field(default_factory=lambda: itertools.count(9101))
    _job_runs: Iterator[int] = field(default_factory=lambda: itertools.count(7701))

    # -- git (reads of origin: OriginReads) ---------------------------------------------------

    def checkout(self, ref: str, name: str, shallow: bool = False) -> Path:
        """A clone of origin at branch `ref`, as actions/checkout leaves it: full history
        (`fetch-depth: 0`), or `shallow` (its default `fetch-depth: 1`)."""
        path = self.tmp / "runner" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        depth = ["--depth", "1"] if shallow else []
        git(self.tmp, "clone", "-q", *depth, "--branch", ref, f"file://{self.repo.origin}", str(path))
        git(path, "config", "user.name", "Dev Person")
        git(path, "config", "user.email", "dev@example.com")
        return path

    def human_commit(self, branch: str, path: str = "README.md", text: str = "\nA note from a person.\n",
                     message: str = "docs: a person's note") -> str:
        """A person pushes a commit to `branch` (from their own clone); returns its sha."""
        clone = self.checkout(branch, f"human-{next(self._job_runs)}")
        target = clone / path
        target.write_text((target.read_text() if target.exists() else "") + text)
        git(clone, "add", path)
        git(clone, "commit", "-q", "-m", message)
        git(clone, "push", "-q", "origin", branch)
        return git(clone, "rev-parse", "HEAD").strip()

    # -- CI --------------------------------------------------------------------------------------

    def ci(self, branch: str, pull_requests: list[dict[str, Any]] | None = None,
           event: str = "push") -> CiRun:
        """One run of the repository's CI on `branch`, recorded in the fake."""
        run_id = next(self._run_ids)
        clone = self.checkout(branch, f"ci-{run_id}")
        sha = git(clone, "rev-parse", "HEAD").strip()
        done = run(CI_COMMAND, clone)
        output = done.stdout + done.stderr
        conclusion = "success" if done.returncode == 0 else "failure"
        log_text = (f"##[group]Run {shlex.join(['python', '-m', 'pytest', '-q'])}\n{output}"
                    + ("" if done.returncode == 0 else
                       f"##[error]Process completed with exit code {done.returncode}.\n"))
        results = clone / "test-results"
        artifacts = [("test-results", zip_folder(results))] if results.is_dir() else []
        job_id = self.github.add_ci_run(run_id, head_branch=branch, head_sha=sha, conclusion=conclusion,
                                        log=timestamped(log_text), artifacts=artifacts, event=event,
                                        pull_requests=pull_requests)
        found = CiRun(run_id, branch, sha, conclusion, output, job_id)
        self.ci_runs.append(found)
        return found

    def rerun(self, ci: CiRun) -> CiRun:
        """GitHub's "Re-run failed jobs": same run id, `run_attempt` + 1, the same commit."""
        meta = self.github.run_meta[ci.id]
        meta["run_attempt"] += 1
        return ci

    # -- the ci-agent job ----------------------------------------------------------------------

    def after_ci(self, ci: CiRun, *, process: bool = False, **kwargs: Any) -> ActionRun:
        """The ci-agent workflow_run job triggered by the completion of `ci`, run to its end."""
        return self.job_after_ci(ci, **kwargs).run(process)

    def job_after_ci(self, ci: CiRun, *, head_repository: str | None = None, actor: str = "octocat",
                     **kwargs: Any) -> Job:
        """The ci-agent workflow_run job triggered by the completion of `ci`, prepared."""
        payload = workflow_run_event(self.github.full_name, self.github.run_json(ci.id),
                                     head_repository=head_repository, actor=actor)
        default_tip = self.origin_tip("main")
        assert default_tip is not None
        # As pipelines/github/ci-agent-on-failure.yml: the checkout is of the failed run's commit
        # (detached, full history), and skipped for a fork's run (an empty workspace).
        inputs = {"test_results": TEMPLATE_RESULTS, **kwargs.pop("inputs", {})}
        fork = head_repository not in (None, self.github.full_name)
        # workflow_run jobs run on the default branch: GITHUB_REF/SHA are its last commit.
        return self._prepare("workflow_run", payload, ref="main", sha=default_tip, actor=actor,
                             detach_at=None if fork else ci.sha, no_checkout=fork, inputs=inputs, **kwargs)

    def inline(self, branch: str, *, build_log: str | None = None, event: str = "push",
               pr: int | None = None, **kwargs: Any) -> ActionRun:
        """The ci-agent step of the CI job itself, after the failed test step (`if: failure()`):
        the test step's output is a log file on the runner."""
        tip = self.origin_tip(branch)
        assert tip is not None
        if build_log is None:
            probe = self.checkout(branch, f"inline-test-{next(self._job_runs)}")
            done = run(CI_COMMAND, probe)
            build_log = done.stdout + done.stderr
        log_path = self.tmp / "runner" / f"step-{next(self._job_runs)}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(build_log)
        inputs = {"build_logs": str(log_path), **kwargs.pop("inputs", {})}
        full = self.github.full_name
        if event == "pull_request":
            assert pr is not None
            main_tip = self.origin_tip("main") or ""
            payload = pull_request_event(full, pr, full, branch, tip, "main", main_tip, "octocat")
            return self.action("pull_request", payload, ref=f"{pr}/merge", sha=tip, checkout=branch,
                               head_ref=branch, base_ref="main", inputs=inputs, **kwargs)
        payload = push_event(full, branch, "0" * 40, tip, "octocat")
        return self.action("push", payload, ref=branch, sha=tip, inputs=inputs, **kwargs)

    def action(self, event_name: str, payload: dict[str, Any], *, ref: str, sha: str,
               checkout: str | None = None, detach_at: str | None = None, no_checkout: bool = False,
               head_ref: str = "", base_ref: str = "", actor: str = "octocat",
               run_id: int | None = None, run_attempt: int = 1, inputs: dict[str, str] | None = None,
               env: dict[str, str] | None = None, process: bool = False, shallow: bool = False) -> ActionRun:
        """Run `ci-agent fix --github` as the action's container step of one job: in this process,
        or (`process=True`) as `python -m ci_agent` in a child process, started and awaited."""
        return self._prepare(event_name, payload, ref=ref, sha=sha, checkout=checkout, detach_at=detach_at,
                             no_checkout=no_checkout, head_ref=head_ref, base_ref=base_ref, actor=actor,
                             run_id=run_id, run_attempt=run_attempt, inputs=inputs, env=env,
                             shallow=shallow).run(process)

    def _prepare(self, event_name: str, payload: dict[str, Any], *, ref: str, sha: str,
                 checkout: str | None = None, detach_at: str | None = None, no_checkout: bool = False,
                 head_ref: str = "", base_ref: str = "", actor: str = "octocat", run_id: int | None = None,
                 run_attempt: int = 1, inputs: dict[str, str] | None = None,
                 env: dict[str, str] | None = None, shallow: bool = False) -> Job:
        job = run_id if run_id is not None else next(self._job_runs)
        label = f"job-{job}-{run_attempt}-{len(self.actions)}"
        if no_checkout:
            workspace = self.tmp / "runner" / label
            workspace.mkdir(parents=True)
        else:
            workspace = self.checkout(checkout or (ref if event_name != "workflow_run" else "main"), label,
                                      shallow)
            if detach_at is not None:
                git(workspace, "checkout", "-q", "--detach", detach_at)
        files = self.tmp / "runner" / f"{label}-files"
        files.mkdir(parents=True)
        event_path = files / "event.json"
        event_path.write_text(json.dumps(payload, indent=2))
        output, summary = files / "output", files / "step_summary"
        output.touch()
        summary.touch()
        ref_name = ref
        full_ref = f"refs/pull/{ref}" if event_name == "pull_request" else f"refs/heads/{ref}"
        variables = {
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path), "GITHUB_REPOSITORY": self.github.full_name,
            "GITHUB_REPOSITORY_OWNER": self.github.owner,
            "GITHUB_REF": full_ref,
            "GITHUB_REF_NAME": ref_name, "GITHUB_REF_TYPE": "branch", "GITHUB_HEAD_REF": head_ref,
            "GITHUB_BASE_REF": base_ref, "GITHUB_SHA": sha, "GITHUB_RUN_ID": str(job),
            "GITHUB_RUN_ATTEMPT": str(run_attempt), "GITHUB_RUN_NUMBER": str(job % 1000),
            "GITHUB_WORKSPACE": str(workspace), "GITHUB_API_URL": self.github.base_url,
            "GITHUB_GRAPHQL_URL": f"{self.github.base_url}/graphql", "GITHUB_SERVER_URL": SERVER_URL,
            "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_ENV": str(files / "env"), "GITHUB_PATH": str(files / "path"),
            "GITHUB_ACTOR": actor, "GITHUB_TRIGGERING_ACTOR": actor, "GITHUB_WORKFLOW": "ci-agent",
            "GITHUB_JOB": "fix", "GITHUB_ACTION": "ci-agent", "RUNNER_OS": "Linux",
            "RUNNER_TEMP": str(files), "CI_AGENT_ANTHROPIC_BASE_URL": self.api.base_url,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "CI_AGENT_GITHUB_THROTTLE": "0",  # the fake needs no spacing between requests
        }
        for name, value in {**self.inputs, **(inputs or {})}.items():
            variables[f"INPUT_{name.upper()}"] = value
        variables.update(env or {})
        return Job(self, variables, workspace, output, summary)

    def finish(self, job: Job, code: int, out: str, err: str) -> ActionRun:
        found = ActionRun(code, out, err, parse_github_output(job.output.read_text()),
                          job.summary.read_text(), job.workspace, job.variables)
        self.actions.append(found)
        return found

    def _invoke(self, variables: dict[str, str], workspace: Path) -> tuple[int, str, str]:
        return run_in_process(self.monkeypatch, self.capfd, variables, workspace, ["fix", "--github"], _OURS)

    # -- what GitHub holds --------------------------------------------------------------------

    def pulls_from(self, branch: str) -> list[dict[str, Any]]:
        return [p for p in self.github.pulls.values() if p["head"] == branch]

    def fix_pull(self) -> dict[str, Any]:
        (pull,) = self.pulls_from(FIX_BRANCH)
        return pull

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.github.comments.values() if c["number"] == number]

    def created_comments(self, number: int) -> list[Any]:
        """Bodies of every comment ci-agent created on `number` (edits are not creations)."""
        posts = self.github.requests_to("POST", rf"/repos/octo/app/issues/{number}/comments")
        return [r.body["body"] for r in posts]

    def all_github_text(self) -> str:
        """Everything ci-agent sent to GitHub or left there: bodies, titles, comments."""
        sent = [json.dumps(r.body) for r in self.github.requests if r.server == "api" and r.body]
        held = [json.dumps(p) for p in self.github.pulls.values()]
        comments = [c["body"] for c in self.github.comments.values()]
        return "\n".join(sent + held + comments)


def same_repo_pr(world: World, number: int, branch: str) -> dict[str, Any]:
    """The `workflow_run.pull_requests` entry of a same-repository PR from `branch` into main."""
    return run_pull_request(world.github.full_name, number, branch, world.origin_tip(branch) or "",
                            "main", world.origin_tip("main") or "")


def open_person_pr(world: World, branch: str = "feature/stars", push: bool = True) -> None:
    """PR #1: a person's open same-repository PR from `branch` into main, `branch` pushed from
    main's tip unless `push` is false; the fake numbers the PRs opened after it from 2."""
    if push:
        world.repo.git("push", "-q", "origin", f"main:refs/heads/{branch}")
    world.github.pulls[1] = {"number": 1, "state": "open", "title": "Stars", "body": "", "draft": False,
                             "head": branch, "base": "main", "user": "octocat", "labels": []}
    world.github._numbers = iter(range(2, 100))  # type: ignore[assignment]


def refuse_rewinds(world: World) -> None:
    """Origin refuses to delete or rewind any branch (a pre-receive hook), as a protected-branch
    rule or an outage would: a push taken back cannot be taken back."""
    hook = world.repo.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nwhile read old new ref; do\n"
                    "  case $new in 0000000000000000000000000000000000000000) exit 1;; esac\n"
                    "  if [ $old != 0000000000000000000000000000000000000000 ] && "
                    "! git merge-base --is-ancestor $old $new; then exit 1; fi\ndone\n")
    hook.chmod(0o755)
