"""GitLab: the newest finished pipeline of a branch, for issue 16's pre-existing check (is the
failure of a change also red on the default branch?).

`GET /projects/:id/pipelines?ref=&scope=finished&order_by=id&sort=desc`: `finished` is success,
failed, canceled and skipped. A merge request pipeline's ref is `refs/merge-requests/<iid>/head`,
never the branch, so `ref` keeps them out. Pipelines a branch's own CI makes (a push, a schedule,
the Run pipeline button) are preferred: a pipeline created through the API or a trigger (ci-agent's
own command pipelines among them) may run other jobs than the branch's CI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci_agent.engine.forge import RunInfo
from ci_agent.platforms.gitlab.forge_calls import GitLabCalls

FINISHED = frozenset({"success", "failed", "canceled", "skipped"})
BRANCH_CI_SOURCES = frozenset({"push", "schedule", "web"})
PER_PAGE = 20


def latest_completed_run(api: GitLabCalls, ref: str) -> RunInfo | None:
    pipelines = api.project.pipelines
    listed = api.call(f"list the finished pipelines of {ref!r}", "Reporter",
                      lambda: [p.attributes for p in pipelines.list(
                          ref=ref, scope="finished", order_by="id", sort="desc", per_page=PER_PAGE,
                          get_all=False)])
    return newest_pipeline(listed, ref)


def newest_pipeline(listed: Sequence[Any], ref: str) -> RunInfo | None:
    """The newest finished pipeline of `ref` among `listed` (as the API gives them), one of the
    branch's own CI when there is one. Pure; anything malformed is left out."""
    finished = [p for p in listed if isinstance(p, Mapping) and isinstance(p.get("id"), int)
                and not isinstance(p.get("id"), bool) and p.get("ref") == ref and p.get("status") in FINISHED]
    own = [p for p in finished if p.get("source") in BRANCH_CI_SOURCES]
    candidates = own or finished
    if not candidates:
        return None
    newest = max(candidates, key=lambda p: int(p["id"]))
    return RunInfo(int(newest["id"]), _text(newest.get("sha")), _text(newest.get("status")),
                   _text(newest.get("web_url")))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
