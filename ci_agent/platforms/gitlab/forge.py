"""`Forge` and `CommandForge` over python-gitlab (with `forge_calls`, `forge_runs` and
`command_pipelines`, the only modules that import `gitlab`; `forge_reruns` retries failed jobs).

Change request numbers are merge request **iids**, run ids are **pipeline ids**. Every request goes
through `GitLabCalls.call` (retries, one sentence per failure, the token masked); pipelines, traces
and artifacts are in `forge_runs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci_agent.engine.forge import ChangeRequest, Comment, Limits, Permission, StatusComment, open_or_theirs
from ci_agent.errors import ForgeError, status_of
from ci_agent.platforms.gitlab.command_pipelines import GitLabCommands
from ci_agent.platforms.gitlab.forge_calls import GitLabCalls
from ci_agent.platforms.gitlab.forge_reruns import GitLabReruns
from ci_agent.platforms.gitlab.forge_runs import GitLabRuns
from ci_agent.platforms.gitlab.http import (
    access_permission,
    change_request,
    comment,
    is_draft_title,
    titled,
    wildcard,
)
from ci_agent.retry import FORGE_RETRY, RetryPolicy, Sleep, Waiting, current_waiting

# Comments written with CI_JOB_TOKEN (if ever allowed) are authored by the job's user; this is
# the name GitLab gives the token itself, used when nothing better is known.
JOB_TOKEN_LOGIN = "gitlab-ci-token"
DEFAULT_TIMEOUT_S = 30
# GitHub reaction names (what callers pass) as GitLab emoji names.
_EMOJI = {"+1": "thumbsup", "-1": "thumbsdown", "laugh": "laughing", "hooray": "tada"}


class GitLabForge(GitLabRuns, GitLabReruns, GitLabCommands):
    """One project on a GitLab server. `token_kind` is "private" (PAT, project or group access
    token: `PRIVATE-TOKEN`) or "job" (`CI_JOB_TOKEN`: `JOB-TOKEN`). Its bases hold the pipeline
    methods (`forge_runs`), the retry of failed jobs (`forge_reruns`) and the slash-command ones
    (`CommandForge`, the poller's: `command_pipelines`)."""

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
        timeout_s: int | None = None,
        retry: RetryPolicy = FORGE_RETRY,
        sleep: Sleep | None = None,
        waiting: Waiting | None = None,
    ) -> None:
        """`waiting` (default: the installed one, `ci_agent.retry`) says how to sleep and time
        out; `sleep` and `timeout_s`, when given, override it for this forge."""
        if token_kind not in ("private", "job"):
            raise ValueError(f"token_kind {token_kind!r}: 'private' or 'job'")
        how = waiting or current_waiting()
        super().__init__(GitLabCalls(project, token, url=url, job_token=token_kind == "job",
                                     per_page=per_page,
                                     timeout_s=timeout_s or how.forge_timeout_s or DEFAULT_TIMEOUT_S,
                                     policy=retry, sleep=sleep or how.sleep),
                         limits or Limits())
        self._own_login = own_login
        self._default_branch: str | None = None
        self.waits = self._api.retrier.waits  # every delay chosen between attempts, in order

    # -- merge requests ----------------------------------------------------------------------

    def find_change_request(self, source_branch: str, include_closed: bool = False) -> ChangeRequest | None:
        def fetch() -> ChangeRequest | None:
            opened = self._find_open(source_branch)
            if opened is not None or not include_closed:
                return opened
            # newest first (GitLab's default order: created_at desc): the last decision made
            every = self._api.project.mergerequests.list(state="all", source_branch=source_branch,
                                                         order_by="created_at", sort="desc", get_all=False)
            return next((change_request(m.attributes) for m in every), None)
        return self._api.call(f"find the merge request of branch {source_branch!r}", "Reporter", fetch)

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
            return change_request(self._api.project.mergerequests.create(data).attributes)
        def open_() -> ChangeRequest:
            return self._api.call("create merge requests", "Developer", look_up_then_create)
        # Another job may open it between our search and our create (409): then we use theirs.
        return open_or_theirs(open_, 409, lambda: self.find_change_request(source))

    def _find_open(self, source_branch: str) -> ChangeRequest | None:
        found = self._api.project.mergerequests.list(state="opened", source_branch=source_branch,
                                                     get_all=True)
        return next((change_request(m.attributes) for m in found), None)

    def update_change_request(self, number: int, title: str | None = None, body: str | None = None,
                              draft: bool | None = None) -> ChangeRequest:
        def update() -> ChangeRequest:
            mr = self._api.project.mergerequests.get(number)
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
        return self._api.call(f"edit merge request !{number}", "Developer", update)

    # -- notes, labels, award emoji ----------------------------------------------------------

    def list_comments(self, number: int) -> list[Comment]:
        def fetch() -> list[Comment]:
            notes = self._mr(number).notes.list(sort="asc", order_by="created_at", get_all=True)
            return [comment(n.attributes) for n in notes if not n.attributes.get("system")]
        return self._api.call(f"read the notes of merge request !{number}", "Reporter", fetch)

    def upsert_status_comment(self, number: int, marker: Mapping[str, Any], body: str) -> Comment:
        return self._status(number).upsert(marker, body)

    def read_status_state(self, number: int) -> dict[str, Any] | None:
        return self._status(number).state()

    def _status(self, number: int) -> StatusComment:
        return StatusComment(lambda: self.list_comments(number), self.own_login,
                             lambda text: self.post_comment(number, text),
                             lambda note_id, text: self._edit_note(number, note_id, text),
                             lambda note_id: self.delete_comment(number, note_id))

    def delete_comment(self, number: int, comment_id: int) -> None:
        try:
            self._api.call(f"delete note {comment_id} of merge request !{number}", "Reporter",
                           lambda: self._mr(number).notes.delete(comment_id))
        except ForgeError as error:
            if status_of(error) != 404:  # already gone: the state we want
                raise

    def _edit_note(self, number: int, note_id: int, text: str) -> Comment:
        return self._api.call(f"edit notes on merge request !{number}", "Reporter",
                              lambda: comment(self._mr(number).notes.update(note_id, {"body": text})))

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        if labels:
            joined = ",".join(labels)
            self._api.call(f"label merge request !{number}", "Developer",
                           lambda: self._api.project.mergerequests.update(number, {"add_labels": joined}))

    def remove_label(self, number: int, label: str) -> None:
        # GitLab ignores a label that is not there: already the state we want.
        self._api.call(f"label merge request !{number}", "Developer",
                       lambda: self._api.project.mergerequests.update(number, {"remove_labels": label}))

    def post_comment(self, number: int, body: str) -> Comment:
        return self._api.call(f"comment on merge request !{number}", "Reporter",
                              lambda: comment(self._mr(number).notes.create({"body": body}).attributes),
                              idempotent=False)

    def commit_comments(self, sha: str) -> list[Comment]:
        # GitLab's commit comments carry no id (`note`, `author`, `created_at`): 0 stands for it
        def fetch() -> list[Comment]:
            found = self._api.project.commits.get(sha, lazy=True).comments.list(get_all=True)
            return [comment({"id": 0, "body": c.attributes.get("note"), **c.attributes}) for c in found]
        return self._api.call(f"read the comments of commit {sha[:12]}", "Reporter", fetch)

    def post_commit_comment(self, sha: str, body: str) -> Comment:
        def post() -> Comment:
            made = self._api.project.commits.get(sha, lazy=True).comments.create({"note": body})
            return comment({"id": 0, "body": made.attributes.get("note"), **made.attributes})
        return self._api.call(f"comment on commit {sha[:12]}", "Reporter", post, idempotent=False)

    def add_reaction(self, number: int, comment_id: int, reaction: str = "eyes") -> None:
        name = _EMOJI.get(reaction, reaction)
        note = self._mr(number).notes.get(comment_id, lazy=True)
        try:
            self._api.call(f"award emoji on merge request !{number}", "Reporter",
                           lambda: note.awardemojis.create({"name": name}), idempotent=False)
        except ForgeError as error:
            if "has already been taken" not in str(error):  # ours is there already: fine
                raise

    # -- people, branches --------------------------------------------------------------------

    def own_login(self) -> str:
        """The account our token writes as: `GET /user`; a job token has none to ask for."""
        if self._own_login is None:
            if self._api.job_token:
                self._own_login = JOB_TOKEN_LOGIN
            else:
                self._own_login = self._api.call("identify the token's user", "Guest", self._user)
        return self._own_login

    def _user(self) -> str:
        self._api.gl.auth()
        if self._api.gl.user is None:
            raise ForgeError("GitLab did not say which user the token belongs to.")
        return str(self._api.gl.user.username)

    def permission(self, username: str) -> Permission:
        """The member's access level on the project, inherited ones included; not one: NONE."""
        def fetch() -> Permission:
            members = self._api.project.members_all.list(query=username, get_all=True)
            level = next((m.access_level for m in members
                          if str(m.username).lower() == username.lower()), None)
            return access_permission(level)
        return self._api.call(f"read the access level of {username!r}", "Reporter", fetch)

    def default_branch(self) -> str:
        if self._default_branch is None:
            self._default_branch = self._api.call(
                "read the project", "Guest",
                lambda: str(self._api.gl.projects.get(self._api.ident).default_branch))
        return self._default_branch

    def protected(self, branch: str) -> bool:
        protected = self._api.project.protectedbranches
        names = self._api.call("list the protected branches", "Reporter",
                               lambda: [str(p.name) for p in protected.list(get_all=True)])
        return any(wildcard(name).fullmatch(branch) for name in names)
