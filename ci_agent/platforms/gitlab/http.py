"""GitLab's conventions for `GitLabForge`, without python-gitlab's object layer: which answers are
worth retrying, how long GitLab asks us to wait, access levels as `Permission`, draft titles,
protected-branch wildcards, REST shapes as our types, and the one sentence each failure becomes.

python-gitlab retries 429s itself with `time.sleep`, which tests cannot observe and which ignores
our bounds. `RaisingBackend` (a python-gitlab HTTP backend) turns every 429 and 5xx answer into
`TransientHttp` before python-gitlab's own retry loop sees it, so the only retry policy is ours.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import requests
from gitlab._backends.requests_backend import RequestsBackend, RequestsResponse
from requests.exceptions import ChunkedEncodingError

from ci_agent.engine.forge import ChangeRequest, Comment, Permission

# Who to give what: a job token is refused every write we need; a project access token is a bot user.
JOB_TOKEN_FIX = "set CI_AGENT_GITLAB_TOKEN to a project access token with the api scope and the {role} role"
_MAX_MESSAGE = 300
# GitLab reads these title prefixes as "draft" (case-insensitive); `Draft: ` is the one we write.
_DRAFT_PREFIX = re.compile(r"^\s*(\[draft\]|\(draft\)|draft:)\s*", re.IGNORECASE)
# Project (and group) access tokens act as bot users named like this.
_BOT_USER = re.compile(r"^(project|group)_\d+_bot(_[0-9a-f]+)?$")


class TransientHttp(Exception):
    """A 429 or 5xx answer: retried by the forge, then turned into a sentence."""

    def __init__(self, status: int, headers: Mapping[str, str], message: str) -> None:
        super().__init__(f"{status} {message}".strip())
        self.status = status
        self.headers = dict(headers)
        self.message = message


class RaisingBackend(RequestsBackend):
    """python-gitlab's requests backend, raising `TransientHttp` on 429 and 5xx answers."""

    def http_request(self, method: str, url: str, *args: Any, **kwargs: Any) -> RequestsResponse:
        result = super().http_request(method, url, *args, **kwargs)
        status = result.status_code
        if status == 429 or status >= 500:
            response = result.response
            try:
                text = response.text[:_MAX_MESSAGE]
            finally:
                response.close()
            raise TransientHttp(status, result.headers, _first_line(text))
        return result


def _first_line(text: str) -> str:
    plain = re.sub(r"<[^>]*>", " ", text)  # a proxy's HTML error page
    return " ".join(plain.split())[:120]


def asked_wait(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """`Retry-After` seconds, else the time until `RateLimit-Reset` (an epoch), else None."""
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        if "retry-after" in lower:
            return max(0.0, float(lower["retry-after"]))
        if "ratelimit-reset" in lower:
            reset = float(lower["ratelimit-reset"])
            return max(0.0, reset - (time.time() if now is None else now)) + 1.0
    except ValueError:
        return None
    return None


def access_permission(level: int | None) -> Permission:
    """A member's access level: 5 minimal / 10 guest / 15 planner read, 20 reporter triages,
    30 developer writes, 40 maintainer maintains, 50 owner (and above) administers."""
    if not level or level <= 0:
        return Permission.NONE
    for floor, permission in ((50, Permission.ADMIN), (40, Permission.MAINTAIN), (30, Permission.WRITE),
                              (20, Permission.TRIAGE)):
        if level >= floor:
            return permission
    return Permission.READ


def message_of(raw: Any) -> str:
    """GitLab's `message`/`error` in any of its shapes: a string, a list, or field -> errors."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if isinstance(raw, dict):
        parts = [f"{key} {' '.join(map(str, v)) if isinstance(v, list) else v}" for key, v in raw.items()]
        text = "; ".join(parts)
    elif isinstance(raw, list):
        text = "; ".join(map(str, raw))
    else:
        text = str(raw or "")
    return _first_line(text).rstrip(".")


def sentence(status: int | None, message: str, *, what: str, role: str, job_token: bool,
             project: str, attempts: int) -> str:
    """One sentence for a failed GitLab call: what we tried, what GitLab said, what to do."""
    # GitLab's own messages often lead with the status ("404 Project Not Found"): say it once.
    said = message if status is None or message.startswith(str(status)) else f"{status} {message}".strip()
    said = said or "no answer"
    if status in (401, 403) and job_token:
        # GitLab accepts a job token on a few endpoints only; elsewhere it counts as no token (401).
        return f"CI_JOB_TOKEN cannot {what}; {JOB_TOKEN_FIX.format(role=role)} (GitLab said {said})."
    if status == 401:
        return (f"GitLab rejected the token (CI_AGENT_GITLAB_TOKEN) while trying to {what} ({said}); "
                "check that it is set, not expired and not revoked.")
    if status == 403:
        return (f"The GitLab token is not allowed to {what} ({said}); give its user or project access "
                f"token at least the {role} role on {project} and the api scope.")
    if status == 404:
        return (f"GitLab found nothing to {what} ({said}); check the project {project!r} and that the "
                "token's user is a member who can see it.")
    if status == 429:
        return (f"GitLab kept rate-limiting us ({said}) after {attempts_text(attempts)} to {what}; "
                "try again later.")
    if status is not None and status >= 500:
        return f"GitLab kept failing ({said}) after {attempts_text(attempts)} to {what}; try again later."
    return f"GitLab refused to {what} ({said})."


def attempts_text(count: int) -> str:
    return f"{count} attempt" if count == 1 else f"{count} attempts"


def is_connection_error(error: BaseException) -> bool:
    """A dropped or refused connection, a timeout, or a download cut off mid-stream."""
    return isinstance(error, requests.ConnectionError | requests.Timeout | ChunkedEncodingError
                      | ConnectionError | TimeoutError)


def is_draft_title(title: str) -> bool:
    return _DRAFT_PREFIX.match(title) is not None


def titled(title: str, draft: bool) -> str:
    """`title` without any draft prefix GitLab recognises, then `Draft: ` again when wanted."""
    bare = title
    while (match := _DRAFT_PREFIX.match(bare)) is not None and match.end() > 0:
        bare = bare[match.end():]
    return f"Draft: {bare}" if draft else bare


def wildcard(name: str) -> re.Pattern[str]:
    """A protected-branch name; `*` matches any characters, slashes included (`release/*`)."""
    return re.compile(".*".join(re.escape(part) for part in name.split("*")))


def expired_at(when: Any) -> str | None:
    """`artifacts_expire_at` when it lies in the past."""
    if not isinstance(when, str) or not when:
        return None
    try:
        moment = datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if moment <= datetime.now(UTC) else None


# GitLab's merge request states as ours; `locked` is the moment of merging, still open.
_STATES = {"opened": "open", "locked": "open", "closed": "closed", "merged": "merged"}


def change_request(data: Mapping[str, Any]) -> ChangeRequest:
    source, target = data.get("source_project_id"), data.get("target_project_id")
    return ChangeRequest(number=int(data["iid"]), url=str(data.get("web_url") or ""),
                         source_branch=str(data["source_branch"]), target_branch=str(data["target_branch"]),
                         draft=bool(data.get("draft") or data.get("work_in_progress")),
                         labels=tuple(str(x) for x in data.get("labels") or ()),
                         head_sha=str(data.get("sha") or ""),
                         fork=source is not None and target is not None and source != target,
                         state=_STATES.get(str(data.get("state") or ""), "closed"))


def is_bot_username(username: str) -> bool:
    """A project or group access token's user (`project_42_bot_<hex>`)."""
    return _BOT_USER.match(username) is not None


def comment(data: Mapping[str, Any]) -> Comment:
    author = data.get("author") or {}
    username = str(author.get("username") or "")
    return Comment(id=int(data["id"]), body=str(data.get("body") or ""), author=username,
                   author_is_bot=bool(author.get("bot")) or is_bot_username(username),
                   created_at=str(data.get("created_at") or ""))
