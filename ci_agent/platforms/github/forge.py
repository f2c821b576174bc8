"""`Forge` over PyGithub: the only module that imports `github`.

PyGithub's own retries and throttling are off (`retry=None`): tenacity retries here so the policy
is ours and visible — 429, 403 with `x-ratelimit-remaining: 0` or a secondary-rate-limit message,
5xx and dropped connections are retried, honouring `retry-after` and `x-ratelimit-reset`, within a
bounded number of attempts and a bounded total wait. Everything else becomes one `ForgeError`
sentence naming what we tried and, for a 403, the permission the token lacks.

Slash commands (`CommandForge`): the 👀 reaction is the durable "handled" mark. GitHub answers
`POST .../reactions` with 201 when it created the reaction and 200 when this account had already
put it there, so `claim` reads the status itself (PyGithub's `create_reaction` hides it).

Job logs and artifact zips: GitHub answers the API request with a 302 to a short-lived storage
URL. PyGithub does not follow it for us (`WorkflowJob.logs_url()` returns the `Location`), which is
what we want: the storage URL is fetched without our token, streamed to disk under a size cap.
"""

from __future__ import annotations

import http.client
import random
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import github
import requests
from github import Auth, Github, GithubException
from github.CommitComment import CommitComment
from github.GithubObject import NotSet
from github.IssueComment import IssueComment
from github.PullRequest import PullRequest
from tenacity import RetryCallState, Retrying, retry_if_exception

from ci_agent.engine.forge import (
    Artifact,
    ChangeRequest,
    Comment,
    Job,
    JobLog,
    Limits,
    Permission,
    duplicate_of,
    parse_marker,
    pick_status_comment,
    status_body,
)
from ci_agent.errors import ForgeError, StatusForgeError, status_of
from ci_agent.platforms.download import UnsafeArchive, extract_zip, safe_name, stream_to_file
from ci_agent.platforms.github.http import (
    asked_wait,
    attempts_text,
    comment_from_json,
    comment_number,
    is_rate_limited,
    iso_utc,
    json_or_none,
    sentence,
)

T = TypeVar("T")
DEFAULT_BASE_URL = "https://api.github.com"
# Comments made with GITHUB_TOKEN are authored by this account; `GET /user` is refused for it.
ACTIONS_BOT = "github-actions[bot]"
FAILED_CONCLUSIONS = frozenset({"failure", "timed_out", "startup_failure"})
_CHUNK = 1024 * 1024


class GitHubForge:
    """One repository on GitHub (or GHES via `base_url`). `sleep` is injectable for tests."""

    def __init__(
        self,
        repository: str,
        token: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        own_login: str | None = None,
        limits: Limits | None = None,
        per_page: int = 100,
        timeout_s: int = 30,
        max_attempts: int = 5,
        max_total_wait_s: float = 300,
        throttle: bool = True,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._repository = repository
        self._owner = repository.split("/", 1)[0]
        self._base_url = base_url.rstrip("/")
        # GitHub's advice against secondary rate limits: space requests, and writes more so.
        self._gh = Github(
            base_url=self._base_url, auth=Auth.Token(token), retry=None, per_page=per_page,
            timeout=timeout_s, lazy=True,
            seconds_between_requests=0.25 if throttle else None,
            seconds_between_writes=1.0 if throttle else None,
        )
        self._repo = self._gh.get_repo(repository)  # lazy: no request until needed
        self._own_login = own_login
        self._limits = limits or Limits()
        self._timeout_s = timeout_s
        self._attempts = max(1, max_attempts)
        self._max_total_wait_s = max_total_wait_s
        self._sleep = sleep
        self.waits: list[float] = []  # every delay chosen between attempts, in order

    # -- runs, logs, artifacts ---------------------------------------------------------------

    def failed_jobs(self, run_id: int) -> list[Job]:
        def fetch() -> list[Job]:
            run = self._repo.get_workflow_run(run_id)
            return [Job(j.id, j.name, j.conclusion or "") for j in run.jobs("latest")
                    if j.conclusion in FAILED_CONCLUSIONS]
        return self._call(f"list the jobs of run {run_id}", "actions: read", fetch)

    def download_job_log(self, job_id: int, dest: Path) -> JobLog:
        dest.mkdir(parents=True, exist_ok=True)

        def fetch() -> JobLog:
            job = self._repo.get_workflow_job(job_id)
            path = dest / f"{job_id}-{safe_name(job.name, 'job')}.log"
            with self._storage(_location(job.logs_url)) as chunks:
                truncated = stream_to_file(chunks, path, self._limits.max_log_bytes)
            return JobLog(job_id, job.name, path, truncated)
        return self._call(f"download the log of job {job_id}", "actions: read", fetch)

    def download_artifacts(self, run_id: int, dest: Path, jobs: Sequence[int] | None = None
                           ) -> list[Artifact]:
        # An Actions artifact belongs to the run, not to a job: `jobs` cannot narrow it.
        listed = self._call(
            f"list the artifacts of run {run_id}", "actions: read",
            lambda: [(a.name, a.archive_download_url, a.expired)
                     for a in self._repo.get_workflow_run(run_id).get_artifacts()])
        results: list[Artifact] = []
        taken: set[str] = set()
        for name, url, expired in listed:
            folder = safe_name(name, "artifact")
            while folder in taken:
                folder += "_"
            taken.add(folder)
            if expired:
                results.append(Artifact(name, None, "the artifact has expired"))
                continue
            results.append(self._download_artifact(name, url, dest / folder))
        return results

    def _download_artifact(self, name: str, url: str, target: Path) -> Artifact:
        with tempfile.TemporaryDirectory(prefix="ci-agent-artifact-") as tmp:
            zip_path = Path(tmp) / "artifact.zip"

            def fetch() -> bool:
                with self._storage(_location(
                        lambda: self._gh.requester.requestBlobAndCheck("GET", url)[0]["location"])) as chunks:
                    return stream_to_file(chunks, zip_path, self._limits.max_archive_bytes)
            if self._call(f"download artifact {name!r}", "actions: read", fetch):
                return Artifact(name, None, f"the zip is larger than {self._limits.max_archive_bytes} bytes")
            try:
                extract_zip(zip_path, target, self._limits)
            except UnsafeArchive as error:
                return Artifact(name, None, f"refused: {error}")
        return Artifact(name, target)

    def _storage(self, url: str) -> _Stream:
        """The short-lived storage URL a 302 pointed at: fetched without our token."""
        if urllib.parse.urlparse(url).scheme not in {"http", "https"}:
            raise ForgeError(f"GitHub redirected a download to an unsupported URL scheme: {url[:80]!r}.")
        return _Stream(urllib.request.urlopen(url, timeout=self._timeout_s))

    # -- change requests ---------------------------------------------------------------------

    def find_change_request(self, source_branch: str, include_closed: bool = False) -> ChangeRequest | None:
        def fetch() -> ChangeRequest | None:
            head = f"{self._owner}:{source_branch}"
            found = self._find_open(source_branch)
            if found is None and include_closed:
                # newest first: the last decision a person made about this branch
                pulls = self._repo.get_pulls(state="all", head=head, sort="created", direction="desc")
                found = next((_change_request(p) for p in pulls), None)
            return found
        return self._call(f"find the pull request of branch {source_branch!r}",
                          "pull-requests: read", fetch)

    def open_change_request(self, source: str, target: str, title: str, body: str,
                            draft: bool = True) -> ChangeRequest:
        """Look up, then create; a 5xx or a cut-off answer is retried the same way. The look-up
        makes the retry safe: a create whose answer was lost may still have opened the pull
        request, and the next try then finds it instead of paying for a duplicate."""
        def look_up_then_create() -> ChangeRequest:
            found = self._find_open(source)
            if found is not None:
                return found
            return _change_request(self._repo.create_pull(base=target, head=source, title=title, body=body,
                                                          draft=draft))
        try:
            return self._call(f"open a pull request from {source!r} into {target!r}", "pull-requests: write",
                              look_up_then_create)
        except ForgeError as error:
            # Another job opened it between our search and our create: use theirs.
            again = self.find_change_request(source) if status_of(error) == 422 else None
            if again is None:
                raise
            return again

    def _find_open(self, source_branch: str) -> ChangeRequest | None:
        head = f"{self._owner}:{source_branch}"
        return next((_change_request(p) for p in self._repo.get_pulls(state="open", head=head)), None)

    def update_change_request(self, number: int, title: str | None = None, body: str | None = None,
                              draft: bool | None = None) -> ChangeRequest:
        def update() -> ChangeRequest:
            pull = self._repo.get_pull(number)
            if title is not None or body is not None:
                pull.edit(title=NotSet if title is None else title, body=NotSet if body is None else body)
            if draft is not None and pull.draft != draft:
                # REST cannot change draft state; PyGithub uses the GraphQL mutations.
                if draft:
                    pull.convert_to_draft()
                else:
                    pull.mark_ready_for_review()
            return _change_request(pull)
        return self._call(f"update pull request #{number}", "pull-requests: write", update)

    # -- comments, labels, reactions ---------------------------------------------------------

    def list_comments(self, number: int) -> list[Comment]:
        return self._call(f"read the comments of #{number}", "pull-requests: read",
                          lambda: [_comment(c) for c in self._repo.get_issue(number).get_comments()])

    def upsert_status_comment(self, number: int, marker: Mapping[str, Any], body: str) -> Comment:
        text = status_body(marker, body)
        mine = pick_status_comment(self.list_comments(number), self.own_login())
        if mine is not None and mine.body == text:
            return mine

        def edit(comment_id: int) -> Comment:
            comment = self._issue_comment(comment_id)
            comment.edit(text)
            return _comment(comment)

        def create() -> Comment:
            return _comment(self._repo.get_issue(number).create_comment(text))
        what, needs = f"write the status comment on #{number}", "pull-requests: write"
        if mine is not None:
            return self._call(what, needs, lambda: edit(mine.id))
        created = self._call(what, needs, create, idempotent=False)
        older = duplicate_of(created, self.list_comments(number), self.own_login())
        if older is None:
            return created
        self.delete_comment(number, created.id)
        return self._call(what, needs, lambda: edit(older.id))

    def delete_comment(self, number: int, comment_id: int) -> None:
        try:
            self._call(f"delete comment {comment_id} of #{number}", "pull-requests: write",
                       lambda: self._issue_comment(comment_id).delete())
        except ForgeError as error:
            if status_of(error) != 404:  # already gone: the state we want
                raise

    def read_status_state(self, number: int) -> dict[str, Any] | None:
        mine = pick_status_comment(self.list_comments(number), self.own_login())
        return None if mine is None else parse_marker(mine.body)

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        if labels:
            self._call(f"label #{number}", "issues: write",
                       lambda: self._repo.get_issue(number).add_to_labels(*labels))

    def remove_label(self, number: int, label: str) -> None:
        try:
            self._call(f"remove label {label!r} from #{number}", "issues: write",
                       lambda: self._repo.get_issue(number).remove_from_labels(label))
        except ForgeError as error:
            if status_of(error) != 404:  # not there: already the state we want
                raise

    def post_comment(self, number: int, body: str) -> Comment:
        return self._call(f"comment on #{number}", "pull-requests: write",
                          lambda: _comment(self._repo.get_issue(number).create_comment(body)),
                          idempotent=False)

    def commit_comments(self, sha: str) -> list[Comment]:
        return self._call(f"read the comments of commit {sha[:12]}", "contents: read",
                          lambda: [_comment(c) for c in self._repo.get_commit(sha).get_comments()])

    def post_commit_comment(self, sha: str, body: str) -> Comment:
        return self._call(f"comment on commit {sha[:12]}", "contents: write",
                          lambda: _comment(self._repo.get_commit(sha).create_comment(body)),
                          idempotent=False)

    def add_reaction(self, number: int, comment_id: int, reaction: str = "eyes") -> None:
        self._call(f"react to comment {comment_id}", "issues: write",
                   lambda: self._issue_comment(comment_id).create_reaction(reaction))

    # -- slash commands (CommandForge) -------------------------------------------------------

    def get_change_request(self, number: int) -> ChangeRequest:
        return self._call(f"read pull request #{number}", "pull-requests: read",
                          lambda: _change_request(self._repo.get_pull(number)))

    def get_comment(self, number: int, comment_id: int, review: bool = False) -> Comment | None:
        """The comment as GitHub has it now; None when it is gone, or when it belongs to another
        pull request than the one the event named (then the event is not to be believed)."""
        url = self._comment_url(comment_id, review)
        try:
            data = self._call(f"read comment {comment_id} of #{number}", "pull-requests: read",
                              lambda: self._gh.requester.requestJsonAndCheck("GET", url)[1])
        except ForgeError as error:
            if status_of(error) == 404:
                return None
            raise
        if not isinstance(data, dict) or comment_number(data, review) != number:
            return None
        return comment_from_json(data, review)

    def claim(self, number: int, comment_id: int, review: bool = False) -> bool:
        """201: our 👀 is new, this run handles the comment; 200: it was already there (another
        delivery, or an earlier run, got it first). A retry after a 5xx whose reaction did land
        answers 200 too: then no run handles the comment, the safe side of a duplicate."""
        url = f"{self._comment_url(comment_id, review)}/reactions"

        def post() -> int:
            status, headers, body = self._gh.requester.requestJson("POST", url, input={"content": "eyes"})
            if status >= 400:
                raise self._gh.requester.createException(status, headers, json_or_none(body))
            return status
        return self._call(f"react to comment {comment_id} of #{number}", "pull-requests: write", post) == 201

    def latest_failed_run(self, branch: str, sha: str) -> int | None:
        """`status=failure` filters on the conclusion; GitHub lists the newest first, and we still
        pick by creation time so a proxy's order cannot make us fix an older run."""
        url = f"{self._repo.url}/actions/runs"
        params = {"branch": branch, "head_sha": sha, "status": "failure", "per_page": "20",
                  "exclude_pull_requests": "true"}
        data = self._call(f"list the failed runs of {branch!r} at {sha[:12]}", "actions: read",
                          lambda: self._gh.requester.requestJsonAndCheck("GET", url, parameters=params)[1])
        runs = [r for r in (data.get("workflow_runs") if isinstance(data, dict) else None) or []
                if isinstance(r, dict) and isinstance(r.get("id"), int)
                and r.get("head_sha") == sha and r.get("conclusion") == "failure"]
        if not runs:
            return None
        newest = max(runs, key=lambda r: (str(r.get("created_at") or ""), int(r["id"])))
        return int(newest["id"])

    def _comment_url(self, comment_id: int, review: bool) -> str:
        kind = "pulls" if review else "issues"  # review (diff) comments live under /pulls/comments
        return f"{self._repo.url}/{kind}/comments/{int(comment_id)}"

    def _issue_comment(self, comment_id: int) -> IssueComment:
        return IssueComment(self._gh.requester, url=f"{self._repo.url}/issues/comments/{comment_id}")

    # -- people, workflows, branches ---------------------------------------------------------

    def own_login(self) -> str:
        """The account our token writes as: only its comments can be our status comment. GitHub
        refuses `GET /user` to integration tokens (GITHUB_TOKEN, App installation tokens); for
        those GraphQL's `viewer` names the bot (`<app>[bot]`), and GITHUB_TOKEN's bot is the last
        resort."""
        if self._own_login is None:
            try:
                self._own_login = self._call("identify the token's user", "none",
                                             lambda: self._gh.get_user().login)
            except ForgeError as error:
                if status_of(error) not in {403, 404}:
                    raise
                self._own_login = self._viewer_login() or ACTIONS_BOT
        return self._own_login

    def _viewer_login(self) -> str:
        def fetch() -> str:
            _, data = self._gh.requester.graphql_query("query { viewer { login } }", {})
            login = ((data.get("data") or {}).get("viewer") or {}).get("login")
            return login if isinstance(login, str) else ""
        try:
            return self._call("identify the token's bot", "none", fetch)
        except ForgeError:
            return ""

    def permission(self, username: str) -> Permission:
        url = f"{self._repo.url}/collaborators/{urllib.parse.quote(username, safe='')}/permission"
        try:
            data = self._call(f"read the permission of {username!r}", "metadata: read",
                              lambda: self._gh.requester.requestJsonAndCheck("GET", url)[1])
        except ForgeError as error:
            if status_of(error) == 404:  # not a user, or not visible: no rights here
                return Permission.NONE
            raise
        # role_name knows maintain/triage; a custom role falls back to the legacy field.
        role = Permission.parse(data.get("role_name"))
        return role if role is not Permission.NONE else Permission.parse(data.get("permission"))

    def dispatch_workflow(self, workflow_file: str, ref: str, inputs: Mapping[str, str]) -> bool:
        try:
            self._call(f"start workflow {workflow_file!r} on {ref!r}", "actions: write",
                       lambda: self._repo.get_workflow(workflow_file).create_dispatch(
                           ref, dict(inputs), throw=True), idempotent=False)
        except ForgeError as error:
            if status_of(error) == 422 and "workflow_dispatch" in str(error):
                return False
            raise
        return True

    def default_branch(self) -> str:
        return self._call("read the repository", "metadata: read", lambda: self._repo.default_branch)

    def protected(self, branch: str) -> bool:
        try:
            return self._call(f"read branch {branch!r}", "contents: read",
                              lambda: bool(self._repo.get_branch(branch).protected))
        except ForgeError as error:
            if status_of(error) == 404:  # a branch that does not exist yet protects nothing
                return False
            raise

    # -- retries and error sentences ---------------------------------------------------------

    def _call(self, what: str, needs: str, fn: Callable[[], T], idempotent: bool = True) -> T:
        """`fn` with retries and one sentence per failure. A call that creates something (a pull
        request, comment, reaction, dispatch) is `idempotent=False`: retried only when GitHub
        answered that it did nothing (rate limited), never after a dropped or cut-off answer,
        which may come after the thing was created."""
        tries = 0  # counted here: a call that is not retried made one attempt, not zero

        def counted() -> T:
            nonlocal tries
            tries += 1
            return fn()
        retryable = _retryable if idempotent else _is_rate_limited_error
        retrying = Retrying(retry=retry_if_exception(retryable), wait=self._wait, stop=self._stop,
                            sleep=self._record_and_sleep, reraise=True)
        try:
            return retrying(counted)
        except GithubException as error:
            raise StatusForgeError(error.status, sentence(
                error.status, error.headers or {}, error.data, what, needs, tries,
                rate_limited=_is_rate_limited(error))) from error
        except _TRANSPORT_ERRORS as error:
            raise ForgeError(f"Could not reach GitHub at {self._base_url} to {what} after "
                             f"{attempts_text(tries)} ({error.__class__.__name__}).") from error

    def _record_and_sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self._sleep(seconds)

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, GithubException):
            asked = asked_wait(error.headers or {})
            if asked is not None:
                return asked
        base = min(30.0, 2.0 ** (state.attempt_number - 1))
        return base * (0.75 + 0.25 * random.random())

    def _stop(self, state: RetryCallState) -> bool:
        if state.attempt_number >= self._attempts:
            return True
        return state.idle_for + state.upcoming_sleep > self._max_total_wait_s


class _Stream:
    """A urlopen response as a context manager over its chunks."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def __enter__(self) -> Iterator[bytes]:
        return iter(lambda: bytes(self._response.read(_CHUNK)), b"")

    def __exit__(self, *exc: object) -> None:
        self._response.close()


def _location(redirect: Callable[[], str]) -> str:
    """The storage URL of a download redirect; GitHub always sends one, a proxy might not."""
    try:
        return redirect()
    except KeyError as error:
        raise ForgeError("GitHub answered a download request without the expected redirect "
                         "(no Location header).") from error


def _is_rate_limited(error: GithubException) -> bool:
    return is_rate_limited(error.status, error.headers or {},
                           isinstance(error, github.RateLimitExceededException))


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


def _change_request(pull: PullRequest) -> ChangeRequest:
    # A fork: the head lives in another repository, or in one deleted since (`head.repo: null`),
    # which we cannot tell from a fork either. `merged_at`, not `merged`: list answers lack the
    # latter, and reading it would cost one request per pull request.
    head_repo, base_repo = pull.head.repo, pull.base.repo
    fork = head_repo is None or (base_repo is not None
                                 and head_repo.full_name.lower() != base_repo.full_name.lower())
    state = "merged" if pull.merged_at is not None else ("closed" if pull.state == "closed" else "open")
    return ChangeRequest(number=pull.number, url=pull.html_url, source_branch=pull.head.ref,
                         target_branch=pull.base.ref, draft=bool(pull.draft),
                         labels=tuple(label.name for label in pull.labels),
                         head_sha=pull.head.sha or "", fork=fork, state=state)


def _comment(comment: IssueComment | CommitComment) -> Comment:
    user = comment.user
    return Comment(id=comment.id, body=comment.body or "", author=user.login,
                   author_is_bot=user.type == "Bot", created_at=iso_utc(comment.created_at))
