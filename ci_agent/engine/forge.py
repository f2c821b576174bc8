"""The forge-neutral contract (DESIGN.md §4.6): what ci-agent needs from GitHub, GitLab or `local`.

Core code says `change_request`, never PR/MR. Every implementation raises `ForgeError` (exit 5)
with one sentence a person reading a CI log can act on; nothing forge-specific leaks out.

The status comment carries our durable state in a hidden marker, first line of its body:
`<!-- ci-agent:v1 {json} -->`. `render_marker` / `parse_marker` are the only code that writes
or reads it, so every forge agrees on the format.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from ci_agent.errors import ForgeError, status_of

MARKER_PREFIX = "<!-- ci-agent:v1 "
MARKER_SUFFIX = " -->"
# The marker must open the body: a person quoting it ("> <!-- ci-agent...") never matches.
_MARKER = re.compile(r"\A<!-- ci-agent:v1 (\{.*?\}) -->", re.DOTALL)
MAX_MARKER_JSON = 64 * 1024  # a status comment is at most 65536 characters on GitHub


@dataclass(frozen=True)
class ChangeRequest:
    number: int
    url: str
    source_branch: str
    target_branch: str
    draft: bool
    labels: tuple[str, ...] = ()
    head_sha: str = ""
    fork: bool = False  # the source branch lives in another repository/project
    state: str = "open"  # open | closed | merged


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    author: str
    author_is_bot: bool
    created_at: str = ""  # ISO 8601 as the forge gives it
    review: bool = False  # a GitHub review (diff) comment: its reactions live elsewhere


class Permission(enum.IntEnum):
    """Ordered, so `permission(user) >= Permission.WRITE` reads as the rule it is."""

    NONE = 0
    READ = 1
    TRIAGE = 2
    WRITE = 3
    MAINTAIN = 4
    ADMIN = 5

    @classmethod
    def parse(cls, name: str | None) -> Permission:
        """A forge's role name; unknown (custom) roles count as none: the caller falls back."""
        return _PERMISSION_NAMES.get((name or "").strip().lower(), cls.NONE)


_PERMISSION_NAMES = {p.name.lower(): p for p in Permission} | {"pull": Permission.READ,
                                                              "push": Permission.WRITE}


@dataclass(frozen=True)
class Job:
    """A failed job of a CI run. `failure_reason` is GitLab's (`runner_system_failure`,
    `script_failure`, ...); GitHub has none (its `conclusion`, e.g. `timed_out`, says it)."""

    id: int
    name: str
    conclusion: str
    failure_reason: str = ""


@dataclass(frozen=True)
class JobLog:
    job_id: int
    name: str
    text_path: Path
    truncated: bool = False  # the log was longer than the cap; its first bytes are kept


@dataclass(frozen=True)
class Artifact:
    """A downloaded artifact, extracted under `path`; a refused one has `path=None` and says why."""

    name: str
    path: Path | None
    problem: str | None = None


@dataclass(frozen=True)
class CiStart:
    """What `Forge.start_ci` did: `started` a run (a workflow dispatch, a new pipeline), found one
    `already_running` on the commit, or found CI `not_startable` there (a workflow that does not
    accept being started). `run_id` names the run when the forge says it (a dispatch does not)."""

    kind: Literal["started", "already_running", "not_startable"]
    run_id: int | None = None


RunStatus = Literal["queued", "in_progress", "completed"]


@dataclass(frozen=True)
class Rerun:
    """What `Forge.rerun_failed_jobs` started: `attempt` is the run's attempt that runs the failed
    jobs again (GitHub's `run_attempt`; on GitLab, how often the most-retried job of the pipeline
    has run), `job_ids` the new jobs where the forge names them at once (GitLab answers each retry
    with its new job; GitHub creates them later: empty)."""

    run_id: int
    attempt: int
    job_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class RunState:
    """A CI run as it is now (`Forge.run_state`). `conclusion` is GitHub's word once `completed`
    ("success", "failure", "cancelled", "skipped", ...), None before; `failed_job_ids` are the
    failed jobs of the newest attempt."""

    status: RunStatus
    conclusion: str | None
    attempt: int
    failed_job_ids: tuple[int, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == "completed" and self.conclusion == "success"


# -- issue 16, pre-existing failures: the default branch's latest completed run -------------

# Conclusions of a finished run that mean red: GitHub's (failure, timed_out, startup_failure) and
# GitLab's pipeline status (failed). success is green; cancelled, skipped, neutral... decide nothing.
RED_CONCLUSIONS = frozenset({"failure", "timed_out", "startup_failure", "failed"})


@dataclass(frozen=True)
class RunInfo:
    """A finished CI run (a workflow run, a pipeline): its id, the commit it tested, its
    conclusion as the forge words it, and where a person sees it."""

    run_id: int
    sha: str
    conclusion: str
    url: str = ""

    @property
    def red(self) -> bool:
        return self.conclusion in RED_CONCLUSIONS

    @property
    def green(self) -> bool:
        return self.conclusion == "success"


@dataclass(frozen=True)
class Limits:
    """Caps on what we pull from a forge, so a hostile or huge run cannot fill the runner."""

    max_log_bytes: int = 256 * 1024 * 1024
    max_archive_bytes: int = 512 * 1024 * 1024
    max_extracted_bytes: int = 1024 * 1024 * 1024
    max_member_bytes: int = 512 * 1024 * 1024
    max_members: int = 10_000


@runtime_checkable
class Forge(Protocol):
    """What every forge provides. Methods are idempotent where the name says find/upsert."""

    def failed_jobs(self, run_id: int) -> list[Job]: ...

    def download_job_log(self, job_id: int, dest: Path) -> JobLog: ...

    def rerun_failed_jobs(self, run_id: int) -> Rerun:
        """Run the failed jobs of run `run_id` once more (GitHub's re-run of failed jobs, GitLab's
        retry of each failed job). A refusal (no permission, the run still running, too old) is
        a `ForgeError` saying what to do; the caller goes on without a re-run."""
        ...

    def run_state(self, run_id: int) -> RunState:
        """Where run `run_id` is now: queued, in progress or completed (with its conclusion), its
        attempt and the failed jobs of that attempt."""
        ...

    def download_artifacts(self, run_id: int, dest: Path, jobs: Sequence[int] | None = None
                           ) -> list[Artifact]:
        """The run's artifacts extracted under `dest`. `jobs` (the failed jobs' ids) keeps only
        theirs where artifacts belong to a job (GitLab); GitHub's belong to the run: all of them."""

    def find_change_request(self, source_branch: str, include_closed: bool = False) -> ChangeRequest | None:
        """The open change request from `source_branch`; with `include_closed`, the newest one in
        any state (closed or merged too) when none is open."""
        ...

    def open_change_request(self, source: str, target: str, title: str, body: str,
                            draft: bool = True) -> ChangeRequest: ...

    def update_change_request(self, number: int, title: str | None = None, body: str | None = None,
                              draft: bool | None = None) -> ChangeRequest: ...

    def upsert_status_comment(self, number: int, marker: Mapping[str, Any], body: str) -> Comment: ...

    def read_status_state(self, number: int) -> dict[str, Any] | None: ...

    def add_labels(self, number: int, labels: Sequence[str]) -> None: ...

    def remove_label(self, number: int, label: str) -> None: ...

    def list_comments(self, number: int) -> list[Comment]: ...

    def post_comment(self, number: int, body: str) -> Comment:
        """A new comment written as our own account (the escalation comment, command answers)."""
        ...

    def delete_comment(self, number: int, comment_id: int) -> None:
        """Delete one of our own comments (a duplicate another job raced us to write)."""
        ...

    def commit_comments(self, sha: str) -> list[Comment]:
        """Comments on commit `sha`: where a failure that has no change request is escalated."""
        ...

    def post_commit_comment(self, sha: str, body: str) -> Comment:
        """A new comment on commit `sha`, written as our own account (never edited afterwards)."""
        ...

    def add_reaction(self, number: int, comment_id: int, reaction: str = "eyes") -> None:
        """React to comment `comment_id` of change request `number` (GitLab needs both)."""
        ...

    def own_login(self) -> str:
        """The account our token writes as: only its comments can be our status comment."""
        ...

    def permission(self, username: str) -> Permission: ...

    def start_ci(self, branch: str, commit: str, workflow: str = "") -> CiStart:
        """Start CI on `branch`, pushed at `commit` (a push made with a CI job's own token starts
        none). `workflow` names the CI definition where a forge has several (GitHub's workflow
        file); a forge with one per project (GitLab) ignores it. A refusal is a `ForgeError`."""
        ...

    def default_branch(self) -> str: ...

    def protected(self, branch: str) -> bool: ...

    # -- issue 16, pre-existing failures ---------------------------------------------------------

    def latest_completed_run(self, branch: str, workflow: str = "") -> RunInfo | None:
        """The newest finished run on `branch` (whatever its conclusion), None when there is none.
        `workflow` (GitHub: the workflow's id, file or name) picks that workflow's runs when some
        are among the newest; a forge with one CI definition per project (GitLab) ignores it.
        A change request's runs of a fork's branch of the same name are never `branch`'s."""
        ...


@runtime_checkable
class CommandForge(Protocol):
    """What slash commands need on top of `Forge` (issue 7)."""

    def get_change_request(self, number: int) -> ChangeRequest:
        """Any change request by number, with its head commit, fork flag and state."""
        ...

    def get_comment(self, number: int, comment_id: int, review: bool = False) -> Comment | None:
        """The comment as it is now (None when deleted): never trust a payload's copy of a body
        that may have been edited since."""
        ...

    def claim(self, number: int, comment_id: int, review: bool = False) -> bool:
        """Put our 👀 on the comment; True only if this call put it there. Both forges make this
        atomic (GitHub answers 201 vs 200, GitLab refuses a second identical award), so of two
        deliveries of one comment exactly one claims it: the durable "handled" mark."""
        ...

    def latest_failed_run(self, branch: str, sha: str) -> int | None:
        """The newest failed CI run (workflow run / pipeline) of `branch` at commit `sha`."""
        ...


def render_marker(state: Mapping[str, Any]) -> str:
    """The hidden first line of our status comment. `<`, `>` and `&` are JSON-escaped so no value
    can close the HTML comment early (`-->`) or open markup."""
    text = json.dumps(dict(state), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    if len(text) > MAX_MARKER_JSON:
        raise ValueError(f"status state is {len(text)} characters; at most {MAX_MARKER_JSON}")
    return f"{MARKER_PREFIX}{text}{MARKER_SUFFIX}"


def status_body(state: Mapping[str, Any], body: str) -> str:
    return f"{render_marker(state)}\n{body}"


def parse_marker(body: str) -> dict[str, Any] | None:
    """The state in a body that starts with our marker; None when absent or not a JSON object."""
    match = _MARKER.match(body or "")
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except (ValueError, RecursionError):  # anyone can write a marker-shaped comment
        return None
    return value if isinstance(value, dict) else None


def pick_status_comment(comments: Sequence[Comment], own_login: str) -> Comment | None:
    """Our status comment: written by our own account and starting with a valid marker.
    If a race ever left two, the oldest (lowest id, whatever order the forge lists them in) wins,
    so every run edits the same one."""
    ours = [c for c in comments
            if c.author.lower() == own_login.lower() and parse_marker(c.body) is not None]
    return min(ours, key=lambda c: c.id) if ours else None


def duplicate_of(created: Comment, comments: Sequence[Comment], own_login: str) -> Comment | None:
    """After creating a status comment: the older one of ours that another job created at the
    same moment (both saw none, both created), or None when ours is the one to keep. The caller
    deletes its own and edits the older: two racing jobs converge on one comment."""
    keep = pick_status_comment(comments, own_login)
    return keep if keep is not None and keep.id != created.id else None


def status_state(comments: Sequence[Comment], own_login: str) -> dict[str, Any] | None:
    """The state in our status comment among `comments`; None when there is none."""
    mine = pick_status_comment(comments, own_login)
    return None if mine is None else parse_marker(mine.body)


@dataclass(frozen=True)
class StatusComment:
    """The status comment of one change request, over how its forge lists, creates, edits and
    deletes comments: every forge with a comments API keeps one status comment the same way."""

    listed: Callable[[], list[Comment]]
    own_login: Callable[[], str]
    create: Callable[[str], Comment]
    edit: Callable[[int, str], Comment]
    delete: Callable[[int], None]

    def state(self) -> dict[str, Any] | None:
        return status_state(self.listed(), self.own_login())

    def upsert(self, marker: Mapping[str, Any], body: str) -> Comment:
        """Edit our status comment to say `marker` and `body`, or create it. Nothing is written
        when it already says so. When another job created one at the same moment, the older is
        kept and ours deleted."""
        text = status_body(marker, body)
        mine = pick_status_comment(self.listed(), self.own_login())
        if mine is not None and mine.body == text:
            return mine
        if mine is not None:
            return self.edit(mine.id, text)
        created = self.create(text)
        older = duplicate_of(created, self.listed(), self.own_login())
        if older is None:
            return created
        self.delete(created.id)
        return self.edit(older.id, text)


def open_or_theirs(open_: Callable[[], ChangeRequest], conflict_status: int,
                        find: Callable[[], ChangeRequest | None]) -> ChangeRequest:
    """`open_()`; when the forge answers `conflict_status` because another job opened the change
    request between our search and our create, the one that job opened."""
    try:
        return open_()
    except ForgeError as error:
        again = find() if status_of(error) == conflict_status else None
        if again is None:
            raise
        return again
