"""`GitLabForge`'s slash-command methods (`CommandForge`, the poller's listing and cursor) through
real python-gitlab against the loopback GitLab fake. Expected values come from the fake's state
and GitLab's documented answers (see tests/fakes/gitlab_fake_commands.py), never from our output."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ci_agent.errors import ForgeError
from ci_agent.platforms.gitlab.forge import GitLabForge
from ci_agent.relay import CURSOR_VARIABLE, format_time, parse_time
from tests.fakes.gitlab_fake import FakeJob, Fault, GitLabFake, not_found
from tests.forge.forges import gitlab_forge

MAINT, BOT, JOB = "glpat-maint", "glpat-bot", "job-token-1"
BOT_USER = "project_42_bot_abc"


@pytest.fixture
def fake() -> Iterator[GitLabFake]:
    with GitLabFake() as server:
        yield server
    assert server.failures == []


def make(fake: GitLabFake, token: str = BOT, **kwargs: Any) -> GitLabForge:
    return gitlab_forge(fake, token, **kwargs)


def test_get_change_request_has_head_fork_and_state(fake: GitLabFake) -> None:
    own = fake.new_merge_request("feature", "main", "Draft: Login", sha="b" * 40)
    fork = fake.new_merge_request("patch-1", "main", "Typo", source_project_id=99)
    merged = fake.new_merge_request("done", "main", "Done", state="merged")
    forge = make(fake)
    first = forge.get_change_request(own)
    assert (first.number, first.source_branch, first.head_sha, first.fork, first.state, first.draft) == \
        (own, "feature", "b" * 40, False, "open", True)
    assert forge.get_change_request(fork).fork is True
    assert forge.get_change_request(merged).state == "merged"
    with pytest.raises(ForgeError, match="found nothing"):
        forge.get_change_request(404)


def test_get_comment_is_the_note_now_and_none_once_deleted(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    note_id = fake.add_note(iid, "/ci-agent fix", "alice")
    fake.notes[iid][0]["body"] = "/ci-agent explain"  # edited since the webhook fired
    found = make(fake).get_comment(iid, note_id)
    assert found is not None
    assert (found.id, found.body, found.author) == (note_id, "/ci-agent explain", "alice")
    assert found.author_is_bot is False
    assert found.created_at == fake.notes[iid][0]["created_at"]
    fake.notes[iid].clear()
    assert make(fake).get_comment(iid, note_id) is None


def test_claim_is_true_once_then_false(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    note_id = fake.add_note(iid, "/ci-agent fix", "alice")
    forge = make(fake)
    assert forge.claim(iid, note_id) is True
    assert forge.claim(iid, note_id) is False  # GitLab: 404 "Award Emoji Name has already been taken"
    assert fake.award_emoji == [(iid, note_id, "eyes", BOT_USER)]
    assert forge.claimed_by(iid, note_id, BOT_USER) is True
    assert forge.claimed_by(iid, note_id, "maint") is False


def test_of_concurrent_claims_exactly_one_wins(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    note_id = fake.add_note(iid, "/ci-agent fix", "alice")
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(make(fake).claim(iid, note_id)))
               for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 5 + [True]


def test_claim_of_a_deleted_note_is_an_error_not_a_false(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    with pytest.raises(ForgeError, match="Note Not Found"):
        make(fake).claim(iid, 12345)


def test_a_job_token_cannot_claim_and_says_what_to_set(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    note_id = fake.add_note(iid, "/ci-agent fix", "alice")
    with pytest.raises(ForgeError, match="CI_AGENT_GITLAB_TOKEN"):
        make(fake, JOB).claim(iid, note_id)


def test_latest_failed_run_is_the_newest_failed_pipeline_of_ref_and_sha(fake: GitLabFake) -> None:
    sha, other = "c" * 40, "d" * 40
    old = fake.add_pipeline("feature", sha, "failed", [FakeJob("test", "failed")])
    newest = fake.add_pipeline("feature", sha, "failed", [FakeJob("test", "failed")])
    fake.add_pipeline("feature", sha, "success", [])
    fake.add_pipeline("feature", other, "failed", [])
    fake.add_pipeline("main", sha, "failed", [])
    forge = make(fake)
    assert newest > old
    assert forge.latest_failed_run("feature", sha) == newest
    assert forge.latest_failed_run("feature", "e" * 40) is None


def test_open_change_requests_updated_after_a_time(fake: GitLabFake) -> None:
    quiet = fake.new_merge_request("quiet", "main", "Quiet")
    busy = fake.new_merge_request("busy", "main", "Busy")
    closed = fake.new_merge_request("gone", "main", "Gone", state="closed")
    cursor = fake.tick()
    fake.add_note(busy, "a new comment", "alice")  # touches the merge request
    fake.add_note(closed, "a comment on a closed one", "alice")
    found = make(fake).open_change_requests(cursor)
    assert [cr.number for cr in found] == [busy]
    assert {cr.number for cr in make(fake).open_change_requests("2020-01-01T00:00:00Z")} == {quiet, busy}


def test_notes_since_are_oldest_first_without_system_notes_and_stop_early(fake: GitLabFake) -> None:
    iid = fake.new_merge_request("feature", "main", "Login")
    for n in range(150):  # two pages of old notes the poller must not read
        fake.add_note(iid, f"old {n}", "alice")
    cursor = fake.tick()
    first = fake.add_note(iid, "/ci-agent fix", "alice")
    fake.add_note(iid, "added 1 commit", "alice", system=True)
    second = fake.add_note(iid, "/ci-agent status", "bob")
    notes = make(fake).notes_since(iid, cursor)
    assert [n.id for n in notes] == [first, second]
    assert all(parse_time(n.created_at) > parse_time(cursor) for n in notes)  # type: ignore[operator]
    assert len(fake.requests_to("GET", r"/projects/.+/merge_requests/\d+/notes")) == 1


def test_the_cursor_is_created_then_updated(fake: GitLabFake) -> None:
    forge = make(fake, MAINT)
    assert forge.read_cursor(CURSOR_VARIABLE) is None
    forge.write_cursor(CURSOR_VARIABLE, "2026-01-01T00:00:01.000Z")
    assert fake.variables[CURSOR_VARIABLE]["value"] == "2026-01-01T00:00:01.000Z"
    assert fake.variables[CURSOR_VARIABLE]["protected"] is False  # a scheduled job on any ref reads it
    forge.write_cursor(CURSOR_VARIABLE, "2026-01-01T00:00:02.000Z")
    assert forge.read_cursor(CURSOR_VARIABLE) == "2026-01-01T00:00:02.000Z"
    assert len(fake.requests_to("POST", r"/projects/.+/variables")) == 1


def test_a_cursor_created_by_another_poller_meanwhile_is_overwritten(fake: GitLabFake) -> None:
    fake.variables[CURSOR_VARIABLE] = {"key": CURSOR_VARIABLE, "value": "theirs"}
    fake.add_fault(Fault(not_found("Variable"), path="/variables/", method="PUT"))  # it did not exist yet
    make(fake, MAINT).write_cursor(CURSOR_VARIABLE, "ours")
    assert fake.variables[CURSOR_VARIABLE]["value"] == "ours"


def test_the_cursor_below_maintainer_names_the_role(fake: GitLabFake) -> None:
    forge = make(fake)  # the project bot is a Developer
    with pytest.raises(ForgeError, match="Maintainer role") as raised:
        forge.read_cursor(CURSOR_VARIABLE)
    assert BOT not in str(raised.value)
    with pytest.raises(ForgeError, match="Maintainer role"):
        forge.write_cursor(CURSOR_VARIABLE, "x")


def test_pipeline_variables_refused_by_the_project_setting_say_so(fake: GitLabFake) -> None:
    fake.pipeline_variables_level = None  # no_one_allowed
    with pytest.raises(ForgeError, match="Insufficient permissions to set pipeline variables"):
        make(fake).start_pipeline("main", {"CI_AGENT_COMMAND_NOTE_ID": "1"})
    assert fake.created_pipelines == []


def test_times_round_trip_in_gitlabs_form() -> None:
    moment = parse_time("2026-03-04T05:06:07.890+02:00")
    assert moment is not None and format_time(moment) == "2026-03-04T03:06:07.890Z"
    assert parse_time("2026-03-04T03:06:07Z") == parse_time("2026-03-04T03:06:07.000Z")
    assert parse_time("yesterday") is None
