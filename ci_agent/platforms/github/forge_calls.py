"""Every call `GitHubForge` makes to GitHub: retried by our policy, then one `ForgeError` sentence.

PyGithub's own retries and throttling are off (`retry=None`): `ci_agent.retry` retries here so the
policy is ours and visible — 429, 403 with `x-ratelimit-remaining: 0` or a secondary-rate-limit
message, 5xx and dropped connections are retried, honouring `retry-after` and `x-ratelimit-reset`,
within a bounded number of attempts and a bounded total wait. Everything else becomes one
sentence naming what we tried and, for a 403, the permission the token lacks.

Job logs and artifact zips: GitHub answers the API request with a 302 to a short-lived storage
URL. PyGithub does not follow it for us (`WorkflowJob.logs_url()` returns the `Location`), which is
what we want: the storage URL is fetched without our token (`storage`).
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import github
import requests
from github import Auth, Github, GithubException
from github.Repository import Repository

from ci_agent.errors import ForgeError, StatusForgeError
from ci_agent.platforms.github.http import (
    asked_wait,
    attempts_text,
    is_rate_limited,
    sentence,
)
from ci_agent.retry import Retrier, RetryPolicy, Sleep, Tries

T = TypeVar("T")
_CHUNK = 1024 * 1024


class GitHubCalls:
    """One repository's PyGithub client (`gh`, `repo`: lazy, no request until needed) and `call`,
    through which every request of the forge goes. `pace` spaces the requests (GitHub's advice);
    every retry wait goes through `sleep`."""

    def __init__(self, repository: str, token: str, *, base_url: str, per_page: int, timeout_s: int,
                 policy: RetryPolicy, sleep: Sleep, pace: bool) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        # GitHub's advice against secondary rate limits: space requests, and writes more so.
        self.gh = Github(
            base_url=self.base_url, auth=Auth.Token(token), retry=None, per_page=per_page,
            timeout=timeout_s, lazy=True,
            seconds_between_requests=0.25 if pace else None,
            seconds_between_writes=1.0 if pace else None,
        )
        self.repo: Repository = self.gh.get_repo(repository)
        self.retrier = Retrier(policy, sleep)

    def call(self, what: str, needs: str, fn: Callable[[], T], idempotent: bool = True) -> T:
        """`fn` with retries and one sentence per failure. A call that creates something (a pull
        request, comment, reaction, dispatch) is `idempotent=False`: retried only when GitHub
        answered that it did nothing (rate limited), never after a dropped or cut-off answer,
        which may come after the thing was created."""
        tries = Tries()  # a call that is not retried made one attempt, not zero
        retryable = _retryable if idempotent else _is_rate_limited_error
        try:
            return self.retrier.call(fn, retryable, _asked_wait, tries)
        except GithubException as error:
            raise StatusForgeError(error.status, sentence(
                error.status, error.headers or {}, error.data, what, needs, tries.count,
                rate_limited=_is_rate_limited(error))) from error
        except _TRANSPORT_ERRORS as error:
            raise ForgeError(f"Could not reach GitHub at {self.base_url} to {what} after "
                             f"{attempts_text(tries.count)} ({error.__class__.__name__}).") from error

    def get_json(self, url: str, parameters: dict[str, Any] | None = None) -> Any:
        """The JSON of a REST route PyGithub has no object for (raises GithubException)."""
        return self.gh.requester.requestJsonAndCheck("GET", url, parameters=parameters)[1]

    def storage(self, url: str) -> Stream:
        """The short-lived storage URL a 302 pointed at: fetched without our token."""
        if urllib.parse.urlparse(url).scheme not in {"http", "https"}:
            raise ForgeError(f"GitHub redirected a download to an unsupported URL scheme: {url[:80]!r}.")
        return Stream(urllib.request.urlopen(url, timeout=self.timeout_s))


class Stream:
    """A urlopen response as a context manager over its chunks."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def __enter__(self) -> Iterator[bytes]:
        return iter(lambda: bytes(self._response.read(_CHUNK)), b"")

    def __exit__(self, *exc: object) -> None:
        self._response.close()


def location(redirect: Callable[[], str]) -> str:
    """The storage URL of a download redirect; GitHub always sends one, a proxy might not."""
    try:
        return redirect()
    except KeyError as error:
        raise ForgeError("GitHub answered a download request without the expected redirect "
                         "(no Location header).") from error


def _is_rate_limited(error: GithubException) -> bool:
    return is_rate_limited(error.status, error.headers or {},
                           isinstance(error, github.RateLimitExceededException))


def _asked_wait(error: BaseException) -> float | None:
    return asked_wait(error.headers or {}) if isinstance(error, GithubException) else None


# A connection that failed, timed out, or an answer cut off mid-body (requests raises
# ChunkedEncodingError for a short body, http.client IncompleteRead underneath).
_TRANSPORT_ERRORS = (requests.ConnectionError, requests.Timeout,
                     requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError,
                     http.client.HTTPException, urllib.error.URLError, ConnectionError, TimeoutError)


def _retryable(error: BaseException) -> bool:
    if isinstance(error, GithubException):
        return _is_rate_limited(error) or error.status >= 500
    # A storage URL lives about a minute; a retry asks the API for a fresh one.
    return isinstance(error, _TRANSPORT_ERRORS)


def _is_rate_limited_error(error: BaseException) -> bool:
    return isinstance(error, GithubException) and _is_rate_limited(error)
