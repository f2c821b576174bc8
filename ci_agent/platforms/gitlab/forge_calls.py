"""Every call `GitLabForge` makes to GitLab: retried by our policy, then one `ForgeError` sentence.

Retries are ours (`ci_agent.retry`), not python-gitlab's: its `obey_rate_limit` sleeps with
`time.sleep` and cannot be observed or bounded from here, so `RaisingBackend` hands every 429/5xx
to us. 429 waits as long as `Retry-After` (else `RateLimit-Reset`) says, 5xx and dropped
connections back off; both within a bounded number of attempts and total wait, every wait through
the injected `sleep`. Writes that could be applied twice (a new MR, note or pipeline) are retried
only on 429, which GitLab answers before doing anything. Everything else becomes one sentence; the
token never appears.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import gitlab
from gitlab.v4.objects import Project

from ci_agent.errors import ForgeError, StatusForgeError
from ci_agent.platforms.gitlab.http import (
    RaisingBackend,
    TransientHttp,
    asked_wait,
    attempts_text,
    is_connection_error,
    message_of,
    sentence,
)
from ci_agent.retry import Retrier, RetryPolicy, Sleep, Tries

T = TypeVar("T")


class GitLabCalls:
    """One project's python-gitlab client (`gl`, `project`: lazy, no request until needed) and
    `call`, through which every request of the forge goes. `job_token`: `token` is a CI_JOB_TOKEN
    (`JOB-TOKEN`), else a personal, project or group access token (`PRIVATE-TOKEN`)."""

    def __init__(self, project: str, token: str, *, url: str, job_token: bool, per_page: int,
                 timeout_s: int, policy: RetryPolicy, sleep: Sleep) -> None:
        self.project_name = project
        self.url = url.rstrip("/")
        self.job_token = job_token
        self._token = token
        auth = {"job_token": token} if job_token else {"private_token": token}
        self.gl = gitlab.Gitlab(self.url, **auth, timeout=timeout_s, per_page=per_page,
                                retry_transient_errors=False, keep_base_url=True,
                                backend=RaisingBackend)
        self.ident: str | int = int(project) if project.isdigit() else project
        self.project: Project = self.gl.projects.get(self.ident, lazy=True)
        self.retrier = Retrier(policy, sleep)

    def call(self, what: str, role: str, fn: Callable[[], T], *, idempotent: bool = True) -> T:
        """`fn` with our retries; a failure becomes a ForgeError naming `what` and the `role` needed."""
        tries = Tries()  # a call that is not retried made one attempt, not zero

        def retryable(error: BaseException) -> bool:
            if isinstance(error, TransientHttp):
                return idempotent or error.status == 429
            return idempotent and is_connection_error(error)
        try:
            return self.retrier.call(fn, retryable, _asked_wait, tries)
        except TransientHttp as error:
            raise self._error(error.status, error.message, what, role, tries.count) from None
        except gitlab.GitlabError as error:
            raise self._error(error.response_code, message_of(error.error_message), what, role,
                              tries.count) from None
        except Exception as error:
            if not is_connection_error(error):
                raise
            raise ForgeError(f"Could not reach GitLab at {self.url} to {what} after "
                             f"{attempts_text(tries.count)} ({error.__class__.__name__}).") from None

    def _error(self, status: int | None, message: str, what: str, role: str, tries: int) -> ForgeError:
        if status is None:  # not an API answer: a login page, a redirect, a proxy in the way
            said = message.split(". ")[0][:120]
            text = (f"GitLab gave an answer we could not read while trying to {what} ({said}); "
                    f"check that {self.url} is the GitLab server (CI_SERVER_URL).")
        else:
            text = sentence(status, message, what=what, role=role, job_token=self.job_token,
                            project=self.project_name, attempts=tries)
        text = text.replace(self._token, "[MASKED]") if self._token else text
        return StatusForgeError(status, text) if status is not None else ForgeError(text)


def _asked_wait(error: BaseException) -> float | None:
    """Only a 429 says how long to wait; a 5xx backs off."""
    if isinstance(error, TransientHttp) and error.status == 429:
        return asked_wait(error.headers)
    return None
