"""The state and route handlers of the GitLab fake (`gitlab_fake.py` holds the server around them).

Shapes follow GitLab REST v4 (docs.gitlab.com/api): merge requests are addressed by `iid`, notes
list newest first unless `sort=asc`, `draft` is derived from the title (`Draft:`, `[Draft]`,
`(Draft)`), labels are sent as a comma-separated string, job `scope[]` filters by status, a
pipeline is created with `POST /projects/:id/pipeline` (singular), a second award of the same
emoji answers 404 "Award Emoji Name has already been taken", a second open MR for a source/target
pair 409 "Another open merge request already exists for this source branch: !1".
"""

from __future__ import annotations

import itertools
import re
import subprocess
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

API = "/api/v4"
_DRAFT = re.compile(r"^\s*(\[draft\]|\(draft\)|draft:)", re.IGNORECASE)
_FUTURE = "2099-01-01T00:00:00.000Z"
_PAST = "2020-01-01T00:00:00.000Z"
_NOW = "2026-01-01T00:00:00.000Z"


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any = None  # JSON-able, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeJob:
    """A job of a pipeline added with `GitLabFake.add_pipeline`. `artifacts` is a zip's bytes;
    `artifacts_expired` keeps the job listing its expiry date but no archive (GitLab erased it).
    `failure_reason` is what GitLab says of a failed job (`script_failure` unless a test says
    `runner_system_failure`, `stuck_or_timeout_failure`, ...); GitLab sends null for the others."""

    name: str
    status: str
    trace: bytes = b""
    artifacts: bytes | None = None
    stage: str = "test"
    allow_failure: bool = False
    artifacts_expired: bool = False
    failure_reason: str = "script_failure"


@dataclass(frozen=True)
class Call:
    """One authenticated request as a route handler sees it."""

    method: str
    path: str
    query: dict[str, str]
    multi: dict[str, list[str]]
    body: Any
    user: dict[str, Any]
    kind: str  # "personal", "project" or "job"


def error(status: int, message: Any) -> Reply:
    return Reply(status, {"message": message})


def forbidden() -> Reply:
    return error(403, "403 Forbidden")


def not_found(what: str = "") -> Reply:
    return error(404, f"404 {what} Not Found" if what else "404 Not found")


def _labels(value: Any) -> list[str]:
    """GitLab takes labels as a comma-separated string or an array."""
    items = value.split(",") if isinstance(value, str) else list(value or [])
    return [str(x).strip() for x in items if str(x).strip()]


# GitLab's pipeline scopes (`GET /projects/:id/pipelines?scope=`); `finished` is the statuses
# HasStatus::COMPLETED_STATUSES names.
_SCOPES = {"running": {"running"}, "pending": {"pending", "created", "preparing", "waiting_for_resource"},
           "finished": {"success", "failed", "canceled", "skipped"}}


def _in_scope(pipeline: dict[str, Any], scope: str) -> bool:
    if scope in _SCOPES:
        return pipeline["status"] in _SCOPES[scope]
    return scope != "tags"  # `branches`: every pipeline of the fake runs on a branch


class FakeRoutes:
    """In-memory GitLab state for one project, and the handlers of its routes."""

    def __init__(self, origin: Path | None) -> None:
        self.origin = origin
        self.project_path = "acme/shop"
        self.project_id = 42
        self.default_branch = "main"
        self.protected_branches: list[str] = ["main"]
        self.users: dict[str, dict[str, Any]] = {}  # username -> {id, username, name, bot, access_level}
        self.tokens: dict[str, tuple[str, str]] = {}  # token -> (username, kind)
        self.pipelines: dict[int, dict[str, Any]] = {}
        self.jobs: dict[int, dict[str, Any]] = {}
        self.traces: dict[int, bytes] = {}
        self.archives: dict[int, bytes] = {}
        self.created_pipelines: list[dict[str, Any]] = []
        self.merge_requests: dict[int, dict[str, Any]] = {}
        self.notes: dict[int, list[dict[str, Any]]] = {}
        self.commit_comments: list[dict[str, Any]] = []  # {"sha", "json"}: GitLab gives them no id
        self.award_emoji: list[tuple[int, int, str, str]] = []  # (iid, note id, name, username)
        self._user_ids = itertools.count(101)
        self._pipeline_ids = itertools.count(1001)
        self._job_ids = itertools.count(5001)
        self._note_ids = itertools.count(9001)
        self._iids = itertools.count(1)

    @property
    def url(self) -> str:
        raise NotImplementedError  # the server knows its port

    @property
    def web_url(self) -> str:
        return f"{self.url}/{self.project_path}"

    # -- shapes ------------------------------------------------------------------------------

    def user_basic(self, username: str) -> dict[str, Any]:
        user = self.users.get(username) or {"id": 1, "username": username, "name": username}
        return {"id": user["id"], "username": username, "name": user["name"], "state": "active",
                "locked": False, "avatar_url": None, "web_url": f"{self.url}/{username}"}

    def job_json(self, job_id: int, pipeline: dict[str, Any], job: FakeJob) -> dict[str, Any]:
        artifacts: list[dict[str, Any]] = [{"file_type": "trace", "size": len(job.trace),
                                            "filename": "job.log", "file_format": None}]
        shape: dict[str, Any] = {
            "id": job_id, "name": job.name, "stage": job.stage, "status": job.status,
            "allow_failure": job.allow_failure, "ref": pipeline["ref"], "tag": False,
            "created_at": _NOW, "started_at": _NOW, "finished_at": _NOW, "duration": 60.0,
            "failure_reason": job.failure_reason if job.status == "failed" else None,
            "web_url": f"{self.web_url}/-/jobs/{job_id}", "user": self.user_basic("maint"),
            "commit": {"id": pipeline["sha"], "short_id": pipeline["sha"][:8]},
            "pipeline": {k: pipeline[k] for k in ("id", "iid", "project_id", "ref", "sha", "status",
                                                  "source", "web_url")},
            "artifacts": artifacts, "artifacts_expire_at": None,
        }
        if job.artifacts is not None or job.artifacts_expired:
            shape["artifacts_expire_at"] = _PAST if job.artifacts_expired else _FUTURE
        if job.artifacts is not None and not job.artifacts_expired:
            artifacts.insert(0, {"file_type": "archive", "size": len(job.artifacts),
                                 "filename": "artifacts.zip", "file_format": "zip"})
            shape["artifacts_file"] = {"filename": "artifacts.zip", "size": len(job.artifacts)}
        return shape

    def pipeline_json(self, pipeline_id: int, ref: str, sha: str, status: str, source: str) -> dict[str, Any]:
        return {"id": pipeline_id, "iid": pipeline_id - 1000, "project_id": self.project_id, "ref": ref,
                "sha": sha, "status": status, "source": source, "created_at": _NOW, "updated_at": _NOW,
                "web_url": f"{self.web_url}/-/pipelines/{pipeline_id}"}

    def note_json(self, iid: int, note_id: int, body: str, username: str, system: bool) -> dict[str, Any]:
        return {"id": note_id, "type": None, "body": body, "author": self.user_basic(username),
                "created_at": _NOW, "updated_at": _NOW, "system": system, "noteable_id": 7000 + iid,
                "noteable_type": "MergeRequest", "noteable_iid": iid, "project_id": self.project_id,
                "resolvable": False, "confidential": False, "internal": False}

    def _set_title(self, mr: dict[str, Any], title: str) -> None:
        mr["title"] = title
        mr["draft"] = mr["work_in_progress"] = bool(_DRAFT.match(title))

    # -- helpers -----------------------------------------------------------------------------

    def branch_sha(self, branch: str) -> str | None:
        """The commit of `branch` in the bare origin, None when it has no such branch."""
        if self.origin is None:
            return None
        done = subprocess.run(["git", "--git-dir", str(self.origin), "rev-parse", "--verify", "--quiet",
                               f"refs/heads/{branch}^{{commit}}"], capture_output=True, text=True,
                              check=False)
        return done.stdout.strip() if done.returncode == 0 else None

    def _branch_exists(self, branch: str) -> bool:
        return self.origin is None or self.branch_sha(branch) is not None

    def _may_write(self, call: Call, level: int) -> Reply | None:
        """403 for a job token (it may only read here) or a member below `level`."""
        if call.kind == "job" or (call.user.get("access_level") or 0) < level:
            return forbidden()
        return None

    def _mr(self, iid: str) -> dict[str, Any] | None:
        return self.merge_requests.get(int(iid))

    def _note(self, iid: str, note: str) -> dict[str, Any] | None:
        return next((n for n in self.notes.get(int(iid), []) if n["id"] == int(note)), None)

    # -- routes: user, project, members ------------------------------------------------------

    def r_user(self, call: Call) -> Reply:
        if call.kind == "job":  # a job token authenticates only the endpoints that accept it
            return error(401, "401 Unauthorized")
        user = call.user
        return Reply(200, {**self.user_basic(user["username"]), "bot": user["bot"],
                           "email": f"{user['username']}@example.com", "is_admin": False})

    def r_users(self, call: Call) -> Reply:
        wanted = call.query.get("username")
        found = [{**self.user_basic(u), "bot": d["bot"]} for u, d in self.users.items()
                 if wanted is None or u.lower() == wanted.lower()]
        return Reply(200, found)

    def r_project(self, call: Call) -> Reply:
        return Reply(200, {"id": self.project_id, "name": self.project_path.rsplit("/", 1)[-1],
                           "path": self.project_path.rsplit("/", 1)[-1],
                           "path_with_namespace": self.project_path, "default_branch": self.default_branch,
                           "web_url": self.web_url, "visibility": "private",
                           "http_url_to_repo": f"{self.web_url}.git"})

    def r_protected_branches(self, call: Call) -> list[dict[str, Any]]:
        return [{"id": i + 1, "name": name, "allow_force_push": False, "code_owner_approval_required": False,
                 "push_access_levels": [{"access_level": 40, "access_level_description": "Maintainers"}],
                 "merge_access_levels": [{"access_level": 40, "access_level_description": "Maintainers"}]}
                for i, name in enumerate(self.protected_branches)]

    def _member_json(self, user: dict[str, Any]) -> dict[str, Any]:
        return {**self.user_basic(user["username"]), "access_level": user["access_level"],
                "expires_at": None, "membership_state": "active"}

    def r_members_all(self, call: Call) -> list[dict[str, Any]]:
        query = (call.query.get("query") or "").lower()
        return [self._member_json(u) for u in self.users.values() if u["access_level"]
                and (query in u["username"].lower() or query in u["name"].lower())]

    def r_member(self, call: Call, user_id: str) -> Reply:
        found = next((u for u in self.users.values() if u["id"] == int(user_id) and u["access_level"]), None)
        return Reply(200, self._member_json(found)) if found else not_found()

    # -- routes: pipelines and jobs ----------------------------------------------------------

    def r_pipelines(self, call: Call) -> list[dict[str, Any]]:
        keys = ("ref", "sha", "status", "source")
        found = [p for p in self.pipelines.values() if all(call.query.get(k) in (None, p[k]) for k in keys)]
        scope = call.query.get("scope")
        if scope is not None:  # GitLab's scopes (issue 16 asks for `finished`)
            found = [p for p in found if _in_scope(p, scope)]
        return sorted(found, key=lambda p: p["id"], reverse=call.query.get("sort", "desc") == "desc")

    def r_pipeline(self, call: Call, pipeline: str) -> Reply:
        found = self.pipelines.get(int(pipeline))
        return Reply(200, found) if found else not_found()

    def r_create_pipeline(self, call: Call) -> Reply:
        denied = self._may_write(call, 30)
        if denied:
            return denied
        body = call.body if isinstance(call.body, dict) else {}
        ref = body.get("ref") or call.query.get("ref")
        if not ref:
            return Reply(400, {"error": "ref is missing"})
        sha = self.branch_sha(ref) if self.origin is not None else "0" * 40
        if sha is None:
            return error(400, {"base": ["Reference not found"]})
        variables = body.get("variables") or []
        self.created_pipelines.append({"ref": ref, "variables": variables})
        pipeline_id = next(self._pipeline_ids)
        self.pipelines[pipeline_id] = self.pipeline_json(pipeline_id, ref, sha, "created", "api")
        return Reply(201, self.pipelines[pipeline_id])

    def r_pipeline_jobs(self, call: Call, pipeline: str) -> Reply | list[dict[str, Any]]:
        if int(pipeline) not in self.pipelines:
            return not_found()
        scopes = call.multi.get("scope[]") or call.multi.get("scope") or []
        return [j for j in self.jobs.values() if j["pipeline"]["id"] == int(pipeline)
                and (not scopes or j["status"] in scopes)]

    def r_job(self, call: Call, job: str) -> Reply:
        found = self.jobs.get(int(job))
        return Reply(200, found) if found else not_found()

    def r_trace(self, call: Call, job: str) -> Reply:
        if int(job) not in self.jobs:
            return not_found()
        return Reply(200, self.traces.get(int(job), b""), {"content-type": "text/plain; charset=utf-8"})

    def r_artifacts(self, call: Call, job: str) -> Reply:
        data = self.archives.get(int(job))
        if data is None:
            return not_found()
        return Reply(200, data, {"content-type": "application/zip",
                                 "content-disposition": 'attachment; filename="artifacts.zip"'})

    # -- routes: merge requests, notes, award emoji ------------------------------------------

    def r_merge_requests(self, call: Call) -> list[dict[str, Any]]:
        state = call.query.get("state", "all")
        keys = ("source_branch", "target_branch")
        found = [m for m in self.merge_requests.values() if state in ("all", m["state"])
                 and all(call.query.get(k) in (None, m[k]) for k in keys)]
        return sorted(found, key=lambda m: m["iid"], reverse=call.query.get("sort", "desc") == "desc")

    def r_create_mr(self, call: Call) -> Reply:
        denied = self._may_write(call, 30)
        if denied:
            return denied
        body = call.body if isinstance(call.body, dict) else {}
        for key in ("source_branch", "target_branch", "title"):
            if not body.get(key):
                return Reply(400, {"error": f"{key} is missing"})
        source, target = body["source_branch"], body["target_branch"]
        if source == target:
            return error(409, ["You can't use same project/branch for source and target"])
        for which, branch in (("Source", source), ("Target", target)):
            if not self._branch_exists(branch):
                return error(400, [f'{which} branch "{branch}" does not exist'])
        other = next((m for m in self.merge_requests.values() if m["state"] == "opened"
                      and m["source_branch"] == source and m["target_branch"] == target), None)
        if other is not None:
            return error(409, ["Another open merge request already exists for this source branch: "
                               f"!{other['iid']}"])
        iid = next(self._iids)
        mr: dict[str, Any] = {
            "id": 7000 + iid, "iid": iid, "project_id": self.project_id,
            "description": body.get("description"),
            "state": "opened", "source_branch": source, "target_branch": target,
            "source_project_id": self.project_id, "target_project_id": self.project_id,
            "labels": _labels(body.get("labels")), "author": self.user_basic(call.user["username"]),
            "web_url": f"{self.web_url}/-/merge_requests/{iid}", "sha": self.branch_sha(source),
            "created_at": _NOW, "updated_at": _NOW}
        self._set_title(mr, body["title"])
        self.merge_requests[iid] = mr
        self.notes.setdefault(iid, [])
        return Reply(201, mr)

    def r_mr(self, call: Call, iid: str) -> Reply:
        mr = self._mr(iid)
        return Reply(200, mr) if mr else not_found()

    def r_update_mr(self, call: Call, iid: str) -> Reply:
        denied = self._may_write(call, 30)
        mr = self._mr(iid)
        if denied or mr is None:
            return denied or not_found()
        body = call.body if isinstance(call.body, dict) else {}
        if "title" in body:
            self._set_title(mr, str(body["title"]))
        if "description" in body:
            mr["description"] = body["description"]
        if "labels" in body:
            mr["labels"] = _labels(body["labels"])
        mr["labels"] += [x for x in _labels(body.get("add_labels")) if x not in mr["labels"]]
        removed = _labels(body.get("remove_labels"))
        mr["labels"] = [x for x in mr["labels"] if x not in removed]
        state_event = body.get("state_event")
        if state_event in ("close", "reopen"):
            mr["state"] = "closed" if state_event == "close" else "opened"
        return Reply(200, mr)

    def r_notes(self, call: Call, iid: str) -> Reply | list[dict[str, Any]]:
        if self._mr(iid) is None:
            return not_found()
        return sorted(self.notes.get(int(iid), []), key=lambda n: n["id"],
                      reverse=call.query.get("sort", "desc") == "desc")

    def r_create_note(self, call: Call, iid: str) -> Reply:
        denied = self._may_write(call, 10)
        if denied or self._mr(iid) is None:
            return denied or not_found()
        body = call.body if isinstance(call.body, dict) else {}
        if not body.get("body"):
            return Reply(400, {"error": "body is missing"})
        note = self.note_json(int(iid), next(self._note_ids), body["body"], call.user["username"], False)
        self.notes[int(iid)].append(note)
        return Reply(201, note)

    def r_commit_comments(self, call: Call, sha: str) -> Reply:
        if self.origin is not None and not self._commit_exists(sha):
            return not_found("Commit")
        return Reply(200, [c["json"] for c in self.commit_comments if c["sha"] == sha])

    def r_create_commit_comment(self, call: Call, sha: str) -> Reply:
        denied = self._may_write(call, 10)
        if denied or (self.origin is not None and not self._commit_exists(sha)):
            return denied or not_found("Commit")
        body = call.body if isinstance(call.body, dict) else {}
        if not body.get("note"):
            return Reply(400, {"error": "note is missing"})
        comment = {"note": body["note"], "path": None, "line": None, "line_type": None,
                   "author": self.user_basic(call.user["username"]), "created_at": _NOW}
        self.commit_comments.append({"sha": sha, "json": comment})
        return Reply(201, comment)

    def _commit_exists(self, sha: str) -> bool:
        done = subprocess.run(["git", "--git-dir", str(self.origin), "cat-file", "-e", f"{sha}^{{commit}}"],
                              capture_output=True, check=False)
        return done.returncode == 0

    def r_note(self, call: Call, iid: str, note: str) -> Reply:
        found = self._note(iid, note)
        return Reply(200, found) if found else not_found("Note")

    def r_update_note(self, call: Call, iid: str, note: str) -> Reply:
        found = self._note(iid, note)
        if found is None:
            return not_found("Note")
        if call.kind == "job" or found["author"]["username"] != call.user["username"]:
            return forbidden()  # only its author may edit a note
        body = call.body if isinstance(call.body, dict) else {}
        found["body"] = body.get("body", found["body"])
        return Reply(200, found)

    def r_delete_note(self, call: Call, iid: str, note: str) -> Reply:
        found = self._note(iid, note)
        if found is None:
            return not_found("Note")
        if call.kind == "job" or found["author"]["username"] != call.user["username"]:
            return forbidden()
        self.notes[int(iid)].remove(found)
        return Reply(204, b"")

    def r_note_awards(self, call: Call, iid: str, note: str) -> Reply | list[dict[str, Any]]:
        if self._note(iid, note) is None:
            return not_found("Note")
        return [self._award_json(i, n, name, who) for i, n, name, who in self.award_emoji
                if (i, n) == (int(iid), int(note))]

    def r_award_note(self, call: Call, iid: str, note: str) -> Reply:
        denied = self._may_write(call, 10)
        if denied or self._note(iid, note) is None:
            return denied or not_found("Note")
        name = (call.body or {}).get("name") if isinstance(call.body, dict) else None
        if not name:
            return Reply(400, {"error": "name is missing"})
        award = (int(iid), int(note), str(name), call.user["username"])
        if award in self.award_emoji:
            return not_found("Award Emoji Name has already been taken")  # AwardEmojis::AddService
        self.award_emoji.append(award)
        return Reply(201, self._award_json(*award))

    def _award_json(self, iid: int, note: int, name: str, username: str) -> dict[str, Any]:
        return {"id": 300 + len(self.award_emoji), "name": name, "user": self.user_basic(username),
                "created_at": _NOW, "updated_at": _NOW, "awardable_id": note, "awardable_type": "Note"}


def project_route(rest: str) -> str:
    """A route under one project, addressed by id or URL-encoded path."""
    return rf"{API}/projects/(?P<project>[^/]+){rest}"


def quoted(value: str) -> str:
    return urllib.parse.quote(value, safe="")
