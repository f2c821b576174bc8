"""GitHub's HTTP conventions, without PyGithub: rate-limit headers, permission hints, and the one
sentence each failure becomes (for `ForgeError`), and the comment JSON of the REST API as our
`Comment`. Pure functions of status, headers and body.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ci_agent.engine.forge import Comment


def is_rate_limited(status: int, headers: Mapping[str, Any], said_so: bool = False) -> bool:
    """429; or 403 with the quota spent, a `retry-after`, or a rate-limit message (`said_so`)."""
    if status == 429:
        return True
    return status == 403 and (str(headers.get("x-ratelimit-remaining")) == "0"
                              or "retry-after" in headers or said_so)


def asked_wait(headers: Mapping[str, Any], now: float | None = None) -> float | None:
    """`retry-after` seconds, else the time until `x-ratelimit-reset` when the quota is spent."""
    try:
        if "retry-after" in headers:
            return max(0.0, float(headers["retry-after"]))
        if str(headers.get("x-ratelimit-remaining")) == "0" and "x-ratelimit-reset" in headers:
            reset = float(headers["x-ratelimit-reset"])
            return max(0.0, reset - (time.time() if now is None else now)) + 1.0
    except ValueError:
        return None
    return None


def _message(body: Any) -> str:
    data = body if isinstance(body, dict) else {}
    message = str(data.get("message") or "").strip().rstrip(".")
    details = [str(e.get("message") or e.get("code") or "") if isinstance(e, dict) else str(e)
               for e in data.get("errors") or []]
    details = [d for d in details if d]
    return f"{message}: {'; '.join(details)}" if details else message


def _accepted_permissions(headers: Mapping[str, Any]) -> str:
    """`x-accepted-github-permissions: pull_requests=write; issues=write` as YAML-ish words."""
    raw = str(headers.get("x-accepted-github-permissions") or "")
    sets = [", ".join(p.strip().replace("_", "-").replace("=", ": ") for p in group.split(","))
            for group in raw.split(";") if group.strip()]
    return " or ".join(s for s in sets if s)


def sentence(status: int, headers: Mapping[str, Any], body: Any, what: str, needs: str, attempts: int,
             *, rate_limited: bool) -> str:
    """One sentence for a failed GitHub call: what we tried, what GitHub said, what to do."""
    message = _message(body)
    said = f" ({status} {message})" if message else f" ({status})"
    if status == 401:
        return (f"GitHub rejected the token{said} while trying to {what}; check the token input "
                "(GITHUB_TOKEN, a GitHub App token or a PAT) and that it has not expired.")
    if rate_limited:
        reset = headers.get("x-ratelimit-reset")
        when = (f"; the limit resets at {time.strftime('%H:%M:%S UTC', time.gmtime(float(reset)))}"
                if reset and str(reset).isdigit() else "")
        return f"GitHub kept rate-limiting us{said} after {attempts_text(attempts)} to {what}{when}."
    if status == 403:
        wanted = _accepted_permissions(headers) or needs
        return (f"The token is not allowed to {what}{said}; grant `{wanted}` in the workflow's "
                "`permissions:` (or to the GitHub App / token).")
    if status == 404:
        return (f"GitHub found nothing to {what}{said}; check the repository name and that the "
                "token can see it.")
    if status == 422:
        return f"GitHub refused to {what}{said}."
    if status >= 500:
        return f"GitHub kept failing{said} after {attempts_text(attempts)} to {what}; try again later."
    return f"GitHub refused to {what}{said}."


def attempts_text(count: int) -> str:
    return f"{count} attempt" if count == 1 else f"{count} attempts"


def iso_utc(moment: datetime | None) -> str:
    """GitHub's own timestamp form (`2026-01-01T00:00:00Z`) from PyGithub's datetime."""
    if moment is None:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def comment_from_json(data: Mapping[str, Any], review: bool) -> Comment:
    found = data.get("user")
    user: Mapping[str, Any] = found if isinstance(found, dict) else {}  # null for a deleted account
    body = data.get("body")
    return Comment(id=int(data["id"]), body=body if isinstance(body, str) else "",
                   author=str(user.get("login") or ""), author_is_bot=user.get("type") == "Bot",
                   created_at=str(data.get("created_at") or ""), review=review)


def comment_number(data: Mapping[str, Any], review: bool) -> int | None:
    """The pull request a comment belongs to, from its `issue_url` / `pull_request_url`."""
    url = str(data.get("pull_request_url" if review else "issue_url") or "")
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else None


def json_or_none(body: str) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, RecursionError):
        return None
