"""`ci-agent poll`: slash commands on GitLab without a webhook, from a scheduled pipeline.

Each run reads the cursor (the project CI/CD variable `CI_AGENT_POLL_CURSOR`; the last 24 hours
on the first run), lists the open merge requests updated since (a new note updates its merge
request), reads their notes created since, and for every note holding a command that our account
has not claimed yet (our 👀) starts the same pipeline as the webhook relay, or with `--inline`
runs `ci-agent command --gitlab` for it in this job. Then it writes the new cursor: the newest
note time seen, but never later than this job's start (`CI_JOB_STARTED_AT`, GitLab's clock), so a
note written while we were reading is read again next time instead of missed (the command job's
own claim makes a repeat harmless). Writing the variable needs the Maintainer role.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from ci_agent.cli import run_reporting_errors
from ci_agent.engine.forge import ChangeRequest, Comment
from ci_agent.errors import ForgeError, UsageError
from ci_agent.platforms.gitlab.env import TOKEN_VARIABLE
from ci_agent.relay import (
    CURSOR_VARIABLE,
    MR_VARIABLE,
    NOTE_VARIABLE,
    explain_failure,
    format_time,
    parse_time,
    start_command_pipeline,
)
from ci_agent.slash.gate import is_bot
from ci_agent.slash.parse import holds_command

FIRST_LOOK_BACK = timedelta(hours=24)


class PollForge(Protocol):
    def own_login(self) -> str: ...

    def read_cursor(self, name: str = CURSOR_VARIABLE) -> str | None: ...

    def write_cursor(self, name: str, value: str) -> None: ...

    def open_change_requests(self, updated_after: str) -> list[ChangeRequest]: ...

    def notes_since(self, number: int, since: str) -> list[Comment]: ...

    def claimed_by(self, number: int, comment_id: int, username: str) -> bool: ...

    def default_branch(self) -> str: ...

    def start_pipeline(self, ref: str, variables: Mapping[str, str]) -> int: ...


Dispatch = Callable[[int, int], str]  # (merge request iid, note id) -> what was done, for the log


@dataclass
class PollResult:
    cursor: str
    handled: list[tuple[int, int, str]] = field(default_factory=list)  # (iid, note id, what was done)
    skipped: list[tuple[int, int, str]] = field(default_factory=list)  # (iid, note id, why)


HELP = "GitLab: find new /ci-agent comments and start a command pipeline for each (scheduled job)"
DESCRIPTION = ("Run in a scheduled GitLab pipeline: read the merge request comments written since "
    f"the last run (cursor: the CI/CD variable {CURSOR_VARIABLE}) and start a command pipeline for "
    f"each /ci-agent command. Needs {TOKEN_VARIABLE} with the api scope and the Maintainer role.")


def add_arguments(poll: argparse.ArgumentParser) -> None:
    poll.add_argument("--inline", action="store_true",
                      help="run `ci-agent command --gitlab` for each command in this job instead of "
                      "starting a pipeline per command")


def poll_once(forge: PollForge, dispatch: Dispatch, *, now: datetime, job_started: datetime | None = None,
              log: Callable[[str], None] = print) -> PollResult:
    stored = forge.read_cursor(CURSOR_VARIABLE)
    since = parse_time(stored) if stored else None
    if stored and since is None:
        log(f"{CURSOR_VARIABLE} holds no time ({stored[:40]!r}); reading the last 24 hours")
    since = since or now - FIRST_LOOK_BACK
    cursor = format_time(since)
    own = forge.own_login()
    result = PollResult(cursor)
    newest = since
    for change in forge.open_change_requests(cursor):
        for note in forge.notes_since(change.number, cursor):
            created = parse_time(note.created_at)
            if created is not None and created > newest:
                newest = created
            why = _skip(forge, change.number, note, own)
            if why:
                result.skipped.append((change.number, note.id, why))
                continue
            done = dispatch(change.number, note.id)
            result.handled.append((change.number, note.id, done))
            log(f"!{change.number} note {note.id}: {done}")
    if job_started is not None:
        newest = max(since, min(newest, job_started))
    result.cursor = format_time(newest)
    if result.cursor != cursor or stored is None:
        forge.write_cursor(CURSOR_VARIABLE, result.cursor)
    log(f"{len(result.handled)} command(s) started, {len(result.skipped)} comment(s) skipped; "
        f"cursor {result.cursor}")
    return result


def _skip(forge: PollForge, number: int, note: Comment, own: str) -> str:
    if note.author.lower() == own.lower():
        return "our own comment"
    if is_bot(note.author, note.author_is_bot):
        return "a bot's comment"
    if not holds_command(note.body):
        return "no command"
    if forge.claimed_by(number, note.id, own):
        return "already handled"
    return ""


def pipeline_dispatch(forge: PollForge) -> Dispatch:
    def dispatch(iid: int, note_id: int) -> str:
        try:
            return f"pipeline {start_command_pipeline(forge, iid, note_id)} started"
        except ForgeError as error:
            raise ForgeError(explain_failure(error)) from None
    return dispatch


CommandHandler = Callable[[Mapping[str, str]], int]  # `ci-agent command --gitlab` given its environment


def inline_dispatch(env: Mapping[str, str], handle: CommandHandler | None = None) -> Dispatch:
    """`ci-agent command --gitlab` in this process: the command handler is given this job's
    environment plus the variables a command pipeline would carry, naming the note."""
    def dispatch(iid: int, note_id: int) -> str:
        command_env = {**env, MR_VARIABLE: str(iid), NOTE_VARIABLE: str(note_id)}
        code = run_reporting_errors(lambda: (handle or _gitlab_command)(command_env))
        return f"handled here (exit {code})"
    return dispatch


def _gitlab_command(env: Mapping[str, str]) -> int:
    from ci_agent.platforms.gitlab.cycle import gitlab_command  # the engine loads when a command runs

    return gitlab_command(env)


def run_poll(args: argparse.Namespace, env: MutableMapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    server, project = env.get("CI_SERVER_URL", "").rstrip("/"), env.get("CI_PROJECT_PATH", "")
    if not server or not project:
        raise UsageError("ci-agent poll runs in a GitLab CI job (CI_SERVER_URL and CI_PROJECT_PATH are "
                         "not set)")
    token = env.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise UsageError(f"{TOKEN_VARIABLE} is not set; the poller needs a project access token with the api "
                         f"scope and the Maintainer role (it keeps its place in the CI/CD variable "
                         f"{CURSOR_VARIABLE}); CI_JOB_TOKEN cannot read notes or write variables")
    from ci_agent.platforms.gitlab.forge import GitLabForge

    forge = GitLabForge(project, token, url=server)
    dispatch = inline_dispatch(env) if args.inline else pipeline_dispatch(forge)
    started = parse_time(env.get("CI_JOB_STARTED_AT", ""))
    poll_once(forge, dispatch, now=datetime.now(UTC), job_started=started)
    return 0
