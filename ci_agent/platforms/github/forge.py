"""`Forge` and `CommandForge` over PyGithub: with `forge_calls` and `forge_runs`, the only modules
that import `github`. Every request goes through `GitHubCalls.call` (retries, one sentence per
failure); Actions runs, logs, artifacts and dispatches are in `forge_runs`.

Slash commands (`CommandForge`): the 👀 reaction is the durable "handled" mark. GitHub answers
`POST .../reactions` with 201 when it created the reaction and 200 when this account had already
put it there, so `claim` reads the status itself (PyGithub's `create_reaction` hides it).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from github.CommitComment import CommitComment
from github.GithubObject import NotSet
from github.Issue import Issue
from github.IssueComment import IssueComment
from github.PullRequest import PullRequest

from ci_agent.engine.forge import ChangeRequest, Comment, Limits, Permission, StatusComment, open_or_theirs
from ci_agent.errors import ForgeError, status_of
from ci_agent.platforms.github.forge_calls import GitHubCalls
from ci_agent.platforms.github.forge_reruns import GitHubReruns
from ci_agent.platforms.github.forge_runs import GitHubRuns
from ci_agent.platforms.github.http import (
    comment_from_json,
    comment_number,
    iso_utc,
    json_or_none,
)
from ci_agent.retry import FORGE_RETRY, RetryPolicy, Sleep, Waiting, current_waiting

DEFAULT_BASE_URL = "https://api.github.com"
DEFAULT_TIMEOUT_S = 30
# Comments made with GITHUB_TOKEN are authored by this account; `GET /user` is refused for it.
ACTIONS_BOT = "github-actions[bot]"


class GitHubForge(GitHubRuns, GitHubReruns):
    """One repository on GitHub (or GHES via `base_url`); its bases hold the Actions methods
    (`forge_runs`) and the re-run of failed jobs (`forge_reruns`)."""

    def __init__(
        self,
        repository: str,
        token: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        own_login: str | None = None,
        limits: Limits | None = None,
        per_page: int = 100,
        timeout_s: int | None = None,
        retry: RetryPolicy = FORGE_RETRY,
        throttle: bool = True,
        sleep: Sleep | None = None,
        waiting: Waiting | None = None,
    ) -> None:
        """`waiting` (default: the installed one, `ci_agent.retry`) says how to sleep, pace and
        time out; `sleep` and `timeout_s`, when given, override it for this forge, and
        `throttle=False` turns its pacing off (CI_AGENT_GITHUB_THROTTLE=0)."""
        how = waiting or current_waiting()
        super().__init__(GitHubCalls(repository, token, base_url=base_url, per_page=per_page,
                                     timeout_s=timeout_s or how.forge_timeout_s or DEFAULT_TIMEOUT_S,
                                     policy=retry, sleep=sleep or how.sleep, pace=throttle and how.pace),
                         limits or Limits())
        self._owner = repository.split("/", 1)[0]
        self._own_login = own_login
        self.waits = self._api.retrier.waits  # every delay chosen between attempts, in order

    # -- change requests ---------------------------------------------------------------------

    def find_change_request(self, source_branch: str, include_closed: bool = False) -> ChangeRequest | None:
        def fetch() -> ChangeRequest | None:
            head = f"{self._owner}:{source_branch}"
            found = self._find_open(source_branch)
            if found is None and include_closed:
                # newest first: the last decision a person made about this branch
                pulls = self._api.repo.get_pulls(state="all", head=head, sort="created", direction="desc")
                found = next((_change_request(p) for p in pulls), None)
            return found
        return self._api.call(f"find the pull request of branch {source_branch!r}",
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
            return _change_request(self._api.repo.create_pull(base=target, head=source, title=title,
                                                              body=body, draft=draft))
        def open_() -> ChangeRequest:
            return self._api.call(f"open a pull request from {source!r} into {target!r}",
                                  "pull-requests: write", look_up_then_create)
        # Another job may open it between our search and our create (422): then we use theirs.
        return open_or_theirs(open_, 422, lambda: self.find_change_request(source))

    def _find_open(self, source_branch: str) -> ChangeRequest | None:
        head = f"{self._owner}:{source_branch}"
        return next((_change_request(p) for p in self._api.repo.get_pulls(state="open", head=head)), None)

    def update_change_request(self, number: int, title: str | None = None, body: str | None = None,
                              draft: bool | None = None) -> ChangeRequest:
        def update() -> ChangeRequest:
            pull = self._api.repo.get_pull(number)
            if title is not None or body is not None:
                pull.edit(title=NotSet if title is None else title, body=NotSet if body is None else body)
            if draft is not None and pull.draft != draft:
                # REST cannot change draft state; PyGithub uses the GraphQL mutations.
                if draft:
                    pull.convert_to_draft()
                else:
                    pull.mark_ready_for_review()
            return _change_request(pull)
        return self._api.call(f"update pull request #{number}", "pull-requests: write", update)

    # -- comments, labels, reactions ---------------------------------------------------------

    def list_comments(self, number: int) -> list[Comment]:
        return self._api.call(f"read the comments of #{number}", "pull-requests: read",
                              lambda: [_comment(c) for c in self._issue(number).get_comments()])

    def upsert_status_comment(self, number: int, marker: Mapping[str, Any], body: str) -> Comment:
        return self._status(number).upsert(marker, body)

    def read_status_state(self, number: int) -> dict[str, Any] | None:
        return self._status(number).state()

    def _status(self, number: int) -> StatusComment:
        what, needs = f"write the status comment on #{number}", "pull-requests: write"

        def edit(comment_id: int, text: str) -> Comment:
            def once() -> Comment:
                comment = self._issue_comment(comment_id)
                comment.edit(text)
                return _comment(comment)
            return self._api.call(what, needs, once)

        def create(text: str) -> Comment:
            return self._api.call(what, needs, lambda: _comment(self._issue(number).create_comment(text)),
                                  idempotent=False)
        return StatusComment(lambda: self.list_comments(number), self.own_login, create, edit,
                             lambda comment_id: self.delete_comment(number, comment_id))

    def delete_comment(self, number: int, comment_id: int) -> None:
        try:
            self._api.call(f"delete comment {comment_id} of #{number}", "pull-requests: write",
                           lambda: self._issue_comment(comment_id).delete())
        except ForgeError as error:
            if status_of(error) != 404:  # already gone: the state we want
                raise

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        if labels:
            self._api.call(f"label #{number}", "issues: write",
                           lambda: self._issue(number).add_to_labels(*labels))

    def remove_label(self, number: int, label: str) -> None:
        try:
            self._api.call(f"remove label {label!r} from #{number}", "issues: write",
                           lambda: self._issue(number).remove_from_labels(label))
        except ForgeError as error:
            if status_of(error) != 404:  # not there: already the state we want
                raise

    def post_comment(self, number: int, body: str) -> Comment:
        return self._api.call(f"comment on #{number}", "pull-requests: write",
                              lambda: _comment(self._issue(number).create_comment(body)),
                              idempotent=False)

    def commit_comments(self, sha: str) -> list[Comment]:
        return self._api.call(f"read the comments of commit {sha[:12]}", "contents: read",
                              lambda: [_comment(c) for c in self._api.repo.get_commit(sha).get_comments()])

    def post_commit_comment(self, sha: str, body: str) -> Comment:
        return self._api.call(f"comment on commit {sha[:12]}", "contents: write",
                              lambda: _comment(self._api.repo.get_commit(sha).create_comment(body)),
                              idempotent=False)

    def add_reaction(self, number: int, comment_id: int, reaction: str = "eyes") -> None:
        self._api.call(f"react to comment {comment_id}", "issues: write",
                       lambda: self._issue_comment(comment_id).create_reaction(reaction))

    # -- slash commands (CommandForge) -------------------------------------------------------

    def get_change_request(self, number: int) -> ChangeRequest:
        return self._api.call(f"read pull request #{number}", "pull-requests: read",
                              lambda: _change_request(self._api.repo.get_pull(number)))

    def get_comment(self, number: int, comment_id: int, review: bool = False) -> Comment | None:
        """The comment as GitHub has it now; None when it is gone, or when it belongs to another
        pull request than the one the event named (then the event is not to be believed)."""
        url = self._comment_url(comment_id, review)
        try:
            data = self._api.call(f"read comment {comment_id} of #{number}", "pull-requests: read",
                                  lambda: self._api.get_json(url))
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
            status, headers, body = self._api.gh.requester.requestJson("POST", url, input={"content": "eyes"})
            if status >= 400:
                raise self._api.gh.requester.createException(status, headers, json_or_none(body))
            return status
        return self._api.call(f"react to comment {comment_id} of #{number}", "pull-requests: write",
                              post) == 201

    def _comment_url(self, comment_id: int, review: bool) -> str:
        kind = "pulls" if review else "issues"  # review (diff) comments live under /pulls/comments
        return f"{self._api.repo.url}/{kind}/comments/{int(comment_id)}"

    def _issue(self, number: int) -> Issue:
        return self._api.repo.get_issue(number)

    def _issue_comment(self, comment_id: int) -> IssueComment:
        return IssueComment(self._api.gh.requester, url=f"{self._api.repo.url}/issues/comments/{comment_id}")

    # -- people, branches ---------------------------------------------------------

    def own_login(self) -> str:
        """The account our token writes as: only its comments can be our status comment. GitHub
        refuses `GET /user` to integration tokens (GITHUB_TOKEN, App installation tokens); for
        those GraphQL's `viewer` names the bot (`<app>[bot]`), and GITHUB_TOKEN's bot is the last
        resort."""
        if self._own_login is None:
            try:
                self._own_login = self._api.call("identify the token's user", "none",
                                                 lambda: self._api.gh.get_user().login)
            except ForgeError as error:
                if status_of(error) not in {403, 404}:
                    raise
                self._own_login = self._viewer_login() or ACTIONS_BOT
        return self._own_login

    def _viewer_login(self) -> str:
        def fetch() -> str:
            _, data = self._api.gh.requester.graphql_query("query { viewer { login } }", {})
            login = ((data.get("data") or {}).get("viewer") or {}).get("login")
            return login if isinstance(login, str) else ""
        try:
            return self._api.call("identify the token's bot", "none", fetch)
        except ForgeError:
            return ""

    def permission(self, username: str) -> Permission:
        url = f"{self._api.repo.url}/collaborators/{urllib.parse.quote(username, safe='')}/permission"
        try:
            data = self._api.call(f"read the permission of {username!r}", "metadata: read",
                                  lambda: self._api.get_json(url))
        except ForgeError as error:
            if status_of(error) == 404:  # not a user, or not visible: no rights here
                return Permission.NONE
            raise
        # role_name knows maintain/triage; a custom role falls back to the legacy field.
        role = Permission.parse(data.get("role_name"))
        return role if role is not Permission.NONE else Permission.parse(data.get("permission"))

    def default_branch(self) -> str:
        return self._api.call("read the repository", "metadata: read", lambda: self._api.repo.default_branch)

    def protected(self, branch: str) -> bool:
        try:
            return self._api.call(f"read branch {branch!r}", "contents: read",
                                  lambda: bool(self._api.repo.get_branch(branch).protected))
        except ForgeError as error:
            if status_of(error) == 404:  # a branch that does not exist yet protects nothing
                return False
            raise


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
