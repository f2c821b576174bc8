"""The GitLab webhook relay (`ci-agent serve`): a project webhook's Comments events in, one
pipeline per slash command out.

GitLab has no "run a job when someone comments" trigger, so a small server receives the project
webhook (Settings > Webhooks, Comments events, a secret token) and creates a pipeline on the
default branch with `CI_AGENT_COMMAND_MR_IID` and `CI_AGENT_COMMAND_NOTE_ID`; the command job of
`pipelines/gitlab/ci-agent.yml` runs only there and decides everything (who may, what to do).
The relay holds no model key and runs no code from the merge request.

Rules: the `X-Gitlab-Token` header must equal the secret (constant-time compare; 401 otherwise),
bodies are at most 1 MiB (413) and a JSON object (400). A Note Hook on a merge request, created
(`object_attributes.action` is `create`, or absent on GitLab versions before gitlab-org/gitlab!147856;
edits send `update`), not a system note, not by a project/group bot, from an allowed project,
whose body holds a command is answered 202 at once and handled by a worker thread: GitLab waits
at most 10 s for an answer and disables hooks that keep failing. Everything else is answered
200 `{"ignored": why}`; a note id already accepted (a redelivery) 200 `{"ignored": "duplicate"}`.
One log line per delivery; never a header, the secret or the token.
"""

from __future__ import annotations

import hmac
import json
import queue
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from ci_agent.errors import ForgeError
from ci_agent.slash.gate import is_bot
from ci_agent.slash.parse import parse_command

SECRET_VARIABLE = "CI_AGENT_WEBHOOK_SECRET"
MR_VARIABLE = "CI_AGENT_COMMAND_MR_IID"
NOTE_VARIABLE = "CI_AGENT_COMMAND_NOTE_ID"
MAX_BODY = 1024 * 1024
SEEN_NOTES = 10_000
QUEUE_SIZE = 1000
READ_TIMEOUT_S = 10
VARIABLES_REFUSED = "Insufficient permissions to set pipeline variables"
VARIABLES_FIX = ("the project allows no pipeline variables from the token's role: set Settings > CI/CD > "
                 "Variables > 'Minimum role to use pipeline variables' to Developer (or the token's role)")


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


def judge(event: str, payload: Mapping[str, Any], projects: Collection[str]) -> NoteCommand | str:
    """The note command a delivery carries, or why it is ignored. `projects` (lower-case paths or
    ids) is the allow-list; empty allows any project."""
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
    if projects and path.lower() not in projects and str(project_id) not in projects:
        return "a project that is not served here"
    user = payload.get("user")
    author = str(user.get("username") or "") if isinstance(user, dict) else ""
    if is_bot(author, False):
        return "a bot's comment"
    body = attributes.get("note")
    if not isinstance(body, str) or parse_command(body) is None:
        return "no command"
    request = payload.get("merge_request")
    iid = request.get("iid") if isinstance(request, dict) else None
    note_id = attributes.get("id")
    if not (_is_id(project_id) and _is_id(iid) and _is_id(note_id)):
        return "a comment without project id, merge request iid or note id"
    return NoteCommand(int(project_id), path, int(iid), int(note_id), author)  # type: ignore[arg-type]


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


def _printable(text: str, limit: int = 100) -> str:
    return re.sub(r"[^\x20-\x7e]", "?", text)[:limit]


def stderr_log(line: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"{stamp} {line}", file=sys.stderr, flush=True)


class Relay:
    """The server and its worker. `start(command)` creates the pipeline and returns its id."""

    def __init__(self, secret: str, start: Callable[[NoteCommand], int], *, projects: Collection[str] = (),
                 host: str = "127.0.0.1", port: int = 8080, log: Callable[[str], None] = stderr_log,
                 queue_size: int = QUEUE_SIZE) -> None:
        if not secret:
            raise ValueError(f"{SECRET_VARIABLE} is empty")
        self._secret = secret.encode("utf-8")
        self._start = start
        self.projects = frozenset(p.strip().lower() for p in projects if p.strip())
        self.log = log
        self.seen = SeenNotes()
        self._queue: queue.Queue[NoteCommand | None] = queue.Queue(maxsize=queue_size)
        self.server = ThreadingHTTPServer((host, port), _handler(self))
        self.server.daemon_threads = True
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
            where = f"{_printable(command.project)}!{command.mr_iid} note {command.note_id}"
            try:
                pipeline = self._start(command)
            except ForgeError as error:
                self.seen.forget((command.project_id, command.note_id))
                self.log(f"pipeline for {where} failed: {explain_failure(error)}")
            except Exception as error:  # the worker must outlive any one delivery
                self.seen.forget((command.project_id, command.note_id))
                self.log(f"pipeline for {where} failed: {error.__class__.__name__}")
            else:
                self.log(f"pipeline {pipeline} started for {where} by {_printable(command.author)}")


def _handler(relay: Relay) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = READ_TIMEOUT_S  # a client that stalls mid-body loses its connection
        server_version = "ci-agent-relay"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line of our own per delivery instead

        def _answer(self, status: int, body: Mapping[str, Any], outcome: str) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            event = _printable(self.headers.get("X-Gitlab-Event") or "-", 40)
            relay.log(f"{self.command} {_printable(self.path, 60)} {event}: {status} {outcome}")

        def do_GET(self) -> None:
            if self.path.split("?")[0] == "/healthz":
                self._answer(200, {"ok": True}, "health")
            else:
                self._answer(404, {"error": "not found"}, "not found")

        def do_POST(self) -> None:
            if not relay.token_ok(self.headers.get("X-Gitlab-Token")):
                self.close_connection = True  # the body stays unread
                self._answer(401, {"error": "wrong or missing X-Gitlab-Token"}, "bad token")
                return
            body = self._body()
            if body is None:
                return
            try:
                payload = json.loads(body)
            except (ValueError, RecursionError):  # too deep to read is not JSON we accept
                payload = None
            if not isinstance(payload, dict):
                self._answer(400, {"error": "the body is not a JSON object"}, "bad JSON")
                return
            found = judge(self.headers.get("X-Gitlab-Event") or "", payload, relay.projects)
            if isinstance(found, str):
                self._answer(200, {"ignored": found}, f"ignored: {found}")
                return
            status, answer = relay.accept(found)
            where = f"{_printable(found.project)}!{found.mr_iid} note {found.note_id}"
            outcome = answer.get("ignored") or answer.get("error") or "accepted"
            self._answer(status, answer, f"{outcome} {where}")

        def _body(self) -> bytes | None:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                self.close_connection = True
                self._answer(411, {"error": "a Content-Length is required"}, "no length")
                return None
            try:
                length = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                length = -1
            if length < 0:
                self.close_connection = True
                self._answer(400, {"error": "bad Content-Length"}, "bad length")
                return None
            if length > MAX_BODY:
                self.close_connection = True
                self._answer(413, {"error": f"the body is larger than {MAX_BODY} bytes"}, "too big")
                return None
            try:
                data = self.rfile.read(length)
            except TimeoutError:
                self.close_connection = True
                return None
            if len(data) < length:
                self.close_connection = True
                return None
            return data

    return Handler
