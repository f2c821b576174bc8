"""One scenario driver per platform, so a scenario that checks the same behaviour on GitHub and on
GitLab is written once (tests/platform_scenarios/test_*.py, parametrised by the `platform` fixture).

A driver speaks of CI runs (a workflow run / a pipeline), of the ci-agent job after one (the
workflow_run job / the job the include adds), and of the fix request (the pull request / the merge
request) in neutral words; each platform's own vocabulary (`pr_number` or `CI_AGENT_MR_IID`,
`number` or `iid`, `body` or `description`) stays in its driver. What only one platform does stays
in that platform's own scenario files (tests/github_scenarios, tests/gitlab_scenarios).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from tests.fakes import github_fake, gitlab_fake
from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.breakage import PARTIAL
from tests.github_scenarios import harness as github
from tests.gitlab_scenarios import harness as gitlab
from tests.platform_scenarios.base import FIX_BRANCH, with_marker
from tests.platform_scenarios.steps import WRONG_ORDER, WRONG_SUMMARIES, ScriptedWorld, answer
from tests.scenarios.sample_repos import SampleRepo

GitHubPulls = r"/repos/octo/app/pulls$"
GitLabMergeRequests = r"/projects/(42|acme%2Fshop|acme/shop)/merge_requests"


@dataclass(frozen=True)
class Job:
    """One ci-agent job, its outputs under neutral names: `outcome`, `attempt`, `branch`, `tokens`,
    `request` (the fix request's number) and `request_url`."""

    exit_code: int
    outputs: dict[str, str]
    stdout: str
    stderr: str
    summary: str
    story: str  # the platform's own account of the job, for assertion messages

    def __str__(self) -> str:
        return self.story

    @property
    def outcome(self) -> str | None:
        return self.outputs.get("outcome")


@dataclass(frozen=True)
class FixRequest:
    """The fix pull request / merge request as the fake holds it."""

    number: int
    draft: bool
    labels: list[str]
    body: str
    target: str
    is_open: bool


class Run(Protocol):
    """A CI run of a branch: a GitHub workflow run or a GitLab pipeline."""

    @property
    def sha(self) -> str: ...

    @property
    def job_id(self) -> int: ...


class Platform(Protocol):
    name: str
    world: Any
    request_word: str  # "pull request" / "merge request", as ci-agent writes it
    create_failure: str  # how a failed create of the fix request ends its message
    inputs_line: tuple[str, ...]  # regexes the model's `inputs:` line matches

    @property
    def repo(self) -> SampleRepo: ...

    @property
    def api(self) -> AnthropicFake: ...

    def ci(self, branch: str) -> Run: ...

    def failed(self, run: Run) -> bool: ...

    def job(self, run: Run) -> Job: ...

    def retry(self, run: Run) -> Job: ...

    def rerun_job(self, run: Run) -> Job: ...

    def set_input(self, name: str, value: str) -> None: ...

    def fix_request(self) -> FixRequest: ...

    def requests_from(self, branch: str) -> list[FixRequest]: ...

    def request_url(self, number: int) -> str: ...

    def created_notes(self, number: int) -> list[str]: ...

    def status_notes(self, number: int) -> list[dict[str, Any]]: ...

    def open_person_request(self, branch: str) -> int: ...

    def request_ci(self, branch: str, number: int) -> Run: ...

    def fail_creates(self, status: int, times: int) -> None: ...

    def lose_create_answer(self) -> None: ...

    def creates(self) -> int: ...


class _Driver:
    """What every driver reads off its world: the sample repository and the model fake."""

    world: ScriptedWorld

    @property
    def repo(self) -> SampleRepo:
        return self.world.repo

    @property
    def api(self) -> AnthropicFake:
        return self.world.api


@dataclass
class GitHubPlatform(_Driver):
    """GitHub Actions: the ci-agent workflow_run job after each CI run."""

    world: github.World
    name: str = "github"
    request_word: str = "pull request"
    create_failure: str = "attempts to open a pull request"
    inputs_line: tuple[str, ...] = (r"job log \d+-test\.log \(pytest_console",
                                    r"artifact test-results/junit\.xml \(junit")
    jobs_after: dict[int, github.ActionRun] = field(default_factory=dict)  # by CI run: its last job

    def ci(self, branch: str) -> github.CiRun:
        return self.world.ci(branch)

    def failed(self, run: Run) -> bool:
        assert isinstance(run, github.CiRun)
        return run.conclusion == "failure"

    def job(self, run: Run) -> Job:
        assert isinstance(run, github.CiRun)
        done = self.jobs_after[run.id] = self.world.after_ci(run)
        return _github_job(done)

    def retry(self, run: Run) -> Job:
        """"Re-run failed jobs" of the CI run: the same run, `run_attempt` + 1."""
        assert isinstance(run, github.CiRun)
        return self.job(self.world.rerun(run))

    def rerun_job(self, run: Run) -> Job:
        """"Re-run" of the last ci-agent job after `run`: its run id, `run_attempt` + 1."""
        assert isinstance(run, github.CiRun)
        last = self.jobs_after[run.id].env
        done = self.jobs_after[run.id] = self.world.after_ci(run, run_id=int(last["GITHUB_RUN_ID"]),
                                                             run_attempt=int(last["GITHUB_RUN_ATTEMPT"]) + 1)
        return _github_job(done)

    def set_input(self, name: str, value: str) -> None:
        self.world.inputs[name] = value

    def fix_request(self) -> FixRequest:
        return _pull(self.world.fix_pull())

    def requests_from(self, branch: str) -> list[FixRequest]:
        return [_pull(p) for p in self.world.pulls_from(branch)]

    def request_url(self, number: int) -> str:
        return f"https://github.com/octo/app/pull/{number}"

    def created_notes(self, number: int) -> list[str]:
        return [str(body) for body in self.world.created_comments(number)]

    def status_notes(self, number: int) -> list[dict[str, Any]]:
        return with_marker(self.world.comments_on(number))

    def open_person_request(self, branch: str) -> int:
        """PR #1 from `branch` (already pushed) into main, opened by a person."""
        github.open_person_pr(self.world, branch, push=False)
        return 1

    def request_ci(self, branch: str, number: int) -> github.CiRun:
        """A `pull_request` CI run of `branch`, listing the same-repository PR `number`."""
        return self.world.ci(branch, pull_requests=[github.same_repo_pr(self.world, number, branch)],
                             event="pull_request")

    def fail_creates(self, status: int, times: int) -> None:
        self.world.github.inject(github_fake.server_error(status), path=GitHubPulls, method="POST",
                                 times=times)

    def lose_create_answer(self) -> None:
        self.world.github.inject_transport(PARTIAL, path=GitHubPulls, method="POST", times=1)

    def creates(self) -> int:
        return len(self.world.github.requests_to("POST", GitHubPulls))


def _github_job(run: github.ActionRun) -> Job:
    outputs = {_GITHUB_NAMES.get(k, k): v for k, v in run.outputs.items()}
    return Job(run.exit_code, outputs, run.stdout, run.stderr, run.summary, str(run))


_GITHUB_NAMES = {"pr_number": "request", "pr_url": "request_url"}


def _pull(pull: dict[str, Any]) -> FixRequest:
    return FixRequest(pull["number"], pull["draft"], list(pull["labels"]), pull["body"] or "", pull["base"],
                      pull["state"] == "open")


@dataclass
class GitLabPlatform(_Driver):
    """GitLab CI: the job the include adds after each pipeline, with the project access token."""

    world: gitlab.World
    name: str = "gitlab"
    request_word: str = "merge request"
    create_failure: str = "attempts to create merge requests"
    inputs_line: tuple[str, ...] = (r"artifact \S+/test-results/junit\.xml \(junit",)

    def ci(self, branch: str) -> gitlab.Pipeline:
        return self.world.pipeline(branch)

    def failed(self, run: Run) -> bool:
        assert isinstance(run, gitlab.Pipeline)
        return run.status == "failed"

    def job(self, run: Run) -> Job:
        assert isinstance(run, gitlab.Pipeline)
        return _gitlab_job(self.world.job(run))

    def retry(self, run: Run) -> Job:
        """"Retry" of the job: the same pipeline, a new job id."""
        return self.job(run)

    def rerun_job(self, run: Run) -> Job:
        return self.retry(run)

    def set_input(self, name: str, value: str) -> None:
        self.world.include = {**self.world.include, name: value}

    def fix_request(self) -> FixRequest:
        return _merge_request(self.world.fix_mr())

    def requests_from(self, branch: str) -> list[FixRequest]:
        return [_merge_request(m) for m in self.world.mrs_from(branch)]

    def request_url(self, number: int) -> str:
        return f"{self.world.gitlab.web_url}/-/merge_requests/{number}"

    def created_notes(self, number: int) -> list[str]:
        return self.world.created_notes(number)

    def status_notes(self, number: int) -> list[dict[str, Any]]:
        return with_marker(self.world.notes_on(number))

    def open_person_request(self, branch: str) -> int:
        """A merge request from `branch` (already pushed) into main, opened by a person."""
        return self.world.open_mr(branch, "main", "Stars")

    def request_ci(self, branch: str, number: int) -> gitlab.Pipeline:
        """A merge request pipeline of `branch` for merge request `number`."""
        return self.world.pipeline(branch, source="merge_request_event", mr_iid=number)

    def fail_creates(self, status: int, times: int) -> None:
        fault = gitlab_fake.Fault(gitlab_fake.server_error(status), path=r"/merge_requests$", method="POST",
                                  times=times)
        self.world.gitlab.add_fault(fault)

    def lose_create_answer(self) -> None:
        self.world.gitlab.add_transport_fault(PARTIAL, path=r"/merge_requests$", method="POST")

    def creates(self) -> int:
        return len(self.world.gitlab.requests_to("POST", GitLabMergeRequests))


def _gitlab_job(run: gitlab.JobRun) -> Job:
    outputs = {_GITLAB_NAMES.get(k, k.removeprefix("CI_AGENT_").lower()): v for k, v in run.dotenv.items()}
    return Job(run.exit_code, outputs, run.stdout, run.stderr, run.summary, str(run))


_GITLAB_NAMES = {"CI_AGENT_MR_IID": "request", "CI_AGENT_MR_URL": "request_url"}


def _merge_request(mr: dict[str, Any]) -> FixRequest:
    return FixRequest(mr["iid"], mr["draft"], list(mr["labels"]), mr["description"] or "",
                      mr["target_branch"], mr["state"] == "opened")


# -- checks and steps every platform's scenarios repeat --------------------------------------------


def the_status_note(platform: Platform, number: int) -> dict[str, Any]:
    found = platform.status_notes(number)
    assert len(found) == 1, f"exactly one status comment / note on {number}: {found}"
    return dict(found[0])  # a copy: the fake edits its own


def assert_outputs(job: Job, outcome: str, **expected: str) -> None:
    assert job.outcome == outcome, str(job)
    for name, value in expected.items():
        assert job.outputs.get(name) == value, (name, str(job))


def assert_fix_outputs(platform: Platform, job: Job, outcome: str, attempt: int) -> FixRequest:
    """The job's outputs name the fix request, the branch and the attempt; it spent tokens."""
    request = platform.fix_request()
    assert_outputs(job, outcome, attempt=str(attempt), branch=FIX_BRANCH, request=str(request.number),
                   request_url=platform.request_url(request.number))
    assert int(job.outputs.get("tokens") or "0") > 0, str(job)
    return request


def fail_attempts(platform: Platform, count: int) -> tuple[list[str], Run]:
    """Attempts 1..count, each a wrong patch on top of the last, each failing the fix branch's CI.
    Returns the status note's text after each attempt was pushed, and the last (red) CI run."""
    red = platform.ci("main")
    current = "broken"
    said: list[str] = []
    for name in WRONG_ORDER[:count]:
        answer(platform, current, name, summary=WRONG_SUMMARIES[name])
        done = platform.job(red)
        assert done.exit_code == 0 and done.outcome == "committed", str(done)
        said.append(the_status_note(platform, platform.fix_request().number)["body"])
        current = name
        red = platform.ci(FIX_BRANCH)
        assert platform.failed(red)
    return said, red
