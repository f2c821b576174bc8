"""The GitLab webhook relay (`ci-agent serve`): a project webhook's Comments events in, one
pipeline per slash command out.

GitLab has no "run a job when someone comments" trigger, so a small server receives the project
webhook (Settings > Webhooks, Comments events, a secret token) and creates a pipeline on the
default branch with `CI_AGENT_COMMAND_MR_IID` and `CI_AGENT_COMMAND_NOTE_ID`; the command job of
`pipelines/gitlab/ci-agent.yml` runs only there and decides everything (who may, what to do).
The relay holds no model key and runs no code from the merge request.

Rules: the `X-Gitlab-Token` header must equal the secret (constant-time compare; 401 otherwise),
bodies are at most 1 MiB (413) and a JSON object (400); connections are served by a bounded pool
with per-phase deadlines (`ci_agent.relay_http`). A Note Hook on a merge request, created
(`object_attributes.action` is `create`, or absent on GitLab versions before gitlab-org/gitlab!147856;
edits send `update`), not a system note, not by a project/group bot, from an allowed project (the
id and path GitLab gave for `--project` at startup: the payload's ids are never trusted alone),
whose body holds a command is answered 202 at once and handled by a worker thread: GitLab waits
at most 10 s for an answer and disables hooks that keep failing. Everything else is answered
200 `{"ignored": why}`; a note id already accepted (a redelivery) 200 `{"ignored": "duplicate"}`.
One log line per delivery; never a header, the secret or the token.
"""

from __future__ import annotations

import hmac
import queue
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from ci_agent.errors import ForgeError
from ci_agent.relay_http import BoundedHTTPServer, ConnectionLimits, handler_for, printable
from ci_agent.slash.gate import is_bot
from ci_agent.slash.parse import holds_command

SECRET_VARIABLE = "CI_AGENT_WEBHOOK_SECRET"
MR_VARIABLE = "CI_AGENT_COMMAND_MR_IID"
# `ci-agent poll`'s cursor: the project CI/CD variable holding the newest note time it handled.
CURSOR_VARIABLE = "CI_AGENT_POLL_CURSOR"
NOTE_VARIABLE = "CI_AGENT_COMMAND_NOTE_ID"
SEEN_NOTES = 10_000
QUEUE_SIZE = 1000
VARIABLES_REFUSED = "Insufficient permissions to set pipeline variables"
VARIABLES_FIX = ("the project allows no pipeline variables from the token's role: set Settings > CI/CD > "
                 "Variables > 'Minimum role to use pipeline variables' to Developer (or the token's role)")


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time as GitLab writes it (`2026-01-01T00:00:00.000Z`, or with an offset), in UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def format_time(moment: datetime) -> str:
    """UTC with milliseconds and `Z`, the form GitLab's API writes and reads."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class NoteCommand:
    """An accepted note: where to start the command pipeline, and for which note."""

    project_id: int
    project: str  # path_with_namespace, for the log
    mr_iid: int
    note_id: int
    author: str


class CommandPipelineStarter(Protocol):
    def default_branch(self) -> str: ...

    def start_pipeline(self, ref: str, variables: Mapping[str, str]) -> int: ...


def start_command_pipeline(forge: CommandPipelineStarter, mr_iid: int, note_id: int) -> int:
    """The pipeline the command job runs in: the default branch, never the merge request's code."""
    variables = {MR_VARIABLE: str(mr_iid), NOTE_VARIABLE: str(note_id)}
    return forge.start_pipeline(forge.default_branch(), variables)


def explain_failure(error: ForgeError) -> str:
    text = str(error)
    return f"{text} ({VARIABLES_FIX})" if VARIABLES_REFUSED in text else text


def judge(event: str, payload: Mapping[str, Any], projects: Mapping[int, str]) -> NoteCommand | str:
    """The note command a delivery carries, or why it is ignored. `projects` is the allow-list as
    GitLab itself named it at startup (numeric id -> lower-case path); empty allows any project.
    The payload's ids are never trusted on their own: every project id it carries must agree, and
    with an allow-list both the id and the path must be the pair GitLab resolved."""
    if event != "Note Hook" or payload.get("object_kind") != "note":
        return "not a comment event"
    attributes = payload.get("object_attributes")
    project = payload.get("project")
    if not isinstance(attributes, dict) or not isinstance(project, dict):
        return "not a comment event"
    if attributes.get("noteable_type") != "MergeRequest":
        return "not a merge request comment"
    if attributes.get("action", "create") != "create":
        return "an edited comment never runs a command"
    if attributes.get("system"):
        return "a system note"
    path, project_id = str(project.get("path_with_namespace") or ""), project.get("id")
    request = payload.get("merge_request")
    if projects:
        served = _served(path, project_id, projects)
        if served is not None:
            return served
    user = payload.get("user")
    author = str(user.get("username") or "") if isinstance(user, dict) else ""
    if is_bot(author, False):
        return "a bot's comment"
    body = attributes.get("note")
    if not isinstance(body, str) or not holds_command(body):
        return "no command"
    iid = request.get("iid") if isinstance(request, dict) else None
    note_id = attributes.get("id")
    if not (_is_id(project_id) and _is_id(iid) and _is_id(note_id)):
        return "a comment without project id, merge request iid or note id"
    others = (payload.get("project_id"), attributes.get("project_id"),
              request.get("target_project_id") if isinstance(request, dict) else None)
    if any(other is not None and other != project_id for other in others):
        return "a comment whose project ids disagree"
    return NoteCommand(int(project_id), path, int(iid), int(note_id), author)  # type: ignore[arg-type]


def _served(path: str, project_id: Any, projects: Mapping[int, str]) -> str | None:
    """None when (id, path) is a pair from the allow-list, else why not."""
    known = projects.get(project_id) if _is_id(project_id) else None
    if known is not None and known == path.lower():
        return None
    if known is None and path.lower() not in projects.values():
        return "a project that is not served here"
    return "a project whose id and path are not the pair GitLab gave for the served project"


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class SeenNotes:
    """The note ids accepted lately (bounded, oldest forgotten first), shared by the handler threads."""

    def __init__(self, size: int = SEEN_NOTES) -> None:
        self._size = size
        self._seen: OrderedDict[tuple[int, int], None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, key: tuple[int, int]) -> bool:
        """True when `key` is new (and now remembered)."""
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return False
            self._seen[key] = None
            while len(self._seen) > self._size:
                self._seen.popitem(last=False)
            return True

    def forget(self, key: tuple[int, int]) -> None:
        with self._lock:
            self._seen.pop(key, None)


def stderr_log(line: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"{stamp} {line}", file=sys.stderr, flush=True)


class Relay:
    """The server and its worker. `start(command)` creates the pipeline and returns its id."""

    def __init__(self, secret: str, start: Callable[[NoteCommand], int], *,
                 projects: Mapping[int, str] | None = None,
                 host: str = "127.0.0.1", port: int = 8080, log: Callable[[str], None] = stderr_log,
                 queue_size: int = QUEUE_SIZE, limits: ConnectionLimits | None = None) -> None:
        if not secret:
            raise ValueError(f"{SECRET_VARIABLE} is empty")
        self._secret = secret.encode("utf-8")
        self._start = start
        self.projects = {int(i): p.lower() for i, p in (projects or {}).items()}
        self.log = log
        self.seen = SeenNotes()
        self._queue: queue.Queue[NoteCommand | None] = queue.Queue(maxsize=queue_size)
        limits = limits or ConnectionLimits()
        self.server = BoundedHTTPServer((host, port), handler_for(self, limits), limits, log)
        self._worker = threading.Thread(target=self._work, name="ci-agent-relay-worker", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def serve_forever(self) -> None:
        self._worker.start()
        self.server.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop answering, let the worker finish what was accepted, close the socket."""
        self.server.shutdown()
        self._queue.put(None)
        if self._worker.is_alive():
            self._worker.join(timeout=30)
        self.server.server_close()

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), self._secret)

    def receive(self, event: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
        """The answer to one authenticated delivery: (status, JSON body, the log line's outcome)."""
        found = judge(event, payload, self.projects)
        if isinstance(found, str):
            return 200, {"ignored": found}, f"ignored: {found}"
        status, answer = self.accept(found)
        where = f"{printable(found.project)}!{found.mr_iid} note {found.note_id}"
        return status, answer, f"{answer.get('ignored') or answer.get('error') or 'accepted'} {where}"

    def accept(self, command: NoteCommand) -> tuple[int, dict[str, Any]]:
        key = (command.project_id, command.note_id)
        if not self.seen.add(key):
            return 200, {"ignored": "duplicate"}
        try:
            self._queue.put_nowait(command)
        except queue.Full:
            self.seen.forget(key)  # a redelivery may succeed later
            return 503, {"error": "busy"}
        return 202, {"accepted": command.note_id}

    def _work(self) -> None:
        while (command := self._queue.get()) is not None:
            where = f"{printable(command.project)}!{command.mr_iid} note {command.note_id}"
            try:
                pipeline = self._start(command)
            except ForgeError as error:
                self.seen.forget((command.project_id, command.note_id))
                self.log(f"pipeline for {where} failed: {explain_failure(error)}")
            except Exception as error:  # the worker must outlive any one delivery
                self.seen.forget((command.project_id, command.note_id))
                self.log(f"pipeline for {where} failed: {error.__class__.__name__}")
            else:
                self.log(f"pipeline {pipeline} started for {where} by {printable(command.author)}")
