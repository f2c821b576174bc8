"""What the GitLab fake serves for slash commands and the poller (issue 7), on top of `FakeRoutes`.

GitLab behaviour reproduced (docs.gitlab.com/api and gitlab-org/gitlab sources):
- Notes carry their creation time; a new note touches its merge request's `updated_at`
  (`Note#touch_noteable`), and `updated_after` filters the merge request list on it.
- `GET /pipelines` filters by `status` (already in `r_pipelines`).
- Pipeline variables on `POST /pipeline` are refused below the project's minimum role
  (`ci_pipeline_variables_minimum_override_role`; `no_one_allowed` is the default of new
  GitLab.com projects since 17.7): 400 `{"message": {"base": ["Insufficient permissions to set
  pipeline variables"]}}`.
- Project CI/CD variables `/projects/:id/variables[/:key]` need the Maintainer role (403 below it
  and for a job token); an unknown key answers 404 "Variable Not Found"; creating a key that
  exists answers 400 `{"message": {"key": ["(KEY) has already been taken"]}}`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.fakes.gitlab_fake_routes import Call, FakeRoutes, Reply, error, not_found, project_route

START = datetime(2026, 1, 1, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _parsed(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


class CommandRoutes(FakeRoutes):
    def __init__(self, origin: Path | None) -> None:
        super().__init__(origin)
        self.variables: dict[str, dict[str, Any]] = {}
        # Minimum access level allowed to pass pipeline variables; None is `no_one_allowed`.
        self.pipeline_variables_level: int | None = 30
        self.now = START  # the fake's clock: every note created advances it by one second

    def command_routes(self) -> list[tuple[str, str, Callable[..., Any]]]:
        P = project_route
        return [
            ("GET", P(r"/variables/(?P<key>[^/]+)"), self.r_variable),
            ("POST", P("/variables"), self.r_create_variable),
            ("PUT", P(r"/variables/(?P<key>[^/]+)"), self.r_update_variable),
        ]

    def tick(self) -> str:
        self.now += timedelta(seconds=1)
        return stamp(self.now)

    # -- shapes and state changes ------------------------------------------------------------

    def note_json(self, iid: int, note_id: int, body: str, username: str, system: bool) -> dict[str, Any]:
        note = super().note_json(iid, note_id, body, username, system)
        note["created_at"] = note["updated_at"] = self.tick()
        mr = self.merge_requests.get(iid)
        if mr is not None:
            mr["updated_at"] = note["created_at"]
        return note

    def new_merge_request(self, source: str, target: str, title: str, *, author: str = "maint",
                          source_project_id: int | None = None, state: str = "opened",
                          sha: str = "a" * 40) -> int:
        """A merge request as another user (or a fork, `source_project_id`) would have opened it."""
        iid = next(self._iids)
        when = self.tick()
        mr: dict[str, Any] = {
            "id": 7000 + iid, "iid": iid, "project_id": self.project_id, "description": "",
            "state": state, "source_branch": source, "target_branch": target,
            "source_project_id": source_project_id or self.project_id, "target_project_id": self.project_id,
            "labels": [], "author": self.user_basic(author),
            "web_url": f"{self.web_url}/-/merge_requests/{iid}",
            "sha": sha, "created_at": when, "updated_at": when}
        self._set_title(mr, title)
        self.merge_requests[iid] = mr
        self.notes.setdefault(iid, [])
        return iid

    # -- overridden routes -------------------------------------------------------------------

    def r_merge_requests(self, call: Call) -> list[dict[str, Any]]:
        found = super().r_merge_requests(call)
        after = call.query.get("updated_after")
        if after:
            found = [m for m in found if _parsed(m["updated_at"]) > _parsed(after)]
        if call.query.get("order_by") == "updated_at":
            found.sort(key=lambda m: m["updated_at"], reverse=call.query.get("sort", "desc") == "desc")
        return found

    def r_notes(self, call: Call, iid: str) -> Reply | list[dict[str, Any]]:
        found = super().r_notes(call, iid)
        if isinstance(found, list) and call.query.get("order_by") == "created_at":
            newest_first = call.query.get("sort", "desc") == "desc"
            found.sort(key=lambda n: (n["created_at"], n["id"]), reverse=newest_first)
        return found

    def r_create_pipeline(self, call: Call) -> Reply:
        body = call.body if isinstance(call.body, dict) else {}
        level = self.pipeline_variables_level
        if body.get("variables") and call.kind != "job" and (
                level is None or (call.user.get("access_level") or 0) < level):
            return error(400, {"base": ["Insufficient permissions to set pipeline variables"]})
        return super().r_create_pipeline(call)

    # -- project CI/CD variables -------------------------------------------------------------

    def _variable_json(self, key: str, value: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"key": key, "value": value, "variable_type": body.get("variable_type", "env_var"),
                "protected": bool(body.get("protected", False)), "masked": bool(body.get("masked", False)),
                "hidden": False, "raw": bool(body.get("raw", False)), "environment_scope": "*",
                "description": None}

    def r_variable(self, call: Call, key: str) -> Reply:
        denied = self._may_write(call, 40)
        if denied:
            return denied
        found = self.variables.get(key)
        return Reply(200, found) if found else not_found("Variable")

    def r_create_variable(self, call: Call) -> Reply:
        denied = self._may_write(call, 40)
        if denied:
            return denied
        body = call.body if isinstance(call.body, dict) else {}
        key, value = body.get("key"), body.get("value")
        if not key or value is None:
            return Reply(400, {"error": "key is missing" if not key else "value is missing"})
        if key in self.variables:
            return error(400, {"key": [f"({key}) has already been taken"]})
        self.variables[key] = self._variable_json(str(key), str(value), body)
        return Reply(201, self.variables[key])

    def r_update_variable(self, call: Call, key: str) -> Reply:
        denied = self._may_write(call, 40)
        if denied:
            return denied
        found = self.variables.get(key)
        if found is None:
            return not_found("Variable")
        body = call.body if isinstance(call.body, dict) else {}
        if "value" in body:
            found["value"] = str(body["value"])
        return Reply(200, found)
