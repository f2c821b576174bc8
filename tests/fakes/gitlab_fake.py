"""A loopback fake of GitLab REST v4 for the real python-gitlab client (DESIGN.md §5).

stdlib `ThreadingHTTPServer` on 127.0.0.1, port 0, in a thread; `.url` is the server root (the
client adds `/api/v4`). One project, `acme/shop` (id 42), addressed by id or URL-encoded path.
A route table (`gitlab_fake_routes.py` holds the handlers and the state, `gitlab_fake_commands.py`
what slash commands and the poller add, `gitlab_fake_reruns.py` the retry of jobs): unknown routes answer
404 and are recorded in `failures` (tests assert it stays empty); every request is recorded with
token values masked. State lives in memory, so what one forge writes a later one reads.

Tokens are checked as GitLab does: `PRIVATE-TOKEN` (personal / project access tokens) or
`JOB-TOKEN` (`CI_JOB_TOKEN`), else 401. A job token may read (jobs, traces, artifacts, pipelines,
merge requests) and gets 403 on every write, and 401 on `GET /user`. A user who is not a member
gets 404 on the project (it is private). Lists paginate with `page`/`per_page` and the `X-Page`,
`X-Per-Page`, `X-Next-Page`, `X-Prev-Page`, `X-Total`, `X-Total-Pages` and `Link` headers.
Faults answer the next matching requests with a canned reply (401/403/404/429 + `Retry-After`/5xx),
or break their connection (tests/fakes/breakage.py: dropped, half an answer, held past the timeout).
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.breakage import DEFAULT_HOLD_S, DROP, Broken, hits, send_broken
from tests.fakes.gitlab_fake_commands import CommandRoutes
from tests.fakes.gitlab_fake_reruns import RerunRoutes
from tests.fakes.gitlab_fake_routes import (
    API,
    Call,
    FakeJob,
    Reply,
    error,
    forbidden,
    not_found,
    project_route,
)
from tests.fakes.loopback import Loopback, QuietHandler, Served

__all__ = ["Call", "FakeJob", "Fault", "GitLabFake", "Recorded", "Reply", "error", "forbidden",
           "not_found", "rate_limited", "server_error"]

_TOKEN_HEADERS = ("private-token", "job-token", "authorization")
MASK = "[MASKED]"


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str  # decoded, with the /api/v4 prefix
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names; token values masked
    body: Any
    user: str | None  # who the token acted as (None: rejected)


@dataclass
class Fault:
    """Answer the next `times` requests matching `method` and the `path` regex (searched in the
    decoded path, e.g. `/jobs/\\d+/trace$`) with `reply`, after the token check."""

    reply: Reply
    path: str = ".*"
    method: str | None = None
    times: int = 1
    skip: int = 0  # let the first `skip` matching requests through
    transport: str | None = None  # tests/fakes/breakage.py: drop, partial, timeout instead of `reply`
    hold_s: float = DEFAULT_HOLD_S

    def take(self, method: str, path: str) -> bool:
        """Whether this request is one the fault hits (counting it down)."""
        return hits(self, method, path)


def rate_limited(retry_after: str | None = "1", reset_epoch: int | None = None) -> Reply:
    """GitLab's 429 (Rack::Attack): plain text, `Retry-After` and the `RateLimit-*` headers."""
    headers = {"content-type": "text/plain", "RateLimit-Limit": "600", "RateLimit-Remaining": "0",
               "RateLimit-Observed": "601"}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    if reset_epoch is not None:
        headers["RateLimit-Reset"] = str(reset_epoch)
    return Reply(429, b"Retry later\n", headers)


def server_error(status: int = 502) -> Reply:
    names = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
             504: "Gateway Timeout"}
    if status == 500:
        return error(500, "500 Internal Server Error")
    return Reply(status, f"<html><body><h1>{status} {names.get(status, 'Error')}</h1></body></html>".encode(),
                 {"content-type": "text/html"})


class GitLabFake(CommandRoutes, RerunRoutes, Served):
    """Use as a context manager. `origin` is the bare repository branches are checked against
    (MR source/target, pipeline refs); without it every branch exists."""

    def __init__(self, origin: Path | None = None) -> None:
        super().__init__(origin)
        self.requests: list[Recorded] = []
        self.failures: list[str] = []
        self.faults: list[Fault] = []
        self._lock = threading.Lock()
        self.add_user("maint", 40)
        self.add_user("project_42_bot_abc", 30, bot=True)
        self.add_token("glpat-maint", "maint", "personal")
        self.add_token("glpat-bot", "project_42_bot_abc", "project")
        self.add_token("job-token-1", "maint", "job")
        self._loopback = Loopback(_handler(self))
        self._loopbacks = (self._loopback,)
        P = project_route
        table: list[tuple[str, str, Callable[..., Any]]] = [
            ("GET", f"{API}/user", self.r_user),
            ("GET", f"{API}/users", self.r_users),
            ("GET", P(""), self.r_project),
            ("GET", P("/protected_branches"), self.r_protected_branches),
            ("GET", P("/members/all"), self.r_members_all),
            ("GET", P(r"/members/all/(?P<user_id>\d+)"), self.r_member),
            ("GET", P("/pipelines"), self.r_pipelines),
            ("POST", P("/pipeline"), self.r_create_pipeline),
            ("GET", P(r"/pipelines/(?P<pipeline>\d+)"), self.r_pipeline),
            ("GET", P(r"/pipelines/(?P<pipeline>\d+)/jobs"), self.r_pipeline_jobs),
            ("GET", P(r"/jobs/(?P<job>\d+)"), self.r_job),
            ("GET", P(r"/jobs/(?P<job>\d+)/trace"), self.r_trace),
            ("GET", P(r"/jobs/(?P<job>\d+)/artifacts"), self.r_artifacts),
            ("GET", P("/merge_requests"), self.r_merge_requests),
            ("POST", P("/merge_requests"), self.r_create_mr),
            ("GET", P(r"/merge_requests/(?P<iid>\d+)"), self.r_mr),
            ("PUT", P(r"/merge_requests/(?P<iid>\d+)"), self.r_update_mr),
            ("GET", P(r"/merge_requests/(?P<iid>\d+)/notes"), self.r_notes),
            ("POST", P(r"/merge_requests/(?P<iid>\d+)/notes"), self.r_create_note),
            ("GET", P(r"/merge_requests/(?P<iid>\d+)/notes/(?P<note>\d+)"), self.r_note),
            ("PUT", P(r"/merge_requests/(?P<iid>\d+)/notes/(?P<note>\d+)"), self.r_update_note),
            ("DELETE", P(r"/merge_requests/(?P<iid>\d+)/notes/(?P<note>\d+)"), self.r_delete_note),
            ("GET", P(r"/merge_requests/(?P<iid>\d+)/notes/(?P<note>\d+)/award_emoji"), self.r_note_awards),
            ("POST", P(r"/merge_requests/(?P<iid>\d+)/notes/(?P<note>\d+)/award_emoji"), self.r_award_note),
            ("GET", P(r"/repository/commits/(?P<sha>[0-9a-f]{40})/comments"), self.r_commit_comments),
            ("POST", P(r"/repository/commits/(?P<sha>[0-9a-f]{40})/comments"), self.r_create_commit_comment),
            *self.command_routes(),
            *self.rerun_routes(),
        ]
        self._routes = [(m, re.compile(p + r"/?\Z"), h) for m, p, h in table]

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self._loopback.url

    # -- test setup --------------------------------------------------------------------------

    def add_user(self, username: str, access_level: int | None, *, bot: bool = False) -> int:
        """A user; a member of the project at `access_level` (10 Guest ... 50 Owner; None: not one)."""
        with self._lock:
            known = self.users.get(username)
            user_id = known["id"] if known else next(self._user_ids)
            self.users[username] = {"id": user_id, "username": username, "name": username.title(),
                                    "bot": bot, "access_level": access_level}
            return int(user_id)

    def add_token(self, token: str, username: str, kind: str = "personal") -> None:
        if kind not in ("personal", "project", "job"):
            raise ValueError(f"token kind {kind!r}: personal, project or job")
        if username not in self.users:
            self.add_user(username, None)
        self.tokens[token] = (username, kind)

    def add_pipeline(self, ref: str, sha: str, status: str, jobs: list[FakeJob], source: str = "push") -> int:
        with self._lock:
            pipeline_id = next(self._pipeline_ids)
            pipeline = self.pipeline_json(pipeline_id, ref, sha, status, source)
            self.pipelines[pipeline_id] = pipeline
            for job in jobs:
                job_id = next(self._job_ids)
                self.jobs[job_id] = self.job_json(job_id, pipeline, job)
                self.traces[job_id] = job.trace
                if job.artifacts is not None and not job.artifacts_expired:
                    self.archives[job_id] = job.artifacts
            return pipeline_id

    def job_ids(self, pipeline_id: int) -> list[int]:
        return [j for j, job in self.jobs.items() if job["pipeline"]["id"] == pipeline_id]

    def add_note(self, iid: int, body: str, username: str, system: bool = False) -> int:
        with self._lock:
            if username not in self.users:
                self.users[username] = {"id": next(self._user_ids), "username": username,
                                        "name": username.title(), "bot": False, "access_level": None}
            note = self.note_json(iid, next(self._note_ids), body, username, system)
            self.notes.setdefault(iid, []).append(note)
            return int(note["id"])

    def add_fault(self, fault: Fault) -> None:
        with self._lock:
            self.faults.append(fault)

    def requests_to(self, method: str, pattern: str) -> list[Recorded]:
        """Recorded requests whose decoded path (without `/api/v4`) matches `pattern` fully."""
        return [r for r in self.requests
                if r.method == method and re.fullmatch(pattern, r.path.removeprefix(API))]

    # -- dispatch ----------------------------------------------------------------------------

    def add_transport_fault(self, kind: str, path: str = ".*", method: str | None = None, times: int = 1,
                            skip: int = 0, hold_s: float = DEFAULT_HOLD_S) -> None:
        """Break the connection of the matching requests (breakage.DROP, PARTIAL or TIMEOUT)."""
        Broken(kind)  # refuses an unknown kind now, not in the server thread
        self.add_fault(Fault(Reply(0), path, method, times, skip, kind, hold_s))

    def handle(self, method: str, target: str, headers: dict[str, str], body: Any) -> Reply:
        result = self.dispatch(method, target, headers, body)
        if isinstance(result, Reply):
            return result
        return Reply(result.status or 502, result.data, dict(result.headers))

    def dispatch(self, method: str, target: str, headers: dict[str, str], body: Any) -> Reply | Broken:
        """`handle`, or the transport fault that breaks this request's connection."""
        parsed = urllib.parse.urlsplit(target)
        pairs = urllib.parse.parse_qsl(parsed.query, keep_blank_values=True)
        multi: dict[str, list[str]] = {}
        for key, value in pairs:
            multi.setdefault(key, []).append(value)
        query = {k: ",".join(v) for k, v in multi.items()}
        path = urllib.parse.unquote(parsed.path)
        masked = {k: (MASK if k in _TOKEN_HEADERS else v) for k, v in headers.items()}
        with self._lock:
            identity = self._identity(headers)
            self.requests.append(Recorded(method, path, query, masked, body,
                                          identity[0]["username"] if identity else None))
            if identity is None:
                return error(401, "401 Unauthorized")
            fault = next((f for f in self.faults if f.take(method, path)), None)
            if fault is not None and fault.transport is None:
                return fault.reply
            if fault is not None and fault.transport == DROP:
                return Broken(DROP)  # never reached the service: nothing happens
            reply = self._route(method, target, parsed.path, path, query, multi, body, identity)
            if fault is None:
                return reply
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            return Broken(fault.transport or DROP, reply.status, tuple(reply.headers.items()), data,
                          fault.hold_s)

    def _route(self, method: str, target: str, raw_path: str, path: str, query: dict[str, str],
               multi: dict[str, list[str]], body: Any, identity: tuple[dict[str, Any], str]) -> Reply:
        for route_method, pattern, handler in self._routes:
            match = pattern.match(raw_path)
            if match is None or route_method != method:
                continue
            groups = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items()}
            call = Call(method, path, query, multi, body, *identity)
            refused = self._project_access(call, groups.pop("project", None))
            if refused is not None:
                return refused
            try:
                result = handler(call, **groups)
            except Exception as crash:  # a fake bug must fail the test, not hang it
                self.failures.append(f"fake crashed on {method} {target}: {crash!r}")
                return server_error(500)
            return result if isinstance(result, Reply) else self._page(raw_path, multi, result)
        self.failures.append(f"unexpected request {method} {target}")
        return not_found()

    def _identity(self, headers: dict[str, str]) -> tuple[dict[str, Any], str] | None:
        token = headers.get("private-token") or headers.get("job-token")
        if not token:
            scheme, _, token = headers.get("authorization", "").partition(" ")
            token = token if scheme.lower() == "bearer" else ""
        found = self.tokens.get(token)
        if found is None:
            return None
        username, kind = found
        if ("job-token" in headers) != (kind == "job"):  # a PAT in JOB-TOKEN is no job token
            return None
        return self.users[username], kind

    def _project_access(self, call: Call, project: str | None) -> Reply | None:
        if project is None:
            return None
        if project not in (str(self.project_id), self.project_path):
            return not_found("Project")
        if call.kind != "job" and not call.user.get("access_level"):
            return not_found("Project")  # private: a non-member cannot see it
        return None

    def _page(self, raw_path: str, multi: dict[str, list[str]], items: list[dict[str, Any]]) -> Reply:
        per_page = max(1, min(100, int((multi.get("per_page") or ["20"])[-1])))
        page = max(1, int((multi.get("page") or ["1"])[-1]))
        pages = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]

        def link(number: int) -> str:
            kept = [(k, v) for k, vs in multi.items() if k not in ("page", "per_page") for v in vs]
            q = urllib.parse.urlencode([*kept, ("page", number), ("per_page", per_page)])
            return f"{self.url}{raw_path}?{q}"
        rels = [("first", 1), ("last", pages)]
        if page < pages:
            rels.insert(0, ("next", page + 1))
        if page > 1:
            rels.insert(0, ("prev", page - 1))
        headers = {"X-Page": str(page), "X-Per-Page": str(per_page), "X-Total": str(len(items)),
                   "X-Total-Pages": str(pages), "X-Next-Page": str(page + 1) if page < pages else "",
                   "X-Prev-Page": str(page - 1) if page > 1 else "",
                   "Link": ", ".join(f'<{link(n)}>; rel="{rel}"' for rel, n in rels)}
        return Reply(200, chunk, headers)


def _handler(fake: GitLabFake) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def _handle(self) -> None:
            reply = fake.dispatch(self.command, self.path, self.lower_headers(), self.read_body(form=True))
            if isinstance(reply, Broken):
                send_broken(self, reply)
                return
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            head: list[tuple[str, str]] = []
            if "content-type" not in {k.lower() for k in reply.headers}:
                kind = "application/octet-stream" if isinstance(reply.body, bytes) else "application/json"
                head.append(("Content-Type", kind))
            head.append(("Content-Length", str(len(data))))
            self.send_reply(reply.status, [*head, *reply.headers.items()], data)

        do_GET = do_POST = do_PUT = do_DELETE = _handle

    return Handler
