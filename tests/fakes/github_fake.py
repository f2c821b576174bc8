"""A loopback fake of the GitHub REST API (and the two GraphQL draft mutations) for real PyGithub.

stdlib `http.server` on 127.0.0.1, port 0, in a thread; a second loopback server plays the
short-lived storage that `GET .../actions/jobs/{id}/logs` and `.../artifacts/{id}/zip` redirect to
(302, as GitHub does). A route table: unknown routes answer 404 and are recorded in `failures`
(the test fails on them). Every request is recorded. State lives in memory, so a pull request or
comment created by one call is seen by later GETs, also by a second `GitHubForge` ("next run").

Shapes follow the REST docs: list endpoints paginate with `page`/`per_page` and a `Link` header
(`next`, `last`); `Authorization: token X` / `Bearer X` is checked against `tokens` (401 "Bad
credentials" otherwise); integration tokens get 403 on `GET /user` as GitHub's do. Faults are
injected per route: 401/403/404/422/429 with `retry-after`, 403 with `x-ratelimit-remaining: 0`, 5xx,
or a broken connection (tests/fakes/breakage.py: dropped, half an answer, held past the timeout),
on the API or on the storage server, after `skip` matching requests.

Slash commands: issue comments (`/issues/comments/{id}`) and review comments (`/pulls/comments/{id}`)
are two id spaces with their own reaction routes; `POST .../reactions` answers 201 when it creates
the reaction and 200 when that account already reacted so (the REST docs: "A response with an
HTTP 200 status means that you already added the reaction type"). A pull request's `head.repo`
is another repository for a fork and `null` when that repository was deleted; `merged_at` is set
once merged. `GET /actions/runs` filters on `branch`, `head_sha`, `event` and `status` (a status or
a conclusion, as GitHub accepts both), newest first.

Re-runs (issue 16): `POST .../actions/runs/{id}/rerun-failed-jobs` answers 201 `{}` and starts
attempt `run_attempt + 1`, whose jobs are new jobs (new ids, `run_attempt` set) for each failed one;
`.../jobs` lists the newest attempt of each job unless `filter=all`. It answers 403 "This workflow is
already running" while the run is not completed, 404 for an unknown run. How a re-run ends is the
test's to say (`rerun_ends`, or `Run.rerun_ends` for one run): "failure" (the default: the jobs fail
the same way, with the same logs, so every scenario still reaches its attempt), "success", or
"queued" (it stays queued until `finish_rerun`).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.breakage import DEFAULT_HOLD_S, DROP, Broken, hits, send_broken
from tests.fakes.loopback import Loopback, QuietHandler, Served

DOCS = "https://docs.github.com/rest"


@dataclass(frozen=True)
class Recorded:
    server: str  # "api" or "storage"
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any = None  # JSON-able, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Fault:
    """Answer the next `times` requests matching `method` and the `path` regex with `reply`,
    after letting the first `skip` of them through. `transport` (tests/fakes/breakage.py: drop,
    partial, timeout) breaks the connection instead of answering `reply`; `server` is "api" or
    "storage" (the download redirects' target)."""

    reply: Reply
    path: str = ".*"
    method: str | None = None
    times: int = 1
    skip: int = 0
    transport: str | None = None
    hold_s: float = DEFAULT_HOLD_S
    server: str = "api"

    def take(self, server: str, method: str, path: str) -> bool:
        """Whether this request is one the fault hits (counting it down)."""
        return self.server == server and hits(self, method, path)


def error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> Reply:
    return Reply(status, {"message": message, "documentation_url": DOCS, **extra}, headers or {})


def rate_limited_429(retry_after: str = "1") -> Reply:
    return error(429, "You have exceeded a secondary rate limit. Please wait a few minutes before "
                 "you try again.", {"retry-after": retry_after})


def rate_limited_403(reset_epoch: int) -> Reply:
    return error(403, "API rate limit exceeded for installation ID 1.",
                 {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000",
                  "x-ratelimit-reset": str(reset_epoch)})


def forbidden(accepted: str = "pull_requests=write") -> Reply:
    return error(403, "Resource not accessible by integration",
                 {"x-accepted-github-permissions": accepted})


def server_error(status: int = 502) -> Reply:
    return error(status, "Server Error")


@dataclass
class Run:
    jobs: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    head_branch: str = "main"
    head_sha: str = "a" * 40
    conclusion: str = "failure"
    event: str = "push"
    created_at: str = "2026-01-01T00:00:00Z"
    status: str = "completed"
    attempt: int = 1
    rerun_ends: str | None = None  # None: the fake's `rerun_ends`
    replaced: set[int] = field(default_factory=set)  # jobs a newer attempt ran again
    # issue 16 (pre-existing failures): which workflow ran, and the repository the tested
    # branch lives in (another one for a fork's pull request)
    workflow: str = "ci.yml"
    head_repo: str = ""


RERUN_ENDINGS = ("failure", "success", "queued")


class GitHubFake(Served):
    """Use as a context manager. `tokens` maps a token to the login it acts as; logins in
    `integration_logins` are bots for which `GET /user` is refused (GITHUB_TOKEN, App tokens)."""

    def __init__(self, owner: str = "octo", repo: str = "app") -> None:
        self.owner, self.repo = owner, repo
        self.tokens: dict[str, str] = {"ghs_fake_actions": "github-actions[bot]", "ghp_fake_user": "octocat"}
        self.integration_logins = {"github-actions[bot]"}
        self.default_branch = "main"
        self.branches: dict[str, bool] = {"main": True}  # name -> protected
        self.collaborators: dict[str, str] = {"octocat": "admin"}  # login -> role_name
        self.workflows: dict[str, dict[str, Any]] = {}  # file name -> workflow (+ "dispatchable")
        self.dispatches: list[dict[str, Any]] = []
        self.runs: dict[int, Run] = {}
        self.logs: dict[int, bytes] = {}
        self.zips: dict[int, bytes] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, dict[str, Any]] = {}
        self.reactions: list[tuple[int, str, str]] = []  # comment id, content, login
        self.review_comments: dict[int, dict[str, Any]] = {}  # diff comments: their own ids
        self.review_reactions: list[tuple[int, str, str]] = []
        self.commit_comments: dict[int, dict[str, Any]] = {}  # comments on commits (by sha)
        self.requests: list[Recorded] = []
        self.failures: list[str] = []
        self.faults: list[Fault] = []
        self.expired_storage_links = 0  # the next N storage GETs answer 403 (link expired)
        self.rerun_ends = "failure"  # how a re-run of failed jobs ends (RERUN_ENDINGS)
        self._ids = itertools.count(1001)
        self._review_ids = itertools.count(9_000_001)
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._api = Loopback(_handler(self, "api"))
        self._storage = Loopback(_handler(self, "storage"))
        self._loopbacks = (self._api, self._storage)
        r = rf"/repos/{re.escape(owner)}/{re.escape(repo)}"
        table: list[tuple[str, str, Callable[..., Reply]]] = [
            ("GET", "/user", self._user),
            ("POST", "/graphql", self._graphql),
            ("GET", r, self._repo),
            ("GET", rf"{r}/branches/(?P<name>.+)", self._branch),
            ("GET", rf"{r}/actions/runs", self._list_runs),
            ("GET", rf"{r}/actions/runs/(?P<run>\d+)", self._run),
            ("GET", rf"{r}/actions/runs/(?P<run>\d+)/jobs", self._jobs),
            ("POST", rf"{r}/actions/runs/(?P<run>\d+)/rerun-failed-jobs", self._rerun_failed_jobs),
            ("GET", rf"{r}/actions/runs/(?P<run>\d+)/artifacts", self._artifacts),
            ("GET", rf"{r}/actions/jobs/(?P<job>\d+)", self._job),
            ("GET", rf"{r}/actions/jobs/(?P<job>\d+)/logs", self._job_logs),
            ("GET", rf"{r}/actions/artifacts/(?P<art>\d+)/zip", self._artifact_zip),
            ("GET", rf"{r}/actions/workflows/(?P<wf>[^/]+)", self._workflow),
            ("POST", rf"{r}/actions/workflows/(?P<wf>[^/]+)/dispatches", self._dispatch),
            ("GET", rf"{r}/pulls", self._list_pulls),
            ("POST", rf"{r}/pulls", self._create_pull),
            ("GET", rf"{r}/pulls/(?P<n>\d+)", self._get_pull),
            ("PATCH", rf"{r}/pulls/(?P<n>\d+)", self._edit_pull),
            ("GET", rf"{r}/issues/(?P<n>\d+)", self._get_issue),
            ("GET", rf"{r}/issues/(?P<n>\d+)/comments", self._list_comments),
            ("POST", rf"{r}/issues/(?P<n>\d+)/comments", self._create_comment),
            ("GET", rf"{r}/issues/comments/(?P<c>\d+)", self._get_comment),
            ("PATCH", rf"{r}/issues/comments/(?P<c>\d+)", self._edit_comment),
            ("DELETE", rf"{r}/issues/comments/(?P<c>\d+)", self._delete_comment),
            ("POST", rf"{r}/issues/comments/(?P<c>\d+)/reactions", self._react),
            ("GET", rf"{r}/pulls/comments/(?P<c>\d+)", self._get_review_comment),
            ("POST", rf"{r}/pulls/comments/(?P<c>\d+)/reactions", self._react_review),
            ("GET", rf"{r}/commits/(?P<sha>[0-9a-f]{{40}})/comments", self._list_commit_comments),
            ("POST", rf"{r}/commits/(?P<sha>[0-9a-f]{{40}})/comments", self._create_commit_comment),
            ("POST", rf"{r}/issues/(?P<n>\d+)/labels", self._add_labels),
            ("DELETE", rf"{r}/issues/(?P<n>\d+)/labels/(?P<label>[^/]+)", self._remove_label),
            ("GET", rf"{r}/collaborators/(?P<user>[^/]+)/permission", self._permission),
        ]
        self._routes = [(m, re.compile(p + r"\Z"), h) for m, p, h in table]

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return self._api.url

    @property
    def storage_url(self) -> str:
        return self._storage.url

    # -- test setup helpers ------------------------------------------------------------------

    def inject(self, reply: Reply, path: str = ".*", method: str | None = None, times: int = 1,
               skip: int = 0) -> None:
        with self._lock:
            self.faults.append(Fault(reply, path, method, times, skip))

    def inject_transport(self, kind: str, path: str = ".*", method: str | None = None, times: int = 1,
                         skip: int = 0, server: str = "api", hold_s: float = DEFAULT_HOLD_S) -> None:
        """Break the connection of the matching requests (breakage.DROP, PARTIAL or TIMEOUT)."""
        Broken(kind)  # refuses an unknown kind now, not in the server thread
        with self._lock:
            self.faults.append(Fault(Reply(0), path, method, times, skip, kind, hold_s, server))

    def add_run(self, run_id: int, jobs: list[tuple[str, str]],
                artifacts: Sequence[tuple[str, bytes]] = (), expired: tuple[str, ...] = (), *,
                branch: str = "main", sha: str = "a" * 40, conclusion: str = "failure",
                event: str = "push", created_at: str = "2026-01-01T00:00:00Z", workflow: str = "ci.yml",
                status: str = "completed", head_repo: str = "") -> list[int]:
        """A run (completed unless `status` says otherwise) of `workflow` (a file under
        .github/workflows); jobs as (name, conclusion) with a log each; returns the job ids.
        `head_repo` is the repository the branch lives in (a fork's `owner/name`), ours when empty."""
        run = Run(head_branch=branch, head_sha=sha, conclusion=conclusion, event=event,
                  created_at=created_at, workflow=workflow, status=status, head_repo=head_repo)
        for name, conclusion in jobs:
            job_id = next(self._ids)
            run.jobs.append(self._job_json(job_id, run_id, name, conclusion))
            self.logs[job_id] = f"{name}: log line 1\n##[error]{name} failed\n".encode()
        for name, data in artifacts:
            art_id = next(self._ids)
            self.zips[art_id] = data
            run.artifacts.append(self._artifact_json(art_id, name, len(data), name in expired))
        self.runs[run_id] = run
        return [j["id"] for j in run.jobs]

    def finish_rerun(self, run_id: int, ends: str = "failure") -> None:
        """A queued re-run of run `run_id` finishes: its queued jobs end as `ends` says
        ("failure", "success", or a conclusion such as "cancelled")."""
        with self._lock:
            run = self.runs[run_id]
            for job in run.jobs:
                if job["status"] != "completed":
                    self._end_job(job, ends)
            self._settle_run(run)

    def add_comment(self, number: int, body: str, author: str, bot: bool = False,
                    created_at: str = "2026-01-01T00:00:00Z", association: str = "NONE") -> int:
        with self._lock:
            comment = self._new_comment(number, body, author, "Bot" if bot else "User")
            comment.update(created_at=created_at, association=association)
            comment_id: int = comment["id"]
            return comment_id

    def add_review_comment(self, number: int, body: str, author: str, bot: bool = False,
                           created_at: str = "2026-01-01T00:00:00Z", association: str = "NONE") -> int:
        """A comment on a line of the pull request's diff (a review comment)."""
        with self._lock:
            comment_id = next(self._review_ids)
            self.review_comments[comment_id] = {
                "id": comment_id, "number": number, "body": body, "user": author,
                "type": "Bot" if bot else "User", "created_at": created_at, "association": association}
            return comment_id

    def add_pull(self, head: str, base: str = "main", *, head_repo: str | None = "",
                 sha: str = "b" * 40, state: str = "open", merged: bool = False, draft: bool = False,
                 title: str = "Change", user: str = "octocat") -> int:
        """A pull request made elsewhere (by a person): `head_repo` names a fork's repository
        ("" = this one, None = deleted since); `merged` closes it as merged."""
        with self._lock:
            number = next(self._numbers)
            self.pulls[number] = {"number": number, "state": "closed" if merged else state,
                                  "title": title, "body": "", "draft": draft, "head": head, "base": base,
                                  "user": user, "labels": [], "sha": sha, "merged": merged,
                                  "head_repo": f"{self.owner}/{self.repo}" if head_repo == "" else head_repo}
            return number

    def add_workflow(self, file: str, dispatchable: bool = True) -> None:
        self.workflows[file] = {"id": next(self._ids), "file": file, "dispatchable": dispatchable}

    def requests_to(self, method: str, pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    # -- dispatch ----------------------------------------------------------------------------

    def handle(self, server: str, method: str, target: str, headers: dict[str, str],
               body: Any) -> Reply:
        return _served(self.dispatch(server, method, target, headers, body))

    def dispatch(self, server: str, method: str, target: str, headers: dict[str, str],
                 body: Any) -> Reply | Broken:
        """`handle`, or the transport fault that breaks this request's connection."""
        parsed = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        path = urllib.parse.unquote(parsed.path)
        with self._lock:
            self.requests.append(Recorded(server, method, path, query, headers, body))
            login = self._login(headers) if server == "api" else None
            if server == "api" and login is None:
                return error(401, "Bad credentials")
            fault = next((f for f in self.faults if f.take(server, method, path)), None)
            if fault is not None and fault.transport is None:
                return fault.reply
            if fault is not None and fault.transport == DROP:
                return Broken(DROP)  # never reached the service: nothing happens
            reply = (self._serve_storage(path, query) if server == "storage"
                     else self._route(method, target, path, query, body, login or ""))
            if fault is None:
                return reply
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            return Broken(fault.transport or DROP, reply.status, tuple(reply.headers.items()), data,
                          fault.hold_s)

    def _route(self, method: str, target: str, path: str, query: dict[str, str], body: Any,
               login: str) -> Reply:
        for route_method, pattern, handler in self._routes:
            match = pattern.match(path)
            if match and route_method == method:
                try:
                    return handler(login=login, query=query, body=body, **match.groupdict())
                except Exception as crash:  # a fake bug must fail the test, not hang it
                    self.failures.append(f"fake crashed on {method} {target}: {crash!r}")
                    return server_error(500)
        self.failures.append(f"unexpected request {method} {target}")
        return error(404, "Not Found")

    def _login(self, headers: dict[str, str]) -> str | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        return self.tokens.get(token) if scheme.lower() in {"token", "bearer"} else None

    def _serve_storage(self, path: str, query: dict[str, str]) -> Reply:
        match = re.fullmatch(r"/(logs|zips)/(\d+)", path)
        store = {"logs": self.logs, "zips": self.zips}[match.group(1)] if match else {}
        if self.expired_storage_links > 0:
            self.expired_storage_links -= 1
            return Reply(403, b"AuthenticationFailed: Signature not valid in the specified time frame")
        if not match or query.get("sig") != "short-lived" or int(match.group(2)) not in store:
            self.failures.append(f"unexpected storage request {path}")
            return Reply(403, b"AuthenticationFailed")
        kind = "text/plain" if match.group(1) == "logs" else "application/zip"
        return Reply(200, store[int(match.group(2))], {"content-type": kind})

    # -- JSON shapes -------------------------------------------------------------------------

    @property
    def _repo_url(self) -> str:
        return f"{self.base_url}/repos/{self.owner}/{self.repo}"

    def _user_json(self, login: str, kind: str | None = None) -> dict[str, Any]:
        kind = kind or ("Bot" if login.endswith("[bot]") else "User")
        return {"login": login, "id": abs(hash(login)) % 10**8, "node_id": f"U_{login}", "type": kind,
                "site_admin": False, "url": f"{self.base_url}/users/{login}",
                "html_url": f"https://github.com/{login}"}

    def _job_json(self, job_id: int, run_id: int, name: str, conclusion: str) -> dict[str, Any]:
        return {"id": job_id, "run_id": run_id, "name": name, "status": "completed",
                "conclusion": conclusion, "head_branch": "main", "head_sha": "a" * 40,
                "url": f"{self._repo_url}/actions/jobs/{job_id}",
                "html_url": f"https://github.com/{self.owner}/{self.repo}/actions/runs/{run_id}/job/{job_id}",
                "run_url": f"{self._repo_url}/actions/runs/{run_id}", "steps": [], "run_attempt": 1,
                "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:05:00Z"}

    def _artifact_json(self, art_id: int, name: str, size: int, expired: bool) -> dict[str, Any]:
        return {"id": art_id, "node_id": f"A_{art_id}", "name": name, "size_in_bytes": size,
                "url": f"{self._repo_url}/actions/artifacts/{art_id}",
                "archive_download_url": f"{self._repo_url}/actions/artifacts/{art_id}/zip",
                "expired": expired, "created_at": "2026-01-01T00:00:00Z",
                "expires_at": "2026-04-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}

    def _repo_json(self, full_name: str) -> dict[str, Any]:
        owner, name = full_name.split("/", 1)
        return {"id": 42 if full_name == f"{self.owner}/{self.repo}" else abs(hash(full_name)) % 10**6,
                "node_id": f"R_{full_name}", "name": name, "full_name": full_name, "private": False,
                "fork": full_name != f"{self.owner}/{self.repo}", "owner": self._user_json(owner),
                "url": f"{self.base_url}/repos/{full_name}", "html_url": f"https://github.com/{full_name}"}

    def _pull_json(self, pull: dict[str, Any]) -> dict[str, Any]:
        n = pull["number"]
        here = f"{self.owner}/{self.repo}"
        # Pulls written straight into `self.pulls` by older tests lack the newer keys.
        head_repo = pull.get("head_repo", here)
        merged = bool(pull.get("merged"))

        def ref(name: str, repo: str | None, sha: str) -> dict[str, Any]:
            owner = (repo or here).split("/", 1)[0]
            return {"label": f"{owner}:{name}", "ref": name, "sha": sha,
                    "repo": self._repo_json(repo) if repo else None}
        return {"id": 500 + n, "node_id": f"PR_{n}", "number": n, "state": pull["state"],
                "title": pull["title"], "body": pull["body"], "draft": pull["draft"],
                "url": f"{self._repo_url}/pulls/{n}", "issue_url": f"{self._repo_url}/issues/{n}",
                "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{n}",
                "head": ref(pull["head"], head_repo, pull.get("sha", "b" * 40)),
                "base": ref(pull["base"], here, "c" * 40), "user": self._user_json(pull["user"]),
                "labels": [self._label_json(x) for x in pull["labels"]], "merged": merged,
                "merged_at": "2026-01-02T00:00:00Z" if merged else None,
                "closed_at": "2026-01-02T00:00:00Z" if pull["state"] == "closed" else None}

    def _label_json(self, name: str) -> dict[str, Any]:
        return {"id": abs(hash(name)) % 10**6, "node_id": f"L_{name}", "name": name, "color": "ededed",
                "default": False, "description": None,
                "url": f"{self._repo_url}/labels/{urllib.parse.quote(name)}"}

    def _comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        return {"id": c["id"], "node_id": f"IC_{c['id']}", "body": c["body"],
                "user": self._user_json(c["user"], c["type"]),
                "url": f"{self._repo_url}/issues/comments/{c['id']}",
                "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{c['number']}#issuecomment-{c['id']}",
                "issue_url": f"{self._repo_url}/issues/{c['number']}",
                "created_at": c.get("created_at", "2026-01-01T00:00:00Z"),
                "updated_at": c.get("created_at", "2026-01-01T00:00:00Z"),
                "author_association": c.get("association", "NONE")}

    def _review_comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        pull = self.pulls.get(c["number"], {})
        sha = pull.get("sha", "b" * 40)
        url = f"{self._repo_url}/pulls/comments/{c['id']}"
        html = f"https://github.com/{self.owner}/{self.repo}/pull/{c['number']}#discussion_r{c['id']}"
        pull_url = f"{self._repo_url}/pulls/{c['number']}"
        return {"url": url, "pull_request_review_id": c["id"] + 1, "id": c["id"],
                "node_id": f"PRRC_{c['id']}", "diff_hunk": "@@ -1 +1 @@\n-# Hello", "path": "README.md",
                "position": 1, "original_position": 1, "commit_id": sha, "original_commit_id": sha,
                "user": self._user_json(c["user"], c["type"]), "body": c["body"],
                "created_at": c["created_at"], "updated_at": c["created_at"], "html_url": html,
                "pull_request_url": pull_url, "author_association": c["association"],
                "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull_url}},
                "start_line": None, "original_start_line": None, "start_side": None, "line": 1,
                "original_line": 1, "side": "RIGHT"}

    def _page(self, path: str, query: dict[str, str], items: list[Any],
              wrap: str | None = None) -> Reply:
        per_page = min(100, int(query.get("per_page", 30)))
        page = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []
        for rel, number in (("next", page + 1), ("last", last)):
            if page < last:
                q = urllib.parse.urlencode({**query, "page": number, "per_page": per_page})
                links.append(f'<{self.base_url}{path}?{q}>; rel="{rel}"')
        headers = {"link": ", ".join(links)} if links else {}
        body = {"total_count": len(items), wrap: chunk} if wrap else chunk
        return Reply(200, body, headers)

    # -- routes ------------------------------------------------------------------------------

    def _user(self, login: str, **_: Any) -> Reply:
        if login in self.integration_logins:
            return error(403, "Resource not accessible by integration")
        return Reply(200, self._user_json(login))

    def _repo(self, **_: Any) -> Reply:
        return Reply(200, {"id": 42, "node_id": "R_42", "name": self.repo,
                           "full_name": f"{self.owner}/{self.repo}", "private": False,
                           "owner": self._user_json(self.owner), "url": self._repo_url,
                           "html_url": f"https://github.com/{self.owner}/{self.repo}",
                           "default_branch": self.default_branch})

    def _branch(self, name: str, **_: Any) -> Reply:
        if name not in self.branches:
            return error(404, "Branch not found")
        return Reply(200, {"name": name, "protected": self.branches[name],
                           "commit": {"sha": "c" * 40, "url": f"{self._repo_url}/commits/{'c' * 40}"},
                           "protection_url": f"{self._repo_url}/branches/{name}/protection"})

    def _run_json(self, run_id: int) -> dict[str, Any]:
        run = self.runs[run_id]
        url = f"{self._repo_url}/actions/runs/{run_id}"
        repo = {"id": 42, "full_name": f"{self.owner}/{self.repo}", "url": self._repo_url}
        head = {"id": 43, "full_name": run.head_repo} if run.head_repo else repo
        return {"id": run_id, "name": run.workflow.removesuffix(".yml").upper(), "status": run.status,
                "conclusion": run.conclusion or None,
                "workflow_id": _workflow_id(run.workflow), "path": f".github/workflows/{run.workflow}",
                "repository": repo, "head_repository": head,
                "head_branch": run.head_branch, "head_sha": run.head_sha, "event": run.event, "url": url,
                "html_url": f"https://github.com/{self.owner}/{self.repo}/actions/runs/{run_id}",
                "jobs_url": f"{url}/jobs", "artifacts_url": f"{url}/artifacts",
                "logs_url": f"{url}/logs", "run_attempt": run.attempt, "pull_requests": [],
                "created_at": run.created_at, "updated_at": run.created_at}

    def _run(self, run: str, **_: Any) -> Reply:
        if int(run) not in self.runs:
            return error(404, "Not Found")
        return Reply(200, self._run_json(int(run)))

    def _list_runs(self, query: dict[str, str], **_: Any) -> Reply:
        runs = sorted((self._run_json(i) for i in self.runs), key=lambda r: (r["created_at"], r["id"]),
                      reverse=True)
        for key, name in (("branch", "head_branch"), ("head_sha", "head_sha"), ("event", "event")):
            if key in query:
                runs = [r for r in runs if r[name] == query[key]]
        status = query.get("status")
        if status in {"completed", "queued", "in_progress", "requested", "waiting", "pending"}:
            runs = [r for r in runs if r["status"] == status]
        elif status:
            runs = [r for r in runs if r["conclusion"] == status]
        return self._page(f"/repos/{self.owner}/{self.repo}/actions/runs", query, runs, "workflow_runs")

    def _jobs(self, run: str, query: dict[str, str], **_: Any) -> Reply:
        jobs = self.runs[int(run)].jobs if int(run) in self.runs else []
        if query.get("filter", "latest") == "latest" and int(run) in self.runs:
            jobs = _latest(self.runs[int(run)])
        return self._page(f"/repos/{self.owner}/{self.repo}/actions/runs/{run}/jobs", query, jobs, "jobs")

    def _rerun_failed_jobs(self, run: str, **_: Any) -> Reply:
        found = self.runs.get(int(run))
        if found is None:
            return error(404, "Not Found")
        if found.status != "completed":
            return error(403, "This workflow is already running")
        ends = found.rerun_ends or self.rerun_ends
        if ends not in RERUN_ENDINGS:
            raise ValueError(f"rerun_ends {ends!r}: one of {RERUN_ENDINGS}")
        found.attempt += 1
        for old in [j for j in _latest(found) if j["conclusion"] in _FAILED]:
            job_id = next(self._ids)
            job = {**self._job_json(job_id, int(run), old["name"], old["conclusion"]),
                   "run_attempt": found.attempt}
            self.logs[job_id] = self.logs.get(old["id"], b"")  # a failure "the same way"
            self._end_job(job, ends, old["conclusion"])
            found.jobs.append(job)
            found.replaced.add(old["id"])
        self._settle_run(found)
        return Reply(201, {})

    def _end_job(self, job: dict[str, Any], ends: str, failed_as: str = "failure") -> None:
        if ends == "queued":
            job.update(status="queued", conclusion=None, completed_at=None)
            return
        conclusion = {"failure": failed_as, "success": "success"}.get(ends, ends)  # or "cancelled"
        job.update(status="completed", conclusion=conclusion, completed_at="2026-01-01T00:10:00Z")
        if ends == "success":
            self.logs[job["id"]] = f"{job['name']}: all tests passed\n".encode()

    @staticmethod
    def _settle_run(run: Run) -> None:
        """The run's status and conclusion from its newest jobs, as GitHub derives them."""
        latest = _latest(run)
        if any(j["status"] != "completed" for j in latest):
            run.status, run.conclusion = "queued", ""
            return
        run.status = "completed"
        ends = {j["conclusion"] for j in latest}
        run.conclusion = ("failure" if ends & (_FAILED - {"cancelled"})
                          else "cancelled" if "cancelled" in ends else "success")

    def _artifacts(self, run: str, query: dict[str, str], **_: Any) -> Reply:
        arts = self.runs[int(run)].artifacts if int(run) in self.runs else []
        return self._page(f"/repos/{self.owner}/{self.repo}/actions/runs/{run}/artifacts", query, arts,
                          "artifacts")

    def _find_job(self, job_id: int) -> dict[str, Any] | None:
        return next((j for r in self.runs.values() for j in r.jobs if j["id"] == job_id), None)

    def _job(self, job: str, **_: Any) -> Reply:
        found = self._find_job(int(job))
        return Reply(200, found) if found else error(404, "Not Found")

    def _job_logs(self, job: str, **_: Any) -> Reply:
        if int(job) not in self.logs:
            return error(404, "Not Found")
        return Reply(302, b"", {"location": f"{self.storage_url}/logs/{job}?sig=short-lived"})

    def _artifact_zip(self, art: str, **_: Any) -> Reply:
        if int(art) not in self.zips:
            return error(404, "Not Found")
        return Reply(302, b"", {"location": f"{self.storage_url}/zips/{art}?sig=short-lived"})

    def _workflow(self, wf: str, **_: Any) -> Reply:
        found = self._find_workflow(wf)
        if found is None:
            return error(404, "Not Found")
        return Reply(200, {"id": found["id"], "node_id": f"W_{found['id']}", "name": found["file"],
                           "path": f".github/workflows/{found['file']}", "state": "active",
                           "url": f"{self._repo_url}/actions/workflows/{found['id']}",
                           "html_url": f"https://github.com/{self.owner}/{self.repo}/actions",
                           "badge_url": "", "created_at": "2026-01-01T00:00:00Z",
                           "updated_at": "2026-01-01T00:00:00Z"})

    def _find_workflow(self, wf: str) -> dict[str, Any] | None:
        return next((w for w in self.workflows.values() if wf in (w["file"], str(w["id"]))), None)

    def _dispatch(self, wf: str, body: Any, **_: Any) -> Reply:
        found = self._find_workflow(wf)
        if found is None:
            return error(404, "Not Found")
        if not isinstance(body, dict) or not isinstance(body.get("ref"), str):
            return error(422, "Invalid request.\n\nFor 'properties/ref', nil is not a string.")
        if not found["dispatchable"]:
            return error(422, "Workflow does not have 'workflow_dispatch' trigger")
        self.dispatches.append({"workflow": found["file"], **body})
        return Reply(204, b"")

    def _list_pulls(self, query: dict[str, str], **_: Any) -> Reply:
        state, head = query.get("state", "open"), query.get("head")
        pulls = [self._pull_json(p) for p in self.pulls.values()
                 if (state == "all" or p["state"] == state)]
        pulls = [p for p in pulls if head is None or head == p["head"]["label"]]  # `owner:branch`
        default = "desc" if query.get("sort", "created") == "created" else "asc"  # as the REST docs say
        if query.get("direction", default) == "desc":
            pulls.reverse()
        return self._page(f"/repos/{self.owner}/{self.repo}/pulls", query, pulls)

    def _create_pull(self, login: str, body: Any, **_: Any) -> Reply:
        head, base = body.get("head"), body.get("base")
        if not body.get("title"):
            return error(422, "Validation Failed", errors=[{"resource": "PullRequest", "field": "title",
                                                            "code": "missing_field"}])
        if head not in self.branches or base not in self.branches:
            field_name = "head" if head not in self.branches else "base"
            return error(422, "Validation Failed", errors=[{"resource": "PullRequest",
                                                            "field": field_name, "code": "invalid"}])
        if any(p["head"] == head and p["base"] == base and p["state"] == "open" for p in self.pulls.values()):
            return error(422, "Validation Failed", errors=[{
                "resource": "PullRequest", "code": "custom",
                "message": f"A pull request already exists for {self.owner}:{head}."}])
        number = next(self._numbers)
        self.pulls[number] = {"number": number, "state": "open", "title": body["title"],
                              "body": body.get("body"), "draft": bool(body.get("draft")),
                              "head": head, "base": base, "user": login, "labels": []}
        return Reply(201, self._pull_json(self.pulls[number]))

    def _get_pull(self, n: str, **_: Any) -> Reply:
        pull = self.pulls.get(int(n))
        return Reply(200, self._pull_json(pull)) if pull else error(404, "Not Found")

    def _get_issue(self, n: str, **_: Any) -> Reply:
        """A pull request seen as an issue (GitHub numbers both alike)."""
        pull = self.pulls.get(int(n))
        if pull is None:
            return error(404, "Not Found")
        shape = self._pull_json(pull)
        keys = ("id", "node_id", "number", "state", "title", "body", "user", "labels", "html_url")
        return Reply(200, {**{k: shape[k] for k in keys}, "url": shape["issue_url"],
                           "pull_request": {"url": shape["url"], "html_url": shape["html_url"]}})

    def _edit_pull(self, n: str, body: Any, **_: Any) -> Reply:
        pull = self.pulls.get(int(n))
        if pull is None:
            return error(404, "Not Found")
        for key in ("title", "body", "state"):
            if key in body:
                pull[key] = body[key]
        return Reply(200, self._pull_json(pull))

    def _graphql(self, body: Any, login: str = "", **_: Any) -> Reply:
        query = body.get("query", "") if isinstance(body, dict) else ""
        if " ".join(query.split()) == "query { viewer { login } }":  # any token may ask who it is
            return Reply(200, {"data": {"viewer": {"login": login}}})
        node = ((body.get("variables") or {}).get("input") or {}).get("pullRequestId", "")
        pull = self.pulls.get(int(node[3:])) if re.fullmatch(r"PR_\d+", str(node)) else None
        name = next((m for m in ("convertPullRequestToDraft", "markPullRequestReadyForReview")
                     if f"{m}(input" in query), None)
        if name is None or pull is None:
            self.failures.append(f"unexpected GraphQL request {query[:80]!r}")
            return Reply(200, {"errors": [{"type": "NOT_FOUND", "message": "Could not resolve"}]})
        pull["draft"] = name == "convertPullRequestToDraft"
        return Reply(200, {"data": {name: {"clientMutationId": None,
                                           "pullRequest": {"isDraft": pull["draft"]}}}})

    def _new_comment(self, number: int, body: str, author: str, kind: str) -> dict[str, Any]:
        comment: dict[str, Any] = {"id": next(self._ids), "number": number, "body": body,
                                   "user": author, "type": kind}
        self.comments[comment["id"]] = comment
        return comment

    def _list_comments(self, n: str, query: dict[str, str], **_: Any) -> Reply:
        items = [self._comment_json(c) for c in self.comments.values() if c["number"] == int(n)]
        return self._page(f"/repos/{self.owner}/{self.repo}/issues/{n}/comments", query, items)

    def _create_comment(self, n: str, login: str, body: Any, **_: Any) -> Reply:
        if int(n) not in self.pulls:
            return error(404, "Not Found")
        if not isinstance(body, dict) or not body.get("body"):
            return error(422, "Validation Failed", errors=[{"resource": "IssueComment", "field": "body",
                                                            "code": "missing_field"}])
        kind = "Bot" if login.endswith("[bot]") else "User"
        return Reply(201, self._comment_json(self._new_comment(int(n), body["body"], login, kind)))

    def _commit_comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        return {"id": c["id"], "node_id": f"CC_{c['id']}", "body": c["body"], "path": None,
                "position": None, "line": None, "commit_id": c["sha"],
                "user": self._user_json(c["user"], c["type"]),
                "url": f"{self._repo_url}/comments/{c['id']}",
                "html_url": f"https://github.com/{self.owner}/{self.repo}/commit/{c['sha']}#commitcomment-{c['id']}",
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                "author_association": "NONE"}

    def _list_commit_comments(self, sha: str, query: dict[str, str], **_: Any) -> Reply:
        items = [self._commit_comment_json(c) for c in self.commit_comments.values() if c["sha"] == sha]
        return self._page(f"/repos/{self.owner}/{self.repo}/commits/{sha}/comments", query, items)

    def _create_commit_comment(self, sha: str, login: str, body: Any, **_: Any) -> Reply:
        if not isinstance(body, dict) or not body.get("body"):
            return error(422, "Validation Failed", errors=[{"resource": "CommitComment", "field": "body",
                                                            "code": "missing_field"}])
        comment = {"id": next(self._ids), "sha": sha, "body": body["body"], "user": login,
                   "type": "Bot" if login.endswith("[bot]") else "User"}
        self.commit_comments[comment["id"]] = comment
        return Reply(201, self._commit_comment_json(comment))

    def _get_comment(self, c: str, **_: Any) -> Reply:
        comment = self.comments.get(int(c))
        return Reply(200, self._comment_json(comment)) if comment else error(404, "Not Found")

    def _edit_comment(self, c: str, login: str, body: Any, **_: Any) -> Reply:
        comment = self.comments.get(int(c))
        if comment is None:
            return error(404, "Not Found")
        if comment["user"] != login:  # only the author (or a maintainer) may edit it
            return error(403, "Resource not accessible by integration")
        comment["body"] = body["body"]
        return Reply(200, self._comment_json(comment))

    def _delete_comment(self, c: str, login: str, **_: Any) -> Reply:
        comment = self.comments.get(int(c))
        if comment is None:
            return error(404, "Not Found")
        if comment["user"] != login:
            return error(403, "Resource not accessible by integration")
        del self.comments[int(c)]
        return Reply(204, b"")

    def _react(self, c: str, login: str, body: Any, **_: Any) -> Reply:
        return self._reaction(self.comments, self.reactions, int(c), login, body)

    def _react_review(self, c: str, login: str, body: Any, **_: Any) -> Reply:
        return self._reaction(self.review_comments, self.review_reactions, int(c), login, body)

    def _reaction(self, comments: dict[int, dict[str, Any]], reactions: list[tuple[int, str, str]],
                  comment_id: int, login: str, body: Any) -> Reply:
        content = body.get("content") if isinstance(body, dict) else None
        if comment_id not in comments:
            return error(404, "Not Found")
        if content not in {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}:
            return error(422, "Validation Failed", errors=[{"resource": "Reaction", "field": "content",
                                                            "code": "invalid"}])
        existed = (comment_id, content, login) in reactions
        if not existed:
            reactions.append((comment_id, content, login))
        return Reply(200 if existed else 201, {"id": 7, "node_id": "RE_7", "content": content,
                                               "user": self._user_json(login),
                                               "created_at": "2026-01-01T00:00:00Z"})

    def _get_review_comment(self, c: str, **_: Any) -> Reply:
        comment = self.review_comments.get(int(c))
        return Reply(200, self._review_comment_json(comment)) if comment else error(404, "Not Found")

    def _add_labels(self, n: str, body: Any, **_: Any) -> Reply:
        pull = self.pulls.get(int(n))
        if pull is None:
            return error(404, "Not Found")
        # GitHub takes `{"labels": [...]}` or a bare array (PyGithub sends the array).
        names = body.get("labels", []) if isinstance(body, dict) else body
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
            return error(422, "Invalid request.\n\nFor 'links/0/schema', nil is not an array.")
        for name in names:
            if name not in pull["labels"]:
                pull["labels"].append(name)
        return Reply(200, [self._label_json(x) for x in pull["labels"]])

    def _remove_label(self, n: str, label: str, **_: Any) -> Reply:
        pull = self.pulls.get(int(n))
        if pull is None or label not in pull["labels"]:
            return error(404, "Label does not exist")
        pull["labels"].remove(label)
        return Reply(200, [self._label_json(x) for x in pull["labels"]])

    def _permission(self, user: str, **_: Any) -> Reply:
        if user not in self.collaborators and user not in self.tokens.values():
            return error(404, f"{user} is not a user")
        role = self.collaborators.get(user, "read")
        legacy = {"maintain": "write", "triage": "read"}.get(role, role)
        return Reply(200, {"permission": legacy, "role_name": role, "user": self._user_json(user)})


_FAILED = frozenset({"failure", "timed_out", "startup_failure", "cancelled"})


def _latest(run: Run) -> list[dict[str, Any]]:
    """Each job's newest attempt (`filter=latest`, GitHub's default): none a re-run replaced."""
    return [j for j in run.jobs if j["id"] not in run.replaced]


def _workflow_id(file: str) -> int:
    """A stable id per workflow file, as GitHub gives each workflow one."""
    return 1000 + sum(file.encode()) % 9000


def _served(result: Reply | Broken) -> Reply:
    """A transport fault's answer as the service produced it (for in-process callers of `handle`)."""
    if isinstance(result, Reply):
        return result
    return Reply(result.status or 502, result.data, dict(result.headers))


def _handler(fake: GitHubFake, server: str) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def _handle(self) -> None:
            reply = fake.dispatch(server, self.command, self.path, self.lower_headers(), self.read_body())
            if isinstance(reply, Broken):
                send_broken(self, reply)
                return
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            json_type = ("content-type", "application/json; charset=utf-8")
            head = [] if isinstance(reply.body, bytes) else [json_type]
            self.send_reply(reply.status, [*head, ("content-length", str(len(data))), *reply.headers.items()],
                            data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    return Handler
