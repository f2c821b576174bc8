"""The forge-neutral facts of one CI run, shared by the engine and every platform: the job's inputs
(`ActionInputs`, read by each platform from its own variables), what triggered the run
(`Trigger`, judged the same way everywhere) and the names of our branches and trailers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ci_agent.errors import UsageError

MODES = ("pr", "push", "propose")
DEFAULT_RESULTS = "**/*.trx"
DEFAULT_CONFIG = ".ci-agent.yml"
FIX_BRANCH_PREFIX = "ci-agent/fix/"


@dataclass(frozen=True)
class ActionInputs:
    anthropic_api_key: str = ""
    token: str = ""  # input github_token (GitLab: the CI_AGENT_GITLAB_TOKEN variable)
    build_logs: tuple[str, ...] = ()
    test_results: tuple[str, ...] = (DEFAULT_RESULTS,)
    verify: str = ""
    mode: str = "pr"
    max_attempts: int = 3
    model: str = ""
    config: str = DEFAULT_CONFIG
    ci_workflow: str = ""
    draft: bool = True
    dry_run: bool = False
    # Inline only: `${{ job.status }}` of the job the step runs in. "success" on a fix branch is the
    # fix branch's green run (the step then reports it instead of fixing); empty or "failure": a
    # step above failed.
    job_status: str = ""

    def secrets(self) -> tuple[str, ...]:
        return tuple(v for v in (self.anthropic_api_key, self.token) if v)


def split_list(text: str) -> tuple[str, ...]:
    """A list input: one item per line or comma-separated; blanks dropped, order kept."""
    items = (part.strip() for line in text.splitlines() for part in line.split(","))
    return tuple(dict.fromkeys(item for item in items if item))


# The inputs every platform offers under these names (GitHub: `INPUT_<NAME>`, GitLab:
# `CI_AGENT_INPUT_<NAME>`); each platform reads its own variables into a mapping of these names.
INPUT_NAMES = ("anthropic_api_key", "github_token", "build_logs", "test_results", "verify", "mode",
               "max_attempts", "model", "config", "ci_workflow", "draft", "dry_run", "job_status")
JOB_STATUSES = ("success", "failure", "cancelled")
# The YAML 1.2 core booleans, as `core.getBooleanInput` of the Actions toolkit accepts them.
_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")


def read_inputs(raw: Mapping[str, str]) -> ActionInputs:
    """Every input, validated the same way on every platform; `raw` maps an input name to its text
    as the job received it. An empty input takes its default (a runner passes inputs the workflow
    left out as empty strings)."""
    def text(name: str) -> str:
        return raw.get(name, "").strip()

    mode = text("mode") or "pr"
    if mode not in MODES:
        raise UsageError(f"input mode must be one of {', '.join(MODES)}, not {mode[:40]!r}")
    attempts_text = text("max_attempts") or "3"
    try:
        max_attempts = int(attempts_text)
    except ValueError:
        max_attempts = 0
    if not 1 <= max_attempts <= 10:
        raise UsageError("input max_attempts must be a whole number from 1 to 10, "
                         f"not {attempts_text[:40]!r}")
    return ActionInputs(
        anthropic_api_key=text("anthropic_api_key"),
        token=text("github_token"),
        build_logs=split_list(raw.get("build_logs", "")),
        test_results=split_list(raw.get("test_results", "")) or (DEFAULT_RESULTS,),
        verify=text("verify"),
        mode=mode,
        max_attempts=max_attempts,
        model=text("model"),
        config=text("config") or DEFAULT_CONFIG,
        ci_workflow=text("ci_workflow"),
        draft=_bool(text("draft"), "draft", True),
        dry_run=_bool(text("dry_run"), "dry_run", False),
        job_status=_job_status(text("job_status")),
    )


def _bool(text: str, name: str, default: bool) -> bool:
    if not text:
        return default
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise UsageError(f"input {name} must be true or false, not {text[:40]!r}")


def _job_status(given: str) -> str:
    text = given.lower()
    if text and text not in JOB_STATUSES:
        raise UsageError(f"input job_status must be empty or one of {', '.join(JOB_STATUSES)} "
                         f"(pass ${{{{ job.status }}}}), not {text[:40]!r}")
    return text


@dataclass(frozen=True)
class Trigger:
    """What failed and where. `refused`/`skipped` carry the sentence to show; when either is set
    nothing may be checked out, fetched or sent anywhere."""

    kind: str  # "inline" | "workflow_run" (GitHub) | "pipeline" (GitLab)
    branch: str  # the branch whose CI ran (a source branch, or one of our fix branches)
    sha: str
    run_id: str
    run_attempt: str
    conclusion: str  # "failure", "success", ... ("failure" inline: we run after a failed step)
    pr_number: int | None = None  # the source pull request, when there is one
    actor: str = ""
    fork: bool = False
    refused: str = ""
    skipped: str = ""
    # the run's commit is one of our attempts (its message carries the trailer): a green run of
    # it matters in modes push/propose, where attempts live on the failing branch itself
    attempt_commit: bool = False
    # The CI definition that ran, where a forge has several (GitHub: the workflow's id or file);
    # issue 16 compares a failure with the default branch's latest run of the same workflow.
    workflow: str = ""

    @property
    def on_fix_branch(self) -> bool:
        return self.branch.startswith(FIX_BRANCH_PREFIX)

    @property
    def failed(self) -> bool:
        return self.conclusion in {"failure", "timed_out", "startup_failure"}


FORK_REFUSAL = ("this run comes from a fork ({fork}); ci-agent never checks out or runs a fork's "
                "code with this repository's secrets, so it did nothing. A maintainer can push the "
                "branch to this repository to have it fixed.")


ATTEMPT_TRAILER = "CI-Agent-Attempt:"


def is_attempt_message(message: str) -> bool:
    """A commit message with our attempt trailer (a line starting `CI-Agent-Attempt:`)."""
    return any(line.startswith(ATTEMPT_TRAILER) for line in message.splitlines())


def judge(found: Trigger, head_repo: str) -> Trigger:
    if found.fork:
        return replace(found, refused=FORK_REFUSAL.format(fork=head_repo))
    if not found.branch:
        return replace(found, skipped="no branch is named for this run (a tag or a detached "
                       "checkout?); there is nothing to open a fix against")
    if found.branch.startswith("ci-agent/") and not found.on_fix_branch:
        return replace(found, skipped=f"{found.branch} is a ci-agent branch; ci-agent never fixes "
                       "its own branches")
    if not found.failed and not found.on_fix_branch and not found.attempt_commit:
        return replace(found, skipped=f"the run concluded {found.conclusion or 'without a conclusion'}"
                       "; there is nothing to fix")
    return found
