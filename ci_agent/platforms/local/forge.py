"""The `local` forge: change requests, comments and labels kept in a JSON file under a directory.

It is the dry run (`ci-agent fix` without a forge: what would have been opened and said is
written down instead of sent) and the test double for code above the `Forge` protocol. It
behaves like a forge where that matters to callers: numbers are allocated once, finding is by
source branch, the status comment is picked by author and marker exactly as on GitHub.

CI runs, for the workflow_run-like path, are read from `<dir>/runs/<run_id>/`: every
`jobs/<id>-<name>.log` is a failed job, every `artifacts/*.zip` an artifact (extracted with the
same checks as downloaded ones). Nothing runs jobs here, so a re-run of the failed jobs ends the
way `runs/<run_id>/attempts/<n>/` says (attempt n's failed jobs under `jobs/`, none: it passed);
without that folder the local forge refuses the re-run. Writes are atomic (temp file + rename)
under an exclusive lock, so two processes sharing a directory neither lose nor mix updates.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ci_agent.engine.forge import (
    Artifact,
    ChangeRequest,
    CiStart,
    Comment,
    Job,
    JobLog,
    Limits,
    Permission,
    Rerun,
    RunInfo,
    RunState,
    pick_status_comment,
    status_body,
    status_state,
)
from ci_agent.errors import ForgeError
from ci_agent.platforms.download import safe_name, stream_to_file, too_big, unpack
from ci_agent.platforms.local import forge_latest

STATE_FILE = "forge.json"
LOCAL_BOT = "ci-agent[bot]"
_JOB_LOG = re.compile(r"\A(\d+)-(.+)\.log\Z")
_REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})


def _empty_state() -> dict[str, Any]:
    return {"version": 1, "next_id": 1, "default_branch": "main", "protected": [],
            "permissions": {}, "workflows": {}, "change_requests": {}, "comments": [],
            "reactions": [], "dispatches": [], "commit_comments": [], "reruns": []}


class LocalForge:
    def __init__(self, directory: Path, *, own_login: str = LOCAL_BOT, limits: Limits | None = None,
                 repo_url: str = "local") -> None:
        self._dir = directory
        self._own_login = own_login
        self._limits = limits or Limits()
        self._repo_url = repo_url.rstrip("/")
        directory.mkdir(parents=True, exist_ok=True)

    # -- the JSON file -----------------------------------------------------------------------

    @property
    def state_path(self) -> Path:
        return self._dir / STATE_FILE

    def read(self) -> dict[str, Any]:
        try:
            text = self.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _empty_state()
        try:
            state = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise ForgeError(f"The local forge file {self.state_path} is not valid JSON "
                             f"({error}).") from error
        if not isinstance(state, dict) or state.get("version") != 1:
            raise ForgeError(f"The local forge file {self.state_path} is not a version 1 state file.")
        return {**_empty_state(), **state}

    @contextlib.contextmanager
    def _writing(self) -> Iterator[dict[str, Any]]:
        with (self._dir / (STATE_FILE + ".lock")).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self.read()
            yield state
            fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=".forge-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(state, out, indent=2, sort_keys=True)
            os.replace(tmp, self.state_path)

    @staticmethod
    def _new_id(state: dict[str, Any]) -> int:
        value = int(state["next_id"])
        state["next_id"] = value + 1
        return value

    # -- setup for tests and dry runs --------------------------------------------------------

    def configure(self, *, default_branch: str | None = None, protected: Sequence[str] = (),
                  permissions: Mapping[str, str] | None = None,
                  workflows: Mapping[str, bool] | None = None) -> None:
        """Facts a real forge would know: default branch, protected branches, people's roles,
        workflow files and whether they can be started (`workflow_dispatch`)."""
        with self._writing() as state:
            if default_branch is not None:
                state["default_branch"] = default_branch
            state["protected"] = sorted(set(state["protected"]) | set(protected))
            state["permissions"].update(permissions or {})
            state["workflows"].update(workflows or {})

    def add_comment(self, number: int, body: str, author: str, bot: bool = False) -> int:
        """A comment by someone else (a person's slash command, another bot)."""
        with self._writing() as state:
            comment_id = self._new_id(state)
            state["comments"].append({"id": comment_id, "number": number, "body": body,
                                      "author": author, "bot": bot})
            return comment_id

    # -- runs --------------------------------------------------------------------------------

    def _run_dir(self, run_id: int) -> Path:
        return self._dir / "runs" / str(run_id)

    def failed_jobs(self, run_id: int) -> list[Job]:
        return self._failed_jobs(run_id, self._attempt(run_id))

    def _failed_jobs(self, run_id: int, attempt: int) -> list[Job]:
        """The failed jobs of `attempt` of the run: the first one's in `jobs/`, a re-run's in
        `attempts/<n>/jobs/` (no such folder: none failed)."""
        first = self._run_dir(run_id) / "jobs"
        if not first.is_dir():
            raise ForgeError(f"The local forge has no run {run_id} (no {first}).")
        jobs_dir = first if attempt == 1 else self._run_dir(run_id) / "attempts" / str(attempt) / "jobs"
        logs = sorted(jobs_dir.iterdir()) if jobs_dir.is_dir() else []
        found = [_JOB_LOG.match(p.name) for p in logs]
        return [Job(int(m.group(1)), m.group(2), "failure") for m in found if m]

    def _attempt(self, run_id: int) -> int:
        return 1 + sum(1 for r in self.read()["reruns"] if r.get("run") == run_id)

    def rerun_failed_jobs(self, run_id: int) -> Rerun:
        """Recorded under `reruns` (what a dry run shows), when `attempts/<n>/` says how it ends."""
        self._failed_jobs(run_id, 1)  # the run exists
        with self._writing() as state:
            attempt = 2 + sum(1 for r in state["reruns"] if r.get("run") == run_id)
            outcome = self._run_dir(run_id) / "attempts" / str(attempt)
            if not outcome.is_dir():
                raise ForgeError(f"The local forge cannot re-run the failed jobs of run {run_id}: "
                                 f"nothing runs jobs here; write {outcome} (its failed jobs' logs "
                                 "under jobs/) to say how the re-run ends.")
            state["reruns"].append({"run": run_id, "attempt": attempt})
        return Rerun(run_id, attempt)

    def run_state(self, run_id: int) -> RunState:
        """Every local run is finished: its newest attempt failed when it has failed jobs."""
        attempt = self._attempt(run_id)
        failed = tuple(job.id for job in self._failed_jobs(run_id, attempt))
        return RunState("completed", "failure" if failed else "success", attempt, failed)

    def download_job_log(self, job_id: int, dest: Path) -> JobLog:
        logs = [*self._dir.glob(f"runs/*/jobs/{job_id}-*.log"),
                *self._dir.glob(f"runs/*/attempts/*/jobs/{job_id}-*.log")]
        for log in sorted(logs):
            match = _JOB_LOG.match(log.name)
            if match is None or log.is_symlink():
                continue
            dest.mkdir(parents=True, exist_ok=True)
            target = dest / f"{job_id}-{safe_name(match.group(2), 'job')}.log"
            with log.open("rb") as src:
                truncated = stream_to_file(iter(lambda: src.read(1024 * 1024), b""), target,
                                           self._limits.max_log_bytes)
            return JobLog(job_id, match.group(2), target, truncated)
        raise ForgeError(f"The local forge has no log for job {job_id}.")

    def download_artifacts(self, run_id: int, dest: Path, jobs: Sequence[int] | None = None
                           ) -> list[Artifact]:
        # The local forge keeps artifacts per run, as GitHub does: `jobs` cannot narrow them.
        return [self._artifact(archive, dest)
                for archive in sorted((self._run_dir(run_id) / "artifacts").glob("*.zip"))]

    def _artifact(self, archive: Path, dest: Path) -> Artifact:
        if archive.stat().st_size > self._limits.max_archive_bytes:
            return Artifact(archive.stem, None, too_big(self._limits, "zip"))
        return unpack(archive.stem, archive, dest / safe_name(archive.stem, "artifact"), self._limits)

    def latest_completed_run(self, branch: str, workflow: str = "") -> RunInfo | None:
        """From the runs' `run.json` (`forge_latest.record_run`), issue 16."""
        return forge_latest.latest_completed_run(self._dir / "runs", branch, workflow)

    # -- change requests ---------------------------------------------------------------------

    def _change_request(self, entry: Mapping[str, Any]) -> ChangeRequest:
        number = entry["number"]
        return ChangeRequest(number=number, url=f"{self._repo_url}/change_requests/{number}",
                             source_branch=entry["source"], target_branch=entry["target"],
                             draft=entry["draft"], labels=tuple(entry["labels"]),
                             state=str(entry.get("state") or "open"))

    def find_change_request(self, source_branch: str, include_closed: bool = False) -> ChangeRequest | None:
        entries = [e for e in self.read()["change_requests"].values() if e["source"] == source_branch]
        for entry in entries:
            if entry["state"] == "open":
                return self._change_request(entry)
        return self._change_request(entries[-1]) if entries and include_closed else None

    def open_change_request(self, source: str, target: str, title: str, body: str,
                            draft: bool = True) -> ChangeRequest:
        with self._writing() as state:
            for entry in state["change_requests"].values():
                if entry["source"] == source and entry["state"] == "open":
                    return self._change_request(entry)
            if source == target:
                raise ForgeError(f"Cannot open a change request from {source!r} into itself.")
            number = self._new_id(state)
            entry = {"number": number, "source": source, "target": target, "title": title,
                     "body": body, "draft": draft, "labels": [], "state": "open"}
            state["change_requests"][str(number)] = entry
            return self._change_request(entry)

    def _entry(self, state: dict[str, Any], number: int) -> dict[str, Any]:
        entry = state["change_requests"].get(str(number))
        if entry is None:
            raise ForgeError(f"The local forge has no change request #{number}.")
        return entry  # type: ignore[no-any-return]

    def update_change_request(self, number: int, title: str | None = None, body: str | None = None,
                              draft: bool | None = None) -> ChangeRequest:
        with self._writing() as state:
            entry = self._entry(state, number)
            for key, value in (("title", title), ("body", body), ("draft", draft)):
                if value is not None:
                    entry[key] = value
            return self._change_request(entry)

    def change_request_text(self, number: int) -> tuple[str, str]:
        """Title and body as written (for dry-run output and tests)."""
        entry = self._entry(self.read(), number)
        return entry["title"], entry["body"]

    # -- comments, labels, reactions ---------------------------------------------------------

    def list_comments(self, number: int) -> list[Comment]:
        return [Comment(c["id"], c["body"], c["author"], c["bot"])
                for c in self.read()["comments"] if c["number"] == number]

    def upsert_status_comment(self, number: int, marker: Mapping[str, Any], body: str) -> Comment:
        text = status_body(marker, body)
        with self._writing() as state:
            self._entry(state, number)
            mine = [Comment(c["id"], c["body"], c["author"], c["bot"])
                    for c in state["comments"] if c["number"] == number]
            found = pick_status_comment(mine, self._own_login)
            if found is None:
                comment_id = self._new_id(state)
                state["comments"].append({"id": comment_id, "number": number, "body": text,
                                          "author": self._own_login, "bot": True})
                return Comment(comment_id, text, self._own_login, True)
            for c in state["comments"]:
                if c["id"] == found.id:
                    c["body"] = text
            return Comment(found.id, text, self._own_login, True)

    def read_status_state(self, number: int) -> dict[str, Any] | None:
        return status_state(self.list_comments(number), self._own_login)

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        with self._writing() as state:
            entry = self._entry(state, number)
            entry["labels"] += [x for x in dict.fromkeys(labels) if x not in entry["labels"]]

    def remove_label(self, number: int, label: str) -> None:
        with self._writing() as state:
            entry = self._entry(state, number)
            entry["labels"] = [x for x in entry["labels"] if x != label]

    def post_comment(self, number: int, body: str) -> Comment:
        with self._writing() as state:
            self._entry(state, number)
            comment_id = self._new_id(state)
            state["comments"].append({"id": comment_id, "number": number, "body": body,
                                      "author": self._own_login, "bot": True})
            return Comment(comment_id, body, self._own_login, True)

    def commit_comments(self, sha: str) -> list[Comment]:
        return [Comment(c["id"], c["body"], c["author"], True)
                for c in self.read()["commit_comments"] if c["sha"] == sha]

    def post_commit_comment(self, sha: str, body: str) -> Comment:
        with self._writing() as state:
            comment_id = self._new_id(state)
            state["commit_comments"].append({"id": comment_id, "sha": sha, "body": body,
                                             "author": self._own_login})
            return Comment(comment_id, body, self._own_login, True)

    def own_login(self) -> str:
        return self._own_login

    def delete_comment(self, number: int, comment_id: int) -> None:
        with self._writing() as state:
            state["comments"] = [c for c in state["comments"]
                                 if not (c["id"] == comment_id and c["number"] == number)]

    def add_reaction(self, number: int, comment_id: int, reaction: str = "eyes") -> None:
        if reaction not in _REACTIONS:
            raise ForgeError(f"{reaction!r} is not a reaction a forge accepts.")
        with self._writing() as state:
            if not any(c["id"] == comment_id and c["number"] == number for c in state["comments"]):
                raise ForgeError(f"The local forge has no comment {comment_id}.")
            record = [comment_id, reaction, self._own_login]
            if record not in state["reactions"]:
                state["reactions"].append(record)

    # -- people, workflows, branches ---------------------------------------------------------

    def permission(self, username: str) -> Permission:
        return Permission.parse(self.read()["permissions"].get(username))

    def start_ci(self, branch: str, commit: str, workflow: str = "") -> CiStart:
        """Recorded under `dispatches` as GitHub would receive a workflow dispatch (what a dry run
        shows). A named `workflow` must be configured, and configured as startable."""
        with self._writing() as state:
            if workflow and workflow not in state["workflows"]:
                raise ForgeError(f"The local forge has no workflow {workflow!r}.")
            if workflow and not state["workflows"][workflow]:
                return CiStart("not_startable")
            state["dispatches"].append({"workflow": workflow, "ref": branch, "inputs": {}})
            return CiStart("started")

    def default_branch(self) -> str:
        return str(self.read()["default_branch"])

    def protected(self, branch: str) -> bool:
        return branch in self.read()["protected"]
