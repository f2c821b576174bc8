"""`ci-agent poll` against the GitLab fake: which comments start a command pipeline, and the
cursor kept in the project CI/CD variable. Times are the fake's clock (each note one second
later than the last), so nothing here depends on the wall clock except the end-to-end run."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ci_agent.cli.poll import inline_dispatch, pipeline_dispatch, poll_once, run_poll
from ci_agent.errors import ForgeError, UsageError
from ci_agent.platforms.gitlab.forge import GitLabForge
from ci_agent.relay import CURSOR_VARIABLE, MR_VARIABLE, NOTE_VARIABLE, format_time, parse_time
from tests.fakes.gitlab_fake import GitLabFake

MAINT = "glpat-maint"  # the poller's token: Maintainer, writes the cursor; its user is "maint"


@pytest.fixture
def fake() -> Iterator[GitLabFake]:
    with GitLabFake() as server:
        yield server
    assert server.failures == []


def forge_of(fake: GitLabFake, token: str = MAINT) -> GitLabForge:
    return GitLabForge("acme/shop", token, url=fake.url, sleep=lambda seconds: None)


def started(fake: GitLabFake) -> list[tuple[str, str]]:
    """(merge request iid, note id) of every command pipeline the fake was asked for."""
    found = []
    for pipeline in fake.created_pipelines:
        variables = {v["key"]: v["value"] for v in pipeline["variables"]}
        assert pipeline["ref"] == "main"
        found.append((variables[MR_VARIABLE], variables[NOTE_VARIABLE]))
    return found


def run(fake: GitLabFake, **kwargs: Any) -> Any:
    forge = forge_of(fake)
    kwargs.setdefault("now", fake.now + timedelta(seconds=30))
    return poll_once(forge, pipeline_dispatch(forge), log=lambda line: None, **kwargs)


def test_first_run_reads_the_last_24_hours_and_starts_one_pipeline_per_new_command(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    other = fake.new_merge_request("other", "main", "Other")
    fake.add_note(iid, "/ci-agent fix", "alice")
    fake.now += timedelta(hours=25)  # that one is older than the first look-back
    fix = fake.add_note(iid, "/ci-agent fix\nthe test is flaky", "alice")
    fake.add_note(iid, "looks good to me", "bob")
    fake.add_note(iid, "/ci-agent status", "maint")  # our own account: never a command to us
    fake.add_note(iid, "/ci-agent fix", "project_42_bot_abc")
    fake.add_note(iid, "added 1 commit", "alice", system=True)
    explain = fake.add_note(other, "/ci-agent explain", "bob")
    newest = fake.notes[other][-1]["created_at"]
    result = run(fake)
    assert sorted(started(fake)) == sorted([(str(iid), str(fix)), (str(other), str(explain))])
    assert fake.variables[CURSOR_VARIABLE]["value"] == newest == result.cursor
    assert {why for _, _, why in result.skipped} == {"no command", "our own comment", "a bot's comment"}


def test_the_next_run_reads_only_what_came_since(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    fake.add_note(iid, "/ci-agent fix", "alice")
    run(fake)
    fake.created_pipelines.clear()
    retry = fake.add_note(iid, "/ci-agent retry", "alice")
    run(fake)
    assert started(fake) == [(str(iid), str(retry))]
    fake.created_pipelines.clear()
    run(fake)
    assert started(fake) == []


def test_a_comment_we_already_claimed_starts_nothing(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    note = fake.add_note(iid, "/ci-agent fix", "alice")
    assert forge_of(fake).claim(iid, note) is True  # the command job (from the webhook) took it
    result = run(fake)
    assert started(fake) == [] and result.skipped == [(iid, note, "already handled")]


def test_the_cursor_never_passes_the_jobs_start(fake: GitLabFake) -> None:
    """A note written while the poller reads is read again next time, not lost."""
    iid = fake.new_merge_request("feature", "main", "Login")
    first = fake.add_note(iid, "/ci-agent fix", "alice")
    job_started = fake.now
    late = fake.add_note(iid, "/ci-agent explain", "bob")  # after the job began
    run(fake, job_started=job_started)
    assert fake.variables[CURSOR_VARIABLE]["value"] == format_time(job_started)
    fake.created_pipelines.clear()
    forge_of(fake).claim(iid, first)  # the first command's job ran meanwhile; the late one's not yet
    run(fake)
    assert started(fake) == [(str(iid), str(late))]  # again: the command job's claim dedupes it


def test_an_unreadable_cursor_is_a_first_run(fake: GitLabFake) -> None:
    fake.variables[CURSOR_VARIABLE] = {"key": CURSOR_VARIABLE, "value": "not a time"}
    iid = fake.new_merge_request("feature", "main", "Login")
    note = fake.add_note(iid, "/ci-agent fix", "alice")
    lines: list[str] = []
    forge = forge_of(fake)
    poll_once(forge, pipeline_dispatch(forge), now=fake.now, log=lines.append)
    assert started(fake) == [(str(iid), str(note))]
    assert "holds no time" in lines[0]
    assert parse_time(fake.variables[CURSOR_VARIABLE]["value"]) == fake.now


def test_nothing_new_still_writes_the_first_cursor(fake: GitLabFake) -> None:
    now = fake.now
    run(fake, now=now)
    assert fake.variables[CURSOR_VARIABLE]["value"] == format_time(now - timedelta(hours=24))


def test_inline_hands_each_command_to_the_handler_with_its_variables(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    note = fake.add_note(iid, "/ci-agent fix", "alice")
    env: dict[str, str] = {"CI_PROJECT_PATH": "acme/shop"}
    seen: list[dict[str, str]] = []

    def handler(command_env: Mapping[str, str]) -> int:
        seen.append(dict(command_env))
        return 0
    result = poll_once(forge_of(fake), inline_dispatch(env, handler), now=fake.now, log=lambda line: None)
    assert seen == [{"CI_PROJECT_PATH": "acme/shop", MR_VARIABLE: str(iid), NOTE_VARIABLE: str(note)}]
    assert env == {"CI_PROJECT_PATH": "acme/shop"}  # nothing left behind for the next command
    assert result.handled == [(iid, note, "handled here (exit 0)")] and fake.created_pipelines == []


def test_inline_reports_a_failed_command_as_its_exit_code(fake: GitLabFake,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    note = fake.add_note(iid, "/ci-agent fix", "alice")

    def handler(command_env: Mapping[str, str]) -> int:
        raise ForgeError("the forge said no")
    result = poll_once(forge_of(fake), inline_dispatch({}, handler), now=fake.now, log=lambda line: None)
    assert result.handled == [(iid, note, "handled here (exit 5)")]
    assert capsys.readouterr().err == "ci-agent: error: the forge said no\n"


def test_a_developer_token_cannot_keep_the_cursor(fake: GitLabFake) -> None:
    forge = forge_of(fake, "glpat-bot")
    with pytest.raises(ForgeError, match="Maintainer role"):
        poll_once(forge, pipeline_dispatch(forge), now=fake.now, log=lambda line: None)


def test_refused_pipeline_variables_name_the_setting(fake: GitLabFake) -> None:
    fake.pipeline_variables_level = None
    iid = fake.new_merge_request("feature", "main", "Login")
    fake.add_note(iid, "/ci-agent fix", "alice")
    with pytest.raises(ForgeError, match="Minimum role to use pipeline variables"):
        run(fake)
    assert CURSOR_VARIABLE not in fake.variables  # not advanced: the next run tries again


def test_ci_agent_poll_in_a_job(fake: GitLabFake) -> None:
    fake.now = datetime.now(UTC) - timedelta(hours=1)
    iid = fake.new_merge_request("feature", "main", "Login")
    note = fake.add_note(iid, "/ci-agent fix", "alice")
    env = {"CI_SERVER_URL": fake.url, "CI_PROJECT_PATH": "acme/shop", "CI_AGENT_GITLAB_TOKEN": MAINT,
           "CI_JOB_STARTED_AT": format_time(datetime.now(UTC))}
    assert run_poll(argparse.Namespace(inline=False), env) == 0
    assert started(fake) == [(str(iid), str(note))]
    with pytest.raises(UsageError, match="CI_AGENT_GITLAB_TOKEN is not set"):
        run_poll(argparse.Namespace(inline=False), {**env, "CI_AGENT_GITLAB_TOKEN": ""})
    with pytest.raises(UsageError, match="GitLab CI job"):
        run_poll(argparse.Namespace(inline=False), {})
