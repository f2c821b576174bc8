"""Which CI we are in, and what it asks of us: GitHub Actions inputs, context and event payload.

`action_inputs(env)` is the single place the action's `INPUT_*` variables are read (the runner
passes input `build_logs` as `INPUT_BUILD_LOGS`). `github_context(env)` reads the `GITHUB_*`
variables and the event payload; `trigger(ctx)` says what failed, where, and whether we may touch
it at all (a fork's code is never checked out or run with our secrets, a `ci-agent/*` branch never
starts a new cycle).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_agent.engine.types import (
    INPUT_NAMES,
    ActionInputs,
    Trigger,
    is_attempt_message,
    judge,
    read_inputs,
)
from ci_agent.errors import UsageError

# Secret inputs: masked in the log before anything else is printed.
SECRET_INPUTS = ("anthropic_api_key", "github_token")
_MAX_EVENT_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB


def input_env_name(name: str) -> str:
    """The variable the runner sets for input `name` (spaces become `_`, then upper case)."""
    return "INPUT_" + name.replace(" ", "_").upper()


def action_inputs(env: Mapping[str, str]) -> ActionInputs:
    """Every action input (`INPUT_<NAME>`), validated as on every platform."""
    return read_inputs({name: env.get(input_env_name(name), "") for name in INPUT_NAMES})


def is_actions_token(token: str, env: Mapping[str, str]) -> bool:
    """The workflow's own GITHUB_TOKEN (its pushes start no workflow run). A heuristic: it is the
    value the runner exposes as GITHUB_TOKEN, or has the installation-token prefix `ghs_`
    (GITHUB_TOKEN is one; an App installation token also is, and starts runs: we err towards
    dispatching, which is harmless when the push has already started CI)."""
    return bool(token) and (token == env.get("GITHUB_TOKEN", "") or token.startswith("ghs_"))


# --- the GitHub context ---------------------------------------------------------------------------

@dataclass(frozen=True)
class GitHubContext:
    event_name: str
    repository: str
    ref_name: str = ""
    head_ref: str = ""
    sha: str = ""
    run_id: str = ""
    run_attempt: str = "1"
    workspace: Path = Path(".")
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    output_path: str = ""
    summary_path: str = ""
    actor: str = ""
    triggering_actor: str = ""
    event: Mapping[str, Any] = field(default_factory=dict)
    workflow_ref: str = ""  # GITHUB_WORKFLOW_REF: owner/repo/.github/workflows/ci.yml@refs/heads/x


def in_github_actions(env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_ACTIONS") == "true" or bool(env.get("GITHUB_EVENT_NAME"))


def load_event(path: str) -> dict[str, Any]:
    """The event payload; `{}` when there is none (a local try-out). A payload that is not a JSON
    object is a usage error: every decision after this depends on it."""
    if not path:
        return {}
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_EVENT_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read the event payload GITHUB_EVENT_PATH={path}: "
                         f"{exc.strerror or exc}") from exc
    if len(data) > _MAX_EVENT_BYTES:
        raise UsageError(f"the event payload {path} is larger than {_MAX_EVENT_BYTES} bytes")
    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"the event payload {path} is not JSON we can read: {exc}") from exc
    if not isinstance(value, dict):
        raise UsageError(f"the event payload {path} is not a JSON object")
    return value


def github_context(env: Mapping[str, str]) -> GitHubContext:
    repository = env.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        raise UsageError(f"GITHUB_REPOSITORY must be owner/name, not {repository[:80]!r}; is this "
                         "running in GitHub Actions?")
    return GitHubContext(
        event_name=env.get("GITHUB_EVENT_NAME", ""),
        repository=repository,
        ref_name=env.get("GITHUB_REF_NAME", ""),
        head_ref=env.get("GITHUB_HEAD_REF", ""),
        sha=env.get("GITHUB_SHA", ""),
        run_id=env.get("GITHUB_RUN_ID", ""),
        run_attempt=env.get("GITHUB_RUN_ATTEMPT", "") or "1",
        workspace=Path(env.get("GITHUB_WORKSPACE", "") or "."),
        api_url=env.get("GITHUB_API_URL", "") or "https://api.github.com",
        server_url=env.get("GITHUB_SERVER_URL", "") or "https://github.com",
        output_path=env.get("GITHUB_OUTPUT", ""),
        summary_path=env.get("GITHUB_STEP_SUMMARY", ""),
        actor=env.get("GITHUB_ACTOR", ""),
        triggering_actor=env.get("GITHUB_TRIGGERING_ACTOR", "") or env.get("GITHUB_ACTOR", ""),
        event=load_event(env.get("GITHUB_EVENT_PATH", "")),
        workflow_ref=env.get("GITHUB_WORKFLOW_REF", ""),
    )


# --- what triggered us ----------------------------------------------------------------------------

def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value) if isinstance(value, int) else ""


def _login(value: Any) -> str:
    return _text(_get(value, "login"))


def trigger(ctx: GitHubContext, job_status: str = "") -> Trigger:
    if ctx.event_name == "workflow_run":
        return _workflow_run(ctx)
    return _inline(ctx, job_status)


def _inline(ctx: GitHubContext, job_status: str = "") -> Trigger:
    pull = _get(ctx.event, "pull_request")
    branch = ctx.head_ref or ctx.ref_name
    number = _get(pull, "number")
    head_repo = _text(_get(pull, "head", "repo", "full_name"))
    fork = bool(pull) and bool(head_repo) and head_repo.lower() != ctx.repository.lower()
    # A pull_request run tests the merge commit (GITHUB_SHA); the branch's own tip is the head's.
    sha = _text(_get(pull, "head", "sha")) or ctx.sha
    # The step runs after a failed step, or (the inline template's condition) on a fix branch's
    # green job: `job_status` says which.
    conclusion = job_status if job_status in ("success", "cancelled") else "failure"
    found = Trigger("inline", branch, sha, ctx.run_id, ctx.run_attempt, conclusion,
                    number if isinstance(number, int) else None, ctx.triggering_actor or ctx.actor, fork,
                    workflow=workflow_file(ctx.workflow_ref))
    return judge(found, head_repo)


def _workflow_run(ctx: GitHubContext) -> Trigger:
    run = _get(ctx.event, "workflow_run")
    if not isinstance(run, Mapping):
        raise UsageError("the workflow_run event payload has no workflow_run object")
    repo = _text(_get(ctx.event, "repository", "full_name")) or ctx.repository
    head_repo = _text(_get(run, "head_repository", "full_name"))
    pulls = [p for p in run.get("pull_requests") or [] if isinstance(p, Mapping)]
    # GitHub lists no pull requests for a fork's run; the head repository is the sure sign.
    fork = bool(head_repo) and head_repo.lower() != repo.lower()
    number = _get(pulls[0], "number") if pulls else None
    actor = _login(run.get("triggering_actor")) or _login(run.get("actor")) or ctx.triggering_actor
    found = Trigger("workflow_run", _text(run.get("head_branch")), _text(run.get("head_sha")),
                    _text(run.get("id")), _text(run.get("run_attempt")) or "1",
                    _text(run.get("conclusion")), number if isinstance(number, int) else None,
                    actor, fork,
                    attempt_commit=is_attempt_message(_text(_get(run, "head_commit", "message"))),
                    workflow=_text(run.get("workflow_id")))
    return judge(found, head_repo)


def workflow_file(workflow_ref: str) -> str:
    """The workflow's file name in GITHUB_WORKFLOW_REF (`o/r/.github/workflows/ci.yml@refs/...`),
    which the runs API accepts for the workflow; empty when there is none."""
    return workflow_ref.split("@", 1)[0].rsplit("/", 1)[-1] if "/" in workflow_ref else ""


# --- slash commands: the comment that may hold one (issue 7) --------------------------------------

COMMENT_EVENTS = ("issue_comment", "pull_request_review_comment")


@dataclass(frozen=True)
class CommentEvent:
    """A comment as the event payload tells it. Only a hint: the body may have been edited since
    and the author's rights are not in it; the handler reads the comment back through the API and
    asks for the permission before acting on anything."""

    action: str  # created | edited | deleted
    comment_id: int
    body: str
    author: str
    author_is_bot: bool
    association: str  # author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE...
    number: int  # the pull request (or issue) number
    on_pull_request: bool
    review: bool  # a review (diff) comment: its reactions live under /pulls/comments


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def comment_event(ctx: GitHubContext) -> CommentEvent:
    """From `issue_comment` (a pull request's conversation shows as an issue carrying a
    `pull_request` key) or `pull_request_review_comment` (always on a pull request)."""
    if ctx.event_name not in COMMENT_EVENTS:
        raise UsageError(f"ci-agent command runs on {' or '.join(COMMENT_EVENTS)} events, not "
                         f"{ctx.event_name[:40] or 'no event'!r}")
    review = ctx.event_name == "pull_request_review_comment"
    comment = _get(ctx.event, "comment")
    holder = _get(ctx.event, "pull_request" if review else "issue")
    if not isinstance(comment, Mapping) or not isinstance(holder, Mapping):
        raise UsageError(f"the {ctx.event_name} event payload has no comment or no "
                         f"{'pull_request' if review else 'issue'} object")
    comment_id, number = _whole(comment.get("id")), _whole(holder.get("number"))
    if comment_id is None or number is None:
        raise UsageError(f"the {ctx.event_name} event payload has no comment id or number")
    user = comment.get("user")
    body = comment.get("body")
    return CommentEvent(
        action=_text(ctx.event.get("action")),
        comment_id=comment_id,
        body=body if isinstance(body, str) else "",
        author=_login(user),
        author_is_bot=_text(_get(user, "type")) == "Bot",
        association=_text(comment.get("author_association")).upper(),
        number=number,
        on_pull_request=review or isinstance(holder.get("pull_request"), Mapping),
        review=review,
    )
