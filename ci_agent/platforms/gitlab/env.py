"""GitLab CI: the fix job's inputs and the pipeline it runs in, read from the job's environment.

`pipelines/gitlab/ci-agent.yml` turns its `spec: inputs` into `CI_AGENT_INPUT_<NAME>` job
variables (`gitlab_inputs(env)` is the single place they are read) and says which job it is with
`CI_AGENT_TRIGGER`: `on_failure` (the `.post` job after a failed pipeline) or `on_success` (the
job that reports a green pipeline on a `ci-agent/fix/*` branch). Secrets are CI/CD variables,
never inputs: `ANTHROPIC_API_KEY` and `CI_AGENT_GITLAB_TOKEN` (else `CI_JOB_TOKEN`).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ci_agent.engine.types import (
    FORK_REFUSAL,
    ActionInputs,
    Trigger,
    is_attempt_message,
    judge,
    read_inputs,
)
from ci_agent.errors import UsageError

GITLAB_INPUT_PREFIX = "CI_AGENT_INPUT_"
GITLAB_INPUT_NAMES = ("build_logs", "test_results", "verify", "mode", "max_attempts", "model", "config",
                      "draft", "dry_run")
TOKEN_VARIABLE = "CI_AGENT_GITLAB_TOKEN"
TRIGGER_VARIABLE = "CI_AGENT_TRIGGER"
TRIGGERS = ("on_failure", "on_success")
OUTPUT_ENV_FILE = "ci-agent.env"  # artifacts:reports:dotenv
SUMMARY_FILE = "ci-agent-summary.md"


def gitlab_input_env_name(name: str) -> str:
    return GITLAB_INPUT_PREFIX + name.upper()


def gitlab_inputs(env: Mapping[str, str]) -> ActionInputs:
    """The include's inputs, validated as the GitHub action's are (same names, same rules); the
    key and token come from CI/CD variables (masked) rather than inputs, which GitLab shows."""
    raw = {name: env.get(gitlab_input_env_name(name), "") for name in GITLAB_INPUT_NAMES}
    raw["anthropic_api_key"] = env.get("ANTHROPIC_API_KEY", "")
    return replace(read_inputs(raw), token=env.get(TOKEN_VARIABLE, "").strip())


@dataclass(frozen=True)
class GitLabContext:
    server_url: str
    project_path: str
    project_id: str
    pipeline_id: str
    trigger: str  # on_failure | on_success
    sha: str = ""
    branch: str = ""  # CI_COMMIT_BRANCH: empty for tags and merge request pipelines
    ref_name: str = ""
    tag: str = ""
    mr_iid: str = ""
    mr_source_branch: str = ""
    mr_source_project_id: str = ""
    project_dir: Path = Path(".")
    user_login: str = ""
    job_name: str = ""
    job_token: str = ""
    ref_protected: bool = False
    commit_message: str = ""


def in_gitlab_ci(env: Mapping[str, str]) -> bool:
    return env.get("GITLAB_CI") == "true"


def gitlab_context(env: Mapping[str, str]) -> GitLabContext:
    server = env.get("CI_SERVER_URL", "").rstrip("/")
    try:
        parsed = urllib.parse.urlparse(server)
        host = parsed.hostname  # raises for a malformed port or IPv6 literal
    except ValueError:
        parsed, host = urllib.parse.urlparse(""), None
    if parsed.scheme not in ("http", "https") or not host:
        raise UsageError(f"CI_SERVER_URL must be the GitLab server's URL, not {server[:80]!r}; is this "
                         "running in GitLab CI?")
    path = env.get("CI_PROJECT_PATH", "")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+", path):
        raise UsageError(f"CI_PROJECT_PATH must be group/project, not {path[:80]!r}")
    which = env.get(TRIGGER_VARIABLE, "").strip() or "on_failure"
    if which not in TRIGGERS:
        raise UsageError(f"{TRIGGER_VARIABLE} must be on_failure or on_success, not {which[:40]!r}")
    return GitLabContext(
        server_url=server, project_path=path, project_id=env.get("CI_PROJECT_ID", ""),
        pipeline_id=env.get("CI_PIPELINE_ID", ""), trigger=which, sha=env.get("CI_COMMIT_SHA", ""),
        branch=env.get("CI_COMMIT_BRANCH", ""), ref_name=env.get("CI_COMMIT_REF_NAME", ""),
        tag=env.get("CI_COMMIT_TAG", ""), mr_iid=env.get("CI_MERGE_REQUEST_IID", ""),
        mr_source_branch=env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", ""),
        mr_source_project_id=env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", ""),
        project_dir=Path(env.get("CI_PROJECT_DIR", "") or "."), user_login=env.get("GITLAB_USER_LOGIN", ""),
        job_name=env.get("CI_JOB_NAME", ""),
        job_token=env.get("CI_JOB_TOKEN", ""), ref_protected=env.get("CI_COMMIT_REF_PROTECTED") == "true",
        commit_message=env.get("CI_COMMIT_MESSAGE", ""),
    )


def gitlab_trigger(ctx: GitLabContext) -> Trigger:
    """What failed (or went green) and where. A merge request pipeline names its source branch;
    a branch pipeline its branch; a tag pipeline has no branch to fix."""
    branch = ctx.mr_source_branch or ctx.branch or ("" if ctx.tag else ctx.ref_name)
    fork = bool(ctx.mr_source_project_id) and ctx.mr_source_project_id != ctx.project_id
    iid = ctx.mr_iid
    number = int(iid) if iid.isascii() and iid.isdigit() and len(iid) <= 18 else None
    found = Trigger("pipeline", branch, ctx.sha, ctx.pipeline_id, "1",
                    "failure" if ctx.trigger == "on_failure" else "success", number, ctx.user_login, fork,
                    attempt_commit=is_attempt_message(ctx.commit_message))
    if fork:
        return replace(found, refused=FORK_REFUSAL.format(fork=f"project {ctx.mr_source_project_id}"))
    return judge(found, "")
