"""The GitHub side of a scenario: the loopback GitHub fake wired to a real bare `origin`, and the
event payloads GitHub writes to `GITHUB_EVENT_PATH`.

`SiteFake` extends `tests/fakes/github_fake.GitHubFake` (not edited: it belongs to the forge
tests) with what a multi-run scenario needs:
- branches are read live from the bare origin, so a pull request can be opened for a branch that
  `git push` just created (GitHub validates `head`/`base` the same way: 422 when missing);
- each workflow run has its own `head_branch`, `head_sha`, `conclusion`, `event`, `run_attempt`
  and `pull_requests` (the base fake answers one fixed run), and `GET /actions/runs` lists them
  with the documented filters (`branch`, `status`, `event`, `head_sha`), newest first.

Payload shapes follow GitHub's webhook docs and octokit/webhooks' recorded examples
(`payload-examples/api.github.com/workflow_run/completed.with-pull-requests.payload.json`):
only the keys a consumer reads are kept, with their real names and nesting.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from tests.fakes.github_fake import GitHubFake, Reply, error

SERVER_URL = "https://github.com"
API = "https://api.github.com"


class LiveBranches(dict[str, bool]):
    """`name -> protected`, where the names are the bare origin's branches at the time of asking."""

    def __init__(self, origin: Path, protected: set[str]) -> None:
        super().__init__()
        self.origin = origin
        self.protected_names = set(protected)

    def _names(self) -> list[str]:
        out = subprocess.run(["git", "for-each-ref", "--format=%(refname:short)", "refs/heads/"],
                             cwd=self.origin, text=True, capture_output=True, check=True).stdout
        return out.split()

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __getitem__(self, name: str) -> bool:
        if name not in self:
            raise KeyError(name)
        return name in self.protected_names

    def __setitem__(self, name: str, protected: bool) -> None:
        if protected:
            self.protected_names.add(name)
        else:
            self.protected_names.discard(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __iter__(self) -> Any:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


class SiteFake(GitHubFake):
    def __init__(self, origin: Path, owner: str = "octo", repo: str = "app") -> None:
        super().__init__(owner, repo)
        self.branches = LiveBranches(origin, {"main"})
        self.run_meta: dict[int, dict[str, Any]] = {}
        r = rf"/repos/{re.escape(owner)}/{re.escape(repo)}"
        self._routes.append(("GET", re.compile(rf"{r}/actions/runs\Z"), self._list_runs))

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    def add_ci_run(self, run_id: int, *, head_branch: str, head_sha: str, conclusion: str,
                   log: bytes, artifacts: list[tuple[str, bytes]] | None = None, event: str = "push",
                   pull_requests: list[dict[str, Any]] | None = None, run_attempt: int = 1,
                   job_name: str = "test") -> int:
        """A completed CI run with one job whose log is `log`; returns the job id."""
        self.run_meta[run_id] = {"head_branch": head_branch, "head_sha": head_sha,
                                 "conclusion": conclusion, "event": event, "run_attempt": run_attempt,
                                 "pull_requests": pull_requests or []}
        (job_id,) = self.add_run(run_id, [(job_name, conclusion)], artifacts or [])
        self.logs[job_id] = log
        return job_id

    def run_json(self, run_id: int) -> dict[str, Any]:
        meta = self.run_meta[run_id]
        # once ci-agent asked GitHub to re-run the failed jobs (issue 16), the run is what that
        # attempt made it: its attempt number, status and conclusion (the base fake settles them)
        rerun = self.runs.get(run_id)
        rerun = rerun if rerun is not None and rerun.attempt > 1 else None
        url = f"{self._repo_url}/actions/runs/{run_id}"
        repo = {"id": 42, "name": self.repo, "full_name": self.full_name,
                "url": self._repo_url, "html_url": f"{SERVER_URL}/{self.full_name}"}
        return {"id": run_id, "name": "ci", "node_id": f"WFR_{run_id}",
                "status": rerun.status if rerun else "completed",
                "conclusion": (rerun.conclusion or None) if rerun else meta["conclusion"],
                "head_branch": meta["head_branch"], "head_sha": meta["head_sha"], "event": meta["event"],
                "run_attempt": max(meta["run_attempt"], rerun.attempt if rerun else 1),
                "run_number": run_id, "workflow_id": 7, "path": ".github/workflows/ci.yml",
                "display_title": "ci", "url": url,
                "html_url": f"{SERVER_URL}/{self.full_name}/actions/runs/{run_id}",
                "jobs_url": f"{url}/jobs", "artifacts_url": f"{url}/artifacts", "logs_url": f"{url}/logs",
                "pull_requests": meta["pull_requests"], "repository": repo, "head_repository": repo,
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:05:00Z"}

    # -- routes --------------------------------------------------------------------------------

    def _run(self, run: str, **_: Any) -> Reply:
        if int(run) not in self.run_meta:
            return error(404, "Not Found")
        return Reply(200, self.run_json(int(run)))

    def _job_json(self, job_id: int, run_id: int, name: str, conclusion: str) -> dict[str, Any]:
        shape = super()._job_json(job_id, run_id, name, conclusion)
        meta = self.run_meta.get(run_id)
        if meta is not None:
            shape.update(head_branch=meta["head_branch"], head_sha=meta["head_sha"],
                         run_attempt=meta["run_attempt"])
        return shape

    def _list_runs(self, query: dict[str, str], **_: Any) -> Reply:
        runs = [self.run_json(i) for i in sorted(self.run_meta, reverse=True)]
        for key in ("branch", "event", "head_sha"):
            if key in query:
                field = "head_branch" if key == "branch" else key
                runs = [r for r in runs if r[field] == query[key]]
        if query.get("status") in {"success", "failure", "cancelled", "skipped", "timed_out"}:
            runs = [r for r in runs if r["conclusion"] == query["status"]]
        elif query.get("status") == "completed":
            runs = [r for r in runs if r["status"] == "completed"]
        return self._page(f"/repos/{self.full_name}/actions/runs", query, runs, "workflow_runs")


# -- event payloads ------------------------------------------------------------------------------

def repository_json(full_name: str, default_branch: str = "main") -> dict[str, Any]:
    owner, name = full_name.split("/", 1)
    return {"id": abs(hash(full_name)) % 10**8, "node_id": f"R_{name}", "name": name,
            "full_name": full_name, "private": False, "fork": full_name != "octo/app",
            "owner": {"login": owner, "type": "Organization"}, "default_branch": default_branch,
            "html_url": f"{SERVER_URL}/{full_name}", "url": f"https://api.github.com/repos/{full_name}",
            "clone_url": f"{SERVER_URL}/{full_name}.git"}


def user_json(login: str) -> dict[str, Any]:
    return {"login": login, "id": abs(hash(login)) % 10**8,
            "type": "Bot" if login.endswith("[bot]") else "User"}


def push_event(repository: str, branch: str, before: str, after: str, pusher: str) -> dict[str, Any]:
    return {"ref": f"refs/heads/{branch}", "before": before, "after": after, "created": False,
            "deleted": False, "forced": False, "base_ref": None,
            "compare": f"{SERVER_URL}/{repository}/compare/{before[:12]}...{after[:12]}",
            "head_commit": {"id": after, "tree_id": "0" * 40, "message": "a commit",
                            "timestamp": "2026-01-01T00:00:00Z"},
            "repository": repository_json(repository), "pusher": {"name": pusher},
            "sender": user_json(pusher)}


def pull_request_event(repository: str, number: int, head_repo: str, head_ref: str, head_sha: str,
                       base_ref: str, base_sha: str, author: str, action: str = "synchronize"
                       ) -> dict[str, Any]:
    def side(full_name: str, ref: str, sha: str) -> dict[str, Any]:
        return {"label": f"{full_name.split('/')[0]}:{ref}", "ref": ref, "sha": sha,
                "repo": repository_json(full_name), "user": user_json(full_name.split("/")[0])}
    return {"action": action, "number": number,
            "pull_request": {"number": number, "state": "open", "draft": False, "title": "A change",
                             "user": user_json(author), "head": side(head_repo, head_ref, head_sha),
                             "base": side(repository, base_ref, base_sha),
                             "html_url": f"{SERVER_URL}/{repository}/pull/{number}",
                             "url": f"https://api.github.com/repos/{repository}/pulls/{number}"},
            "repository": repository_json(repository), "sender": user_json(author)}


def run_pull_request(repository: str, number: int, head_ref: str, head_sha: str, base_ref: str,
                     base_sha: str) -> dict[str, Any]:
    """An entry of `workflow_run.pull_requests` (same-repository pull requests only)."""
    repo = {"id": 42, "url": f"https://api.github.com/repos/{repository}", "name": repository.split("/")[1]}
    return {"url": f"https://api.github.com/repos/{repository}/pulls/{number}", "id": 500 + number,
            "number": number, "head": {"ref": head_ref, "sha": head_sha, "repo": repo},
            "base": {"ref": base_ref, "sha": base_sha, "repo": repo}}


def workflow_run_event(repository: str, run: dict[str, Any], *, head_repository: str | None = None,
                       actor: str = "octocat", triggering_actor: str | None = None,
                       workflow_name: str = "ci") -> dict[str, Any]:
    """`workflow_run` `completed`: `run` is the API shape of the run (`SiteFake.run_json`); the
    payload's `workflow_run` carries the same fields plus the two repositories and the actors."""
    head_full = head_repository or repository
    workflow_run = {**run, "name": workflow_name, "repository": repository_json(repository),
                    "head_repository": repository_json(head_full), "actor": user_json(actor),
                    "triggering_actor": user_json(triggering_actor or actor),
                    "head_commit": {"id": run["head_sha"], "tree_id": "0" * 40, "message": "a commit",
                                    "timestamp": "2026-01-01T00:00:00Z",
                                    "author": {"name": actor, "email": f"{actor}@example.com"}},
                    "check_suite_id": 9000 + run["id"], "check_suite_node_id": f"CS_{run['id']}",
                    "check_suite_url": f"{API}/repos/{repository}/check-suites/{9000 + run['id']}",
                    "previous_attempt_url": None,
                    "rerun_url": f"{run['url']}/rerun", "cancel_url": f"{run['url']}/cancel",
                    "workflow_url": f"https://api.github.com/repos/{repository}/actions/workflows/7"}
    return {"action": "completed", "workflow_run": workflow_run,
            "workflow": {"id": 7, "name": workflow_name, "path": ".github/workflows/ci.yml",
                         "state": "active"},
            "repository": repository_json(repository), "sender": user_json(actor)}


def workflow_dispatch_event(repository: str, branch: str, actor: str,
                            inputs: dict[str, str] | None = None) -> dict[str, Any]:
    return {"ref": f"refs/heads/{branch}", "inputs": inputs or {}, "workflow": ".github/workflows/ci.yml",
            "repository": repository_json(repository), "sender": user_json(actor)}
