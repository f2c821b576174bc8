"""`Forge`, `PipelineStarter` and `CommandForge` over python-gitlab (with `gitlab_commands`, the only
modules that import `gitlab`).

Change request numbers are merge request **iids**, run ids are **pipeline ids**. Retries are ours
(tenacity), not python-gitlab's: its `obey_rate_limit` sleeps with `time.sleep` and cannot be
observed or bounded from here, so `RaisingBackend` hands every 429/5xx to us. 429 waits as long as
`Retry-After` (else `RateLimit-Reset`) says, 5xx and dropped connections back off; both within a
bounded number of attempts and total wait, every wait through the injected `sleep`. Writes that
could be applied twice (a new MR, note or pipeline) are retried only on 429, which GitLab answers
before doing anything. Everything else becomes one `ForgeError` sentence; the token never appears.

Logs and artifact archives are streamed to disk under the caps of `Limits`, archives extracted
with `download.extract_zip` (zip-slip, symlinks and bombs refused whole).
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import gitlab
from gitlab.v4.objects import Project, ProjectMergeRequest
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
from ci_agent.platforms.gitlab.command_pipelines import GitLabCommands
from ci_agent.platforms.gitlab.http import (
    RaisingBackend,
    TransientHttp,
    access_permission,
    asked_wait,
    attempts_text,
    change_request,
    comment,
    expired_at,
    is_connection_error,
    is_draft_title,
    message_of,
    sentence,
    titled,
    wildcard,
)

T = TypeVar("T")
# Comments written with CI_JOB_TOKEN (if ever allowed) are authored by the job's user; this is
# the name GitLab gives the token itself, used when nothing better is known.
JOB_TOKEN_LOGIN = "gitlab-ci-token"
_CHUNK = 1024 * 1024
# GitHub reaction names (what callers pass) as GitLab emoji names.
_EMOJI = {"+1": "thumbsup", "-1": "thumbsdown", "laugh": "laughing", "hooray": "tada"}


class GitLabForge(GitLabCommands):
    """One project on a GitLab server. `token_kind` is "private" (PAT, project or group access
    token: `PRIVATE-TOKEN`) or "job" (`CI_JOB_TOKEN`: `JOB-TOKEN`). `sleep` is injectable for tests.
    The slash-command methods (`CommandForge`, the poller's) live in `gitlab_commands`."""

    def __init__(
        self,
        project: str,
        token: str,
        *,
        url: str,
        token_kind: str = "private",
        own_login: str | None = None,
        limits: Limits | None = None,
        per_page: int = 100,
        timeout_s: int = 30,
        max_attempts: int = 5,
        max_total_wait_s: float = 300,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if token_kind not in ("private", "job"):
            raise ValueError(f"token_kind {token_kind!r}: 'private' or 'job'")
        self._project_name = project
        self._url = url.rstrip("/")
        self._token = token
        self._job_token = token_kind == "job"
        auth = {"job_token": token} if self._job_token else {"private_token": token}
        self._gl = gitlab.Gitlab(self._url, **auth, timeout=timeout_s, per_page=per_page,
                                 retry_transient_errors=False, keep_base_url=True,
                                 backend=RaisingBackend)
        self._ident: str | int = int(project) if project.isdigit() else project
        self._project: Project = self._gl.projects.get(self._ident, lazy=True)  # no request until needed
        self._own_login = own_login
        self._limits = limits or Limits()
        self._attempts = max(1, max_attempts)
        self._max_total_wait_s = max_total_wait_s
        self._sleep = sleep
        self._default_branch: str | None = None
        self.waits: list[float] = []  # every delay chosen between attempts, in order

    # -- pipelines, logs, artifacts ----------------------------------------------------------

    def failed_jobs(self, run_id: int) -> list[Job]:
        def fetch() -> list[Job]:
            jobs = self._project.pipelines.get(run_id, lazy=True).jobs.list(scope=["failed"], get_all=True)
            return [Job(j.id, j.name, "failed (allowed to fail)" if j.allow_failure else "failed")
                    for j in jobs]
        return self._call(f"list the jobs of pipeline {run_id}", "Reporter", fetch)

    def download_job_log(self, job_id: int, dest: Path) -> JobLog:
        dest.mkdir(parents=True, exist_ok=True)

        def fetch() -> JobLog:
            job = self._project.jobs.get(job_id)
            path = dest / f"{job_id}-{safe_name(job.name, 'job')}.log"
            chunks: Iterator[bytes] = job.trace(streamed=True, iterator=True, chunk_size=_CHUNK)
            truncated = stream_to_file(chunks, path, self._limits.max_log_bytes)
            return JobLog(job_id, job.name, path, truncated)
        return self._call(f"download the log of job {job_id}", "Reporter", fetch)

    def download_artifacts(self, run_id: int, dest: Path, jobs: Sequence[int] | None = None
                           ) -> list[Artifact]:
        """The artifacts archives of the pipeline's jobs (of `jobs` only, when given: a passing
        job's files, or a report job's copy of them, are not the failure)."""
        listed = self._call(f"list the jobs of pipeline {run_id}", "Reporter",
                            lambda: [j.attributes for j in self._project.pipelines.get(run_id, lazy=True)
                                     .jobs.list(get_all=True)])
        wanted = None if jobs is None else set(jobs)
        results: list[Artifact] = []
        for job in listed:
            name, job_id = str(job["name"]), int(job["id"])
            if wanted is not None and job_id not in wanted:
                continue
            archive = next((a for a in job.get("artifacts") or [] if a.get("file_type") == "archive"), None)
            if archive is None:
                expired = expired_at(job.get("artifacts_expire_at"))
                if expired:
                    results.append(Artifact(name, None, f"the artifacts expired at {expired}"))
                continue
            if int(archive.get("size") or 0) > self._limits.max_archive_bytes:
                results.append(Artifact(name, None, self._too_big()))
                continue
            results.append(self._download_archive(name, job_id, dest / f"{safe_name(name, 'job')}-{job_id}"))
        return results

    def _download_archive(self, name: str, job_id: int, target: Path) -> Artifact:
        with tempfile.TemporaryDirectory(prefix="ci-agent-artifact-") as tmp:
            zip_path = Path(tmp) / "artifacts.zip"

            def fetch() -> bool:
                job = self._project.jobs.get(job_id, lazy=True)
                chunks: Iterator[bytes] = job.artifacts(streamed=True, iterator=True, chunk_size=_CHUNK)
                return stream_to_file(chunks, zip_path, self._limits.max_archive_bytes)
            try:
                too_big = self._call(f"download the artifacts of job {job_id}", "Reporter", fetch)
            except ForgeError as error:
                if status_of(error) != 404:
                    raise
                return Artifact(name, None, "the artifacts archive is gone (expired or erased)")
            if too_big:
                return Artifact(name, None, self._too_big())
            try:
                extract_zip(zip_path, target, self._limits)
            except UnsafeArchive as error:
                return Artifact(name, None, f"refused: {error}")
        return Artifact(name, target)

    def _too_big(self) -> str:
        return f"the archive is larger than {self._limits.max_archive_bytes} bytes"

    def pipeline_for(self, ref: str, sha: str) -> int | None:
        found = self._call(f"list the pipelines of {ref!r}", "Reporter",
                           lambda: self._project.pipelines.list(ref=ref, sha=sha, order_by="id", sort="desc",
                                                                per_page=1, get_all=False))
        return int(found[0].id) if found else None

    def start_pipeline(self, ref: str, variables: Mapping[str, str]) -> int:
        data = {"ref": ref, "variables": [{"key": k, "value": v, "variable_type": "env_var"}
                                          for k, v in variables.items()]}
        pipeline = self._call("create pipelines", "Developer",
                              lambda: self._project.pipelines.create(data), idempotent=False)
        return int(pipeline.id)

    # -- merge requests ----------------------------------------------------------------------

    def find_change_request(self, source_branch: str, include_closed: bool = False) -> ChangeRequest | None:
        def fetch() -> ChangeRequest | None:
            opened = self._find_open(source_branch)
            if opened is not None or not include_closed:
                return opened
            # newest first (GitLab's default order: created_at desc): the last decision made
            every = self._project.mergerequests.list(state="all", source_branch=source_branch,
                                                     order_by="created_at", sort="desc", get_all=False)
            return next((change_request(m.attributes) for m in every), None)
        return self._call(f"find the merge request of branch {source_branch!r}", "Reporter", fetch)

    def open_change_request(self, source: str, target: str, title: str, body: str,
                            draft: bool = True) -> ChangeRequest:
        """Look up, then create; a 5xx or a cut-off answer is retried the same way. The look-up
        makes the retry safe: a create whose answer was lost may still have opened the merge
        request, and the next try then finds it instead of opening a second one."""
        data = {"source_branch": source, "target_branch": target, "title": titled(title, draft),
                "description": body}

        def look_up_then_create() -> ChangeRequest:
            found = self._find_open(source)
            if found is not None:
                return found
            return change_request(self._project.mergerequests.create(data).attributes)
        try:
            return self._call("create merge requests", "Developer", look_up_then_create)
        except ForgeError as error:
            # Another job opened it between our search and our create: use theirs.
            again = self.find_change_request(source) if status_of(error) == 409 else None
            if again is None:
                raise
            return again

    def _find_open(self, source_branch: str) -> ChangeRequest | None:
        found = self._project.mergerequests.list(state="opened", source_branch=source_branch, get_all=True)
        return next((change_request(m.attributes) for m in found), None)

    def update_change_request(self, number: int, title: str | None = None, body: str | None = None,
                              draft: bool | None = None) -> ChangeRequest:
        def update() -> ChangeRequest:
            mr = self._project.mergerequests.get(number)
            current = str(mr.title)
            wanted = titled(current if title is None else title,
                             is_draft_title(current) if draft is None else draft)
            changed = False
            if wanted != current:
                mr.title, changed = wanted, True
            if body is not None and body != (mr.description or ""):
                mr.description, changed = body, True
            if changed:
                mr.save()
            return change_request(mr.attributes)
        return self._call(f"edit merge request !{number}", "Developer", update)

    # -- notes, labels, award emoji ----------------------------------------------------------

    def _mr(self, number: int) -> ProjectMergeRequest:
        return self._project.mergerequests.get(number, lazy=True)

    def list_comments(self, number: int) -> list[Comment]:
        def fetch() -> list[Comment]:
            notes = self._mr(number).notes.list(sort="asc", order_by="created_at", get_all=True)
            return [comment(n.attributes) for n in notes if not n.attributes.get("system")]
        return self._call(f"read the notes of merge request !{number}", "Reporter", fetch)

    def upsert_status_comment(self, number: int, marker: Mapping[str, Any], body: str) -> Comment:
        text = status_body(marker, body)
        mine = pick_status_comment(self.list_comments(number), self.own_login())
        if mine is not None and mine.body == text:
            return mine
        if mine is not None:
            return self._edit_note(number, mine.id, text)
        created = self.post_comment(number, text)
        older = duplicate_of(created, self.list_comments(number), self.own_login())
        if older is None:
            return created
        # another job created one at the same moment: keep the older, drop ours
        self.delete_comment(number, created.id)
        return self._edit_note(number, older.id, text)

    def delete_comment(self, number: int, comment_id: int) -> None:
        try:
            self._call(f"delete note {comment_id} of merge request !{number}", "Reporter",
                       lambda: self._mr(number).notes.delete(comment_id))
        except ForgeError as error:
            if status_of(error) != 404:  # already gone: the state we want
                raise

    def _edit_note(self, number: int, note_id: int, text: str) -> Comment:
        return self._call(f"edit notes on merge request !{number}", "Reporter",
                          lambda: comment(self._mr(number).notes.update(note_id, {"body": text})))

    def read_status_state(self, number: int) -> dict[str, Any] | None:
        mine = pick_status_comment(self.list_comments(number), self.own_login())
        return None if mine is None else parse_marker(mine.body)

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        if labels:
            joined = ",".join(labels)
            self._call(f"label merge request !{number}", "Developer",
                       lambda: self._project.mergerequests.update(number, {"add_labels": joined}))

    def remove_label(self, number: int, label: str) -> None:
        # GitLab ignores a label that is not there: already the state we want.
        self._call(f"label merge request !{number}", "Developer",
                   lambda: self._project.mergerequests.update(number, {"remove_labels": label}))

    def post_comment(self, number: int, body: str) -> Comment:
        return self._call(f"comment on merge request !{number}", "Reporter",
                          lambda: comment(self._mr(number).notes.create({"body": body}).attributes),
                          idempotent=False)

    def commit_comments(self, sha: str) -> list[Comment]:
        # GitLab's commit comments carry no id (`note`, `author`, `created_at`): 0 stands for it
        def fetch() -> list[Comment]:
            found = self._project.commits.get(sha, lazy=True).comments.list(get_all=True)
            return [comment({"id": 0, "body": c.attributes.get("note"), **c.attributes}) for c in found]
        return self._call(f"read the comments of commit {sha[:12]}", "Reporter", fetch)

    def post_commit_comment(self, sha: str, body: str) -> Comment:
        def post() -> Comment:
            made = self._project.commits.get(sha, lazy=True).comments.create({"note": body})
            return comment({"id": 0, "body": made.attributes.get("note"), **made.attributes})
        return self._call(f"comment on commit {sha[:12]}", "Reporter", post, idempotent=False)

    def add_reaction(self, number: int, comment_id: int, reaction: str = "eyes") -> None:
        name = _EMOJI.get(reaction, reaction)
        note = self._mr(number).notes.get(comment_id, lazy=True)
        try:
            self._call(f"award emoji on merge request !{number}", "Reporter",
                       lambda: note.awardemojis.create({"name": name}), idempotent=False)
        except ForgeError as error:
            if "has already been taken" not in str(error):  # ours is there already: fine
                raise

    # -- people, branches --------------------------------------------------------------------

    def own_login(self) -> str:
        """The account our token writes as: `GET /user`; a job token has none to ask for."""
        if self._own_login is None:
            if self._job_token:
                self._own_login = JOB_TOKEN_LOGIN
            else:
                self._own_login = self._call("identify the token's user", "Guest", self._user)
        return self._own_login

    def _user(self) -> str:
        self._gl.auth()
        if self._gl.user is None:
            raise ForgeError("GitLab did not say which user the token belongs to.")
        return str(self._gl.user.username)

    def permission(self, username: str) -> Permission:
        """The member's access level on the project, inherited ones included; not one: NONE."""
        def fetch() -> Permission:
            members = self._project.members_all.list(query=username, get_all=True)
            level = next((m.access_level for m in members
                          if str(m.username).lower() == username.lower()), None)
            return access_permission(level)
        return self._call(f"read the access level of {username!r}", "Reporter", fetch)

    def dispatch_workflow(self, workflow_file: str, ref: str, inputs: Mapping[str, str]) -> bool:
        return False  # GitLab has no workflow_dispatch; `start_pipeline` is its counterpart

    def default_branch(self) -> str:
        if self._default_branch is None:
            self._default_branch = self._call(
                "read the project", "Guest",
                lambda: str(self._gl.projects.get(self._ident).default_branch))
        return self._default_branch

    def protected(self, branch: str) -> bool:
        names = self._call("list the protected branches", "Reporter",
                           lambda: [str(p.name) for p in self._project.protectedbranches.list(get_all=True)])
        return any(wildcard(name).fullmatch(branch) for name in names)

    # -- retries and error sentences ---------------------------------------------------------

    def _call(self, what: str, role: str, fn: Callable[[], T], *, idempotent: bool = True) -> T:
        """`fn` with our retries; a failure becomes a ForgeError naming `what` and the `role` needed."""
        tries = 0  # counted here: a call that is not retried made one attempt, not zero

        def counted() -> T:
            nonlocal tries
            tries += 1
            return fn()

        def retryable(error: BaseException) -> bool:
            if isinstance(error, TransientHttp):
                return idempotent or error.status == 429
            return idempotent and is_connection_error(error)
        retrying = Retrying(retry=retry_if_exception(retryable), wait=self._wait, stop=self._stop,
                            sleep=self._record_and_sleep, reraise=True)
        try:
            return retrying(counted)
        except TransientHttp as error:
            raise self._error(error.status, error.message, what, role, tries) from None
        except gitlab.GitlabError as error:
            raise self._error(error.response_code, message_of(error.error_message), what, role,
                              tries) from None
        except Exception as error:
            if not is_connection_error(error):
                raise
            raise ForgeError(f"Could not reach GitLab at {self._url} to {what} after "
                             f"{attempts_text(tries)} ({error.__class__.__name__}).") from None

    def _error(self, status: int | None, message: str, what: str, role: str, tries: int) -> ForgeError:
        if status is None:  # not an API answer: a login page, a redirect, a proxy in the way
            said = message.split(". ")[0][:120]
            text = (f"GitLab gave an answer we could not read while trying to {what} ({said}); "
                    f"check that {self._url} is the GitLab server (CI_SERVER_URL).")
        else:
            text = sentence(status, message, what=what, role=role, job_token=self._job_token,
                            project=self._project_name, attempts=tries)
        text = text.replace(self._token, "[MASKED]") if self._token else text
        return StatusForgeError(status, text) if status is not None else ForgeError(text)

    def _record_and_sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self._sleep(seconds)

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, TransientHttp) and error.status == 429:
            asked = asked_wait(error.headers)
            if asked is not None:
                return asked
        base = min(30.0, 2.0 ** (state.attempt_number - 1))
        return base * (0.75 + 0.25 * random.random())

    def _stop(self, state: RetryCallState) -> bool:
        if state.attempt_number >= self._attempts:
            return True
        return state.idle_for + state.upcoming_sleep > self._max_total_wait_s
