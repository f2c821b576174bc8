"""GitHub: the newest completed workflow run of a branch, for issue 16's pre-existing check (is the
failure of a change also red on the default branch?).

`GET /actions/runs?branch=&status=completed` lists the newest first. Of those, runs a fork's pull
request made from a branch of the same name (`head_repository` is another repository) and
`pull_request*` runs (they test a merge commit, not the branch) are not the branch's. When the
failing run's workflow is known (its id, file or name), that workflow's runs are preferred: a lint
workflow's green run says nothing about the tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci_agent.engine.forge import RunInfo
from ci_agent.platforms.github.forge_calls import GitHubCalls

PER_PAGE = 100  # one page: the newest runs are the ones that matter


def latest_completed_run(api: GitHubCalls, branch: str, workflow: str = "") -> RunInfo | None:
    url = f"{api.repo.url}/actions/runs"
    params = {"branch": branch, "status": "completed", "per_page": str(PER_PAGE),
              "exclude_pull_requests": "true"}
    data = api.call(f"list the completed runs of {branch!r}", "actions: read",
                    lambda: api.get_json(url, params))
    listed = data.get("workflow_runs") if isinstance(data, Mapping) else None
    return newest_run(listed if isinstance(listed, list) else [], branch, workflow)


def newest_run(listed: Sequence[Any], branch: str, workflow: str = "") -> RunInfo | None:
    """The newest of `listed` (run objects as the API gives them) that is `branch`'s own and
    completed, of `workflow` when any of them is. Pure; anything malformed is left out."""
    runs = [r for r in listed if _own_completed(r, branch)]
    same = [r for r in runs if workflow and _of_workflow(r, workflow)]
    candidates = same or runs
    if not candidates:
        return None
    newest = max(candidates, key=lambda r: (_text(r.get("created_at")), int(r["id"])))
    return RunInfo(int(newest["id"]), _text(newest.get("head_sha")), _text(newest.get("conclusion")),
                   _text(newest.get("html_url")))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _own_completed(run: Any, branch: str) -> bool:
    if not isinstance(run, Mapping) or not isinstance(run.get("id"), int) or isinstance(run.get("id"), bool):
        return False
    if run.get("head_branch") != branch or run.get("status", "completed") != "completed":
        return False
    if _text(run.get("event")).startswith("pull_request"):
        return False
    head = _full_name(run.get("head_repository"))
    base = _full_name(run.get("repository"))
    return not (head and base and head.lower() != base.lower())


def _full_name(repository: Any) -> str:
    return _text(repository.get("full_name")) if isinstance(repository, Mapping) else ""


def _of_workflow(run: Mapping[str, Any], workflow: str) -> bool:
    """`workflow` as GitHub lets one name it: the numeric id, the file's path or name, or the
    workflow's display name."""
    path = _text(run.get("path")).split("@", 1)[0]
    workflow_id = run.get("workflow_id")
    return workflow in {str(workflow_id) if isinstance(workflow_id, int) else "", path,
                        path.rsplit("/", 1)[-1], _text(run.get("name"))} - {""}
