"""Fuzz targets for what ci-agent reads from forges: the status marker and its state, slash
commands and their gate, the GitLab relay (its judge and its HTTP handling, in-process), and the
GitHub event / GitLab environment readers."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ci_agent.engine.forge import Permission, parse_marker, render_marker
from ci_agent.engine.marker import ForgeState
from ci_agent.errors import UsageError
from ci_agent.platforms.github.env import (
    COMMENT_EVENTS,
    action_inputs,
    comment_event,
    github_context,
    trigger,
)
from ci_agent.platforms.gitlab.env import gitlab_context, gitlab_inputs, gitlab_trigger
from ci_agent.relay import NoteCommand, Relay, judge
from ci_agent.slash.gate import CommentFacts, decide
from ci_agent.slash.parse import MAX_ARGS, MAX_UNKNOWN, parse_command
from ci_agent.slash.table import COMMANDS, MAY_RUN
from tests.hardening.fuzz import corpus
from tests.hardening.fuzz.harness import Runner, Target, Violation, stateless
from tests.hardening.fuzz.mutate import any_input, json_mutated, mutated

# --- status marker ----------------------------------------------------------------------------------

MARKER_HEAD = b"<!-- ci-agent:v1 "


def _canonical(state: ForgeState) -> str:
    return json.dumps(state.to_json(), sort_keys=True, default=str)


def run_marker(data: bytes) -> None:
    body = data.decode("utf-8", "replace")
    found = parse_marker(body)
    if found is not None and not isinstance(found, dict):
        raise Violation("parse_marker returned a non-object")
    state = ForgeState.from_json(found)
    # Reading what we wrote gives back the same state (the marker survives every run).
    again = ForgeState.from_json(json.loads(json.dumps(state.to_json())))
    if _canonical(again) != _canonical(state):
        raise Violation("ForgeState.from_json(to_json(s)) differs from s")
    with contextlib.suppress(ValueError):  # render_marker's documented refusal: the state is too large
        if parse_marker(render_marker(state.to_json())) is None:
            raise Violation("render_marker wrote a marker parse_marker cannot read")


def _marker_seeds() -> tuple[bytes, ...]:
    return corpus.marker_seeds()


def _marker_strategy() -> st.SearchStrategy[bytes]:
    seeds = _marker_seeds()
    states = [s[len(MARKER_HEAD):s.index(b" -->")] for s in seeds]

    def wrap(state: bytes) -> bytes:
        return MARKER_HEAD + state + b" -->\nbody"
    return st.one_of(any_input(seeds), json_mutated(states, wrap), json_mutated(states, wrap))


# --- slash commands ---------------------------------------------------------------------------------

def _fenced(body: str) -> str:
    """`body` as fenced code whose fence no line of it can close."""
    fence = "`" * max(3, max_backticks(body) + 1)
    return f"{fence}\n{body}\n{fence}"


def max_backticks(text: str) -> int:
    best = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        best = max(best, run)
    return best


def run_slash(data: bytes) -> None:
    body = data.decode("utf-8", "replace")
    command = parse_command(body, COMMANDS)
    if command is not None:
        if command.name not in COMMANDS:
            raise Violation(f"unknown command name {command.name!r:.40}")
        if len(command.args) > MAX_ARGS or len(command.unknown) > MAX_UNKNOWN or "\n" in command.unknown:
            raise Violation("arguments or the unknown word over their caps")
    normal = body.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" not in body and len(body) < 60_000 and parse_command(_fenced(normal), COMMANDS) is not None:
        raise Violation("a command inside fenced code was found")
    quoted = "\n".join("> " + line for line in normal.split("\n"))
    if len(body) < 60_000 and parse_command(quoted, COMMANDS) is not None:
        raise Violation("a command inside a block quote was found")
    asked: list[str] = []

    def permission(user: str) -> Permission:
        asked.append(user)
        return Permission(len(data) % 6)
    for association in ("NONE", "MEMBER", ""):
        asked.clear()
        facts = CommentFacts(id=len(data) + 1, author="dev", author_is_bot=False, body=body, action="created",
                             association=association)
        decision = decide(facts, commands=MAY_RUN, own_login="ci-agent[bot]", permission=permission,
                          handled=(), recent=(), now=0.0)
        if len(asked) > 1 or (association == "NONE" and asked):
            raise Violation(f"the gate asked for the permission {len(asked)} time(s) ({association})")
        if decision.run and (command is None or decision.command != command):
            raise Violation("the gate runs a command parse_command does not find")


def _slash_seeds() -> tuple[bytes, ...]:
    texts = ["/ci-agent fix the null check in Calc", "LGTM\n\n/ci-agent explain", "> /ci-agent fix\nquoted",
             "```\n/ci-agent fix\n```", "<!-- /ci-agent fix -->", "/ci-agent frobnicate now",
             "   /ci-agent status\r\nmore\r\n\r\n/ci-agent stop", "/CI-AGENT Retry: please",
             "    /ci-agent fix (indented code)", "~~~~\n/ci-agent apply\n~~~", "/ci-agent\n/ci-agent help"]
    return tuple(t.encode() for t in texts)


# --- the GitLab relay -------------------------------------------------------------------------------

def run_relay_judge(data: bytes) -> None:
    try:
        payload: Any = json.loads(data)
    except (ValueError, RecursionError):  # the handler answers 400 before judging
        return
    if not isinstance(payload, dict):
        return
    for projects in ({}, {5: "group/app"}):
        found = judge("Note Hook", payload, projects)
        if isinstance(found, NoteCommand):
            if min(found.project_id, found.mr_iid, found.note_id) <= 0:
                raise Violation("an accepted note without positive ids")
        elif not isinstance(found, str) or not found:
            raise Violation("judge gave neither a command nor a reason")


SECRET = "fuzz-secret-token"
STATUSES = {b"200", b"202", b"400", b"401", b"404", b"408", b"411", b"413", b"414", b"431", b"501", b"503",
            b"505"}


def http_request(body: bytes, event: str = "Note Hook", token: str = SECRET) -> bytes:
    return (f"POST /hook HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nX-Gitlab-Event: {event}"
            f"\r\nX-Gitlab-Token: {token}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def _http09(raw: bytes, answer: bytes) -> bool:
    """http.server speaks HTTP/0.9 to a request line without a version (`GET /x`): no status line,
    no headers, only the body (ours, JSON), or its own error page for a request line it cannot
    read. The standard library's protocol handling, not a ci-agent answer (GitLab sends HTTP/1.1)."""
    if answer.startswith(b"<!DOCTYPE HTML>") and b"Error response" in answer:
        return True
    return len(raw.split(b"\n", 1)[0].split()) == 2 and answer.startswith(b"{")


@contextlib.contextmanager
def relay_session() -> Iterator[Runner]:
    errors: list[BaseException] = []
    started: list[NoteCommand] = []

    def start(command: NoteCommand) -> int:
        started.append(command)
        return len(started)
    relay = Relay(SECRET, start, port=0, log=lambda _line: None)

    def handle_error(_request: object, _address: object) -> None:
        errors.append(sys.exc_info()[1] or RuntimeError("handle_error without an exception"))
    relay.server.handle_error = handle_error  # type: ignore[method-assign,assignment]
    thread = threading.Thread(target=relay.serve_forever, daemon=True)
    thread.start()
    host, port = relay.address

    def exchange(raw: bytes) -> bytes:
        with socket.create_connection((host, port), timeout=15) as sock:
            with contextlib.suppress(OSError):  # the server may answer and close before all is sent
                sock.sendall(raw)
                sock.shutdown(socket.SHUT_WR)
            chunks = []
            with contextlib.suppress(OSError):
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
        return b"".join(chunks)

    def run(data: bytes) -> None:
        before = len(errors)
        raw = data if data[:4] in (b"POST", b"GET ", b"PUT ", b"HEAD") else http_request(data)
        answer = exchange(raw)
        if len(errors) > before:
            raise errors[-1]
        status_line = answer[:9] in (b"HTTP/1.1 ", b"HTTP/1.0 ") and answer[9:12] in STATUSES
        if answer and not (status_line or _http09(raw, answer)):
            raise Violation(f"the relay answered {answer[:40]!r}")
        if not exchange(b"GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n").startswith(b"HTTP/1.1 200"):
            raise Violation("the relay stopped answering /healthz")
    try:
        yield run
    finally:
        relay.shutdown()


def _relay_strategy() -> st.SearchStrategy[bytes]:
    hooks = corpus.note_hook_seeds()
    requests = (*(http_request(h) for h in hooks), http_request(hooks[0], token="wrong"),
                b"GET /healthz HTTP/1.1\r\n\r\n", http_request(b"{}", event="Push Hook"))
    return st.one_of(json_mutated(hooks), mutated(requests), mutated(hooks))


# --- CI environment readers -------------------------------------------------------------------------

@contextlib.contextmanager
def github_session() -> Iterator[Runner]:
    with tempfile.TemporaryDirectory(prefix="ci-agent-fuzz-event-") as tmp:
        path = Path(tmp) / "event.json"

        def run(data: bytes) -> None:
            path.write_bytes(data)
            for name in ("workflow_run", "pull_request", "push", *COMMENT_EVENTS):
                env = {"GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(path),
                       "GITHUB_REF_NAME": "feature/x", "GITHUB_HEAD_REF": "", "GITHUB_RUN_ID": "42"}
                try:
                    ctx = github_context(env)
                    found = trigger(ctx)
                    if found.fork and not found.refused:
                        raise Violation("a fork's run that is not refused")
                    if name in COMMENT_EVENTS:
                        comment_event(ctx)
                except UsageError:
                    continue
        yield run


def _env_values(data: bytes) -> dict[str, str]:
    parts = data.decode("utf-8", "replace").split("\x00")
    env = {key: value for key, value in zip(corpus.GITLAB_ENV_KEYS, parts, strict=False)}
    return {k: v for k, v in env.items() if "\x00" not in v}


def run_gitlab_env(data: bytes) -> None:
    env = _env_values(data)
    with contextlib.suppress(UsageError):
        gitlab_inputs(env)
    with contextlib.suppress(UsageError):
        action_inputs({f"INPUT_{k.removeprefix('CI_AGENT_INPUT_')}": v for k, v in env.items()})
    try:
        found = gitlab_trigger(gitlab_context(env))
    except UsageError:
        return
    if found.fork and not found.refused:
        raise Violation("a fork's merge request pipeline that is not refused")


def forge_targets() -> list[Target]:
    github_seeds = corpus.github_event_seeds
    return [
        Target("marker", stateless(run_marker), _marker_strategy, _marker_seeds,
               what="forge.base.parse_marker, ForgeState.from_json, render_marker"),
        Target("slash", stateless(run_slash), lambda: any_input(_slash_seeds()), _slash_seeds,
               what="slash.parse.parse_command, slash.gate.decide"),
        Target("relay.judge", stateless(run_relay_judge), lambda: json_mutated(corpus.note_hook_seeds()),
               corpus.note_hook_seeds, what="relay.judge"),
        Target("relay.http", relay_session, _relay_strategy, corpus.note_hook_seeds,
               what="relay.Relay request handling (in-process server, loopback socket)"),
        Target("cienv.github", github_session,
               lambda: st.one_of(json_mutated(github_seeds()), mutated(github_seeds())), github_seeds,
               allowed=(UsageError,), what="cienv.github_context, trigger, comment_event"),
        Target("cienv.gitlab", stateless(run_gitlab_env), lambda: any_input(corpus.gitlab_env_seeds()),
               corpus.gitlab_env_seeds, allowed=(UsageError,),
               what="cienv_gitlab.gitlab_context, gitlab_trigger, gitlab_inputs; cienv.action_inputs"),
    ]


def all_targets() -> dict[str, Target]:
    from tests.hardening.fuzz.targets_input import input_targets

    return {t.name: t for t in [*input_targets(), *forge_targets()]}

