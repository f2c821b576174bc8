"""`GitLabForge` through real python-gitlab against the loopback GitLab fake (DESIGN.md §5).

Expected values come from the fake's state (what "GitLab" holds) and the REST docs' shapes, never
from our own output. No sleeping: the forge's `sleep` is a list append, so the waits it chose are
read back, and retries are counted as requests the fake received.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import gitlab
import pytest

from ci_agent.engine.forge import Limits, Permission, parse_marker
from ci_agent.errors import ForgeError
from ci_agent.platforms.gitlab.forge import JOB_TOKEN_LOGIN
from ci_agent.platforms.gitlab.http import access_permission
from tests.fakes.gitlab_fake import FakeJob, Fault, GitLabFake, Reply
from tests.forge.forges import FIX, GITLAB_BOT_TOKEN, GITLAB_BOT_USER, GITLAB_JOB_TOKEN, zip_bytes
from tests.forge.forges import gitlab_forge as make

MAINT = "glpat-maint"
BOT, JOB, BOT_USER = GITLAB_BOT_TOKEN, GITLAB_JOB_TOKEN, GITLAB_BOT_USER


# -- pipelines, logs, artifacts -------------------------------------------------------------

def test_failed_jobs_across_pages_allow_failure_named(fake: GitLabFake) -> None:
    pid = fake.add_pipeline("main", "a" * 40, "failed", [
        FakeJob("build", "failed"), FakeJob("lint", "success"),
        FakeJob("flaky", "failed", allow_failure=True), FakeJob("docs", "skipped"), FakeJob("test", "failed"),
        FakeJob("pack", "canceled")])
    ids = fake.job_ids(pid)
    jobs = make(fake, per_page=1).failed_jobs(pid)
    assert [(j.id, j.name, j.conclusion) for j in jobs] == [
        (ids[0], "build", "failed"), (ids[2], "flaky", "failed (allowed to fail)"),
        (ids[4], "test", "failed")]
    pages = fake.requests_to("GET", f"/projects/acme/shop/pipelines/{pid}/jobs")
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3"]
    assert all(r.query["scope[]"] == "failed" for r in pages)


def test_job_log_request_is_recorded_with_the_token_masked(fake: GitLabFake, tmp_path: Path) -> None:
    pid = fake.add_pipeline("main", "a" * 40, "failed", [FakeJob("build / linux", "failed", b"error\n")])
    (job_id,) = fake.job_ids(pid)
    make(fake).download_job_log(job_id, tmp_path / "logs")
    (trace,) = fake.requests_to("GET", rf"/projects/acme/shop/jobs/{job_id}/trace")
    assert trace.headers["private-token"] == "[MASKED]" and trace.user == BOT_USER


def test_job_log_is_capped(fake: GitLabFake, tmp_path: Path) -> None:
    pid = fake.add_pipeline("main", "a" * 40, "failed", [FakeJob("build", "failed", b"x" * 5000)])
    (job_id,) = fake.job_ids(pid)
    log = make(fake, limits=Limits(max_log_bytes=1000)).download_job_log(job_id, tmp_path)
    assert log.truncated and log.text_path.stat().st_size == 1000


def test_job_token_reads_logs_with_the_job_token_header(fake: GitLabFake, tmp_path: Path) -> None:
    pid = fake.add_pipeline("main", "a" * 40, "failed", [FakeJob("build", "failed", b"boom\n")])
    (job_id,) = fake.job_ids(pid)
    forge = make(fake, JOB)
    assert [j.id for j in forge.failed_jobs(pid)] == [job_id]
    assert forge.download_job_log(job_id, tmp_path).text_path.read_bytes() == b"boom\n"
    assert all("job-token" in r.headers and "private-token" not in r.headers for r in fake.requests)


def test_artifacts_extracted_per_job_and_hostile_ones_refused(fake: GitLabFake, tmp_path: Path) -> None:
    trx = b"<TestRun/>"
    pid = fake.add_pipeline("main", "a" * 40, "failed", [
        FakeJob("test", "failed", artifacts=zip_bytes(("TestResults/a.trx", trx))),
        FakeJob("evil", "failed", artifacts=zip_bytes(("ok.txt", b"fine"), ("../escaped.txt", b"pwned"))),
        FakeJob("link", "failed", artifacts=zip_bytes(symlink="passwd")),
        FakeJob("old", "failed", artifacts=zip_bytes(("a.txt", b"a")), artifacts_expired=True),
        FakeJob("lint", "success")])
    test_id, evil_id, _, old_id, lint_id = fake.job_ids(pid)
    dest = tmp_path / "artifacts"
    got = {a.name: a for a in make(fake).download_artifacts(pid, dest)}
    assert set(got) == {"test", "evil", "link", "old"}  # lint has no archive and never had one
    assert got["test"].path == dest / f"test-{test_id}"
    assert (dest / f"test-{test_id}" / "TestResults" / "a.trx").read_bytes() == trx
    assert got["evil"].path is None and "escapes" in (got["evil"].problem or "")
    assert not (tmp_path / "escaped.txt").exists() and not (dest / f"evil-{evil_id}").exists()
    assert got["link"].path is None and "symbolic link" in (got["link"].problem or "")
    assert got["old"].path is None and "expired" in (got["old"].problem or "")
    assert fake.requests_to("GET", rf"/projects/acme/shop/jobs/({old_id}|{lint_id})/artifacts") == []


def test_artifacts_over_the_caps_and_gone(fake: GitLabFake, tmp_path: Path) -> None:
    big = zip_bytes(("big.bin", b"\0" * 4000))
    pid = fake.add_pipeline("main", "a" * 40, "failed", [
        FakeJob("listed-big", "failed", artifacts=big), FakeJob("lying", "failed", artifacts=big),
        FakeJob("gone", "failed", artifacts=zip_bytes(("a.txt", b"a")))])
    listed_id, lying_id, gone_id = fake.job_ids(pid)
    fake.jobs[lying_id]["artifacts"][0]["size"] = 10  # the listing understates: the stream is capped
    del fake.archives[gone_id]  # erased between the listing and the download
    limits = Limits(max_archive_bytes=len(big) - 1)
    got = {a.name: a for a in make(fake, limits=limits).download_artifacts(pid, tmp_path)}
    assert all(a.path is None for a in got.values())
    assert "larger than" in (got["listed-big"].problem or "")
    assert "larger than" in (got["lying"].problem or "")
    assert "expired or erased" in (got["gone"].problem or "")
    assert fake.requests_to("GET", rf"/projects/acme/shop/jobs/{listed_id}/artifacts") == []


def test_pipeline_for_and_start_pipeline(fake: GitLabFake, origin: Path) -> None:
    sha = subprocess.run(["git", "--git-dir", str(origin), "rev-parse", FIX], capture_output=True,
                         text=True, check=True).stdout.strip()
    forge = make(fake)
    assert forge.pipeline_for(FIX, sha) is None
    older = fake.add_pipeline(FIX, sha, "failed", [])
    newer = fake.add_pipeline(FIX, sha, "running", [])
    fake.add_pipeline("main", sha, "success", [])
    assert forge.pipeline_for(FIX, sha) == newer != older
    started = forge.start_pipeline(FIX, {"CI_AGENT_ATTEMPT": "2"})
    assert fake.pipelines[started]["ref"] == FIX and fake.pipelines[started]["sha"] == sha
    assert fake.created_pipelines == [{"ref": FIX, "variables": [
        {"key": "CI_AGENT_ATTEMPT", "value": "2", "variable_type": "env_var"}]}]
    (created,) = fake.requests_to("POST", "/projects/acme/shop/pipeline")
    assert created.user == BOT_USER


# -- merge requests --------------------------------------------------------------------------

def test_open_change_request_is_idempotent_and_draft_is_the_title(fake: GitLabFake) -> None:
    first = make(fake).open_change_request(FIX, "main", "Fix the build", "body", draft=True)
    again = make(fake).open_change_request(FIX, "main", "Fix the build", "body", draft=True)  # next run
    assert first == again and len(fake.merge_requests) == 1
    mr = fake.merge_requests[first.number]
    assert mr["title"] == "Draft: Fix the build" and mr["draft"] is True and mr["description"] == "body"
    assert (first.source_branch, first.target_branch, first.draft, first.url) == (
        FIX, "main", True, mr["web_url"])
    assert make(fake).find_change_request("other") is None


def test_open_change_request_race_uses_the_other_jobs_one(fake: GitLabFake) -> None:
    theirs = make(fake, MAINT).open_change_request(FIX, "main", "Theirs", "", draft=False)
    fake.add_fault(Fault(Reply(200, []), path="/merge_requests$", method="GET"))  # our search missed it
    ours = make(fake).open_change_request(FIX, "main", "Ours", "")
    assert ours == theirs and len(fake.merge_requests) == 1
    posts = fake.requests_to("POST", "/projects/acme/shop/merge_requests")
    ours_posted = [r for r in posts if r.user == BOT_USER]
    assert len(ours_posted) == 1  # the 409 is not retried


def test_a_closed_merge_request_is_found_only_when_asked(fake: GitLabFake) -> None:
    forge = make(fake)
    closed = forge.open_change_request(FIX, "main", "Fix", "")
    fake.merge_requests[closed.number]["state"] = "closed"
    assert forge.find_change_request(FIX) is None
    assert forge.find_change_request(FIX, include_closed=True) == dataclasses.replace(closed, state="closed")
    reopened = forge.open_change_request(FIX, "main", "Fix again", "")  # a new one, the closed one left alone
    assert reopened.number != closed.number
    assert forge.find_change_request(FIX, include_closed=True) == reopened


def test_a_missing_source_branch_is_refused(fake: GitLabFake) -> None:
    with pytest.raises(ForgeError, match=r'refused to create merge requests \(400 Source branch "nope"'):
        make(fake).open_change_request("nope", "main", "t", "b")


def test_update_change_request_title_body_and_draft(fake: GitLabFake) -> None:
    forge = make(fake)
    number = forge.open_change_request(FIX, "main", "Fix", "one").number
    ready = forge.update_change_request(number, draft=False)
    assert ready.draft is False and fake.merge_requests[number]["title"] == "Fix"
    renamed = forge.update_change_request(number, title="Fix (attempt 2)", body="two")
    assert renamed.draft is False and fake.merge_requests[number]["description"] == "two"
    again = forge.update_change_request(number, title="Draft: Fix (attempt 3)", draft=True)
    assert again.draft and fake.merge_requests[number]["title"] == "Draft: Fix (attempt 3)"  # one prefix
    puts = len(fake.requests_to("PUT", rf"/projects/acme/shop/merge_requests/{number}"))
    forge.update_change_request(number, body="two", draft=True)  # nothing changes: no write
    assert len(fake.requests_to("PUT", rf"/projects/acme/shop/merge_requests/{number}")) == puts


# -- notes -----------------------------------------------------------------------------------

def test_status_comment_is_written_only_when_it_changes(fake: GitLabFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "Fix", "").number
    make(fake).upsert_status_comment(number, {"attempt": 1}, "Attempt 1 failed.")
    make(fake).upsert_status_comment(number, {"attempt": 2}, "Attempt 2 failed.")
    assert parse_marker(fake.notes[number][0]["body"]) == {"attempt": 2}
    writes = len(fake.requests_to("PUT", r"/projects/acme/shop/merge_requests/\d+/notes/\d+"))
    make(fake).upsert_status_comment(number, {"attempt": 2}, "Attempt 2 failed.")  # unchanged: no write
    assert len(fake.requests_to("PUT", r"/projects/acme/shop/merge_requests/\d+/notes/\d+")) == writes


def test_system_notes_are_never_ours_nor_listed(fake: GitLabFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "Fix", "").number
    fake.add_note(number, '<!-- ci-agent:v1 {"attempt":8} -->\nsystem', BOT_USER, system=True)
    assert make(fake).read_status_state(number) is None
    make(fake).upsert_status_comment(number, {"attempt": 1}, "ours")
    assert [n["author"]["username"] for n in fake.notes[number]] == [BOT_USER, BOT_USER]
    assert len(make(fake).list_comments(number)) == 1


def test_oldest_status_note_wins_beyond_the_first_page(fake: GitLabFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "Fix", "").number
    for i in range(5):
        fake.add_note(number, f"chatter {i}", "maint")
    oldest = fake.add_note(number, '<!-- ci-agent:v1 {"attempt":1} -->\nold', BOT_USER)
    fake.add_note(number, '<!-- ci-agent:v1 {"attempt":2} -->\nrace', BOT_USER)
    forge = make(fake, per_page=2)
    assert forge.read_status_state(number) == {"attempt": 1}
    assert forge.upsert_status_comment(number, {"attempt": 3}, "new").id == oldest
    assert all(r.query.get("sort") == "asc" for r in fake.requests_to("GET", r".*/notes"))


def test_reactions_are_named_as_gitlab_names_them(fake: GitLabFake) -> None:
    forge = make(fake)
    number = forge.open_change_request(FIX, "main", "Fix", "").number
    asked = fake.add_note(number, "/ci-agent retry", "maint")
    forge.add_reaction(number, asked, "+1")
    assert fake.award_emoji == [(number, asked, "thumbsup", BOT_USER)]
    assert forge.post_comment(number, "I give up.").author_is_bot  # a project access token's user
    with pytest.raises(ForgeError, match="404"):
        forge.add_reaction(number, 123456)


# -- people, branches ------------------------------------------------------------------------

def test_own_login_by_token_kind(fake: GitLabFake) -> None:
    assert make(fake, MAINT).own_login() == "maint"
    assert len(fake.requests_to("GET", "/user")) == 1
    assert make(fake, JOB).own_login() == JOB_TOKEN_LOGIN
    assert make(fake, JOB, own_login="maint").own_login() == "maint"
    assert len(fake.requests_to("GET", "/user")) == 1  # a job token has no /user to ask


@pytest.mark.parametrize(("level", "expected"), [
    (5, Permission.READ), (10, Permission.READ), (15, Permission.READ), (20, Permission.TRIAGE),
    (30, Permission.WRITE), (40, Permission.MAINTAIN), (50, Permission.ADMIN)])
def test_permission_by_access_level(fake: GitLabFake, level: int, expected: Permission) -> None:
    fake.add_user("alice", level)
    fake.add_user("alice2", 50)  # the member search is a substring search: only the exact name counts
    assert make(fake).permission("Alice") is expected


def test_access_levels_beyond_the_roles(fake: GitLabFake) -> None:
    fake.add_user("outsider", None)  # a user, but not a member
    assert make(fake).permission("outsider") is Permission.NONE
    assert access_permission(None) is Permission.NONE and access_permission(60) is Permission.ADMIN


def test_default_branch_and_protection(fake: GitLabFake) -> None:
    fake.default_branch = "trunk"
    fake.protected_branches = ["trunk", "release/*", "*-stable"]
    forge = make(fake, project="42")
    assert forge.default_branch() == "trunk"
    assert [forge.protected(b) for b in ("trunk", "release/1.2/hotfix", "2-stable", FIX, "release")] == [
        True, True, True, False, False]
    assert all(r.path.startswith("/api/v4/projects/42") for r in fake.requests)


# -- the fake itself (what the scenario tests rely on) ----------------------------------------

def test_fake_paginates_as_gitlab_and_records_unknown_routes(origin: Path) -> None:
    with GitLabFake(origin) as server:
        for i in range(3):
            server.add_note(1, f"n{i}", "maint")
        server.merge_requests[1] = {"iid": 1}
        gl = gitlab.Gitlab(server.url, private_token=MAINT)
        response = gl.http_get("/projects/acme%2Fshop/merge_requests/1/notes", query_data={"per_page": 2},
                               raw=True, streamed=True)
        assert not isinstance(response, dict)
        headers = response.headers
        assert (headers["X-Page"], headers["X-Per-Page"], headers["X-Next-Page"], headers["X-Total"],
                headers["X-Total-Pages"]) == ("1", "2", "2", "3", "2")
        assert 'rel="next"' in headers["Link"] and 'rel="last"' in headers["Link"]
        with pytest.raises(gitlab.GitlabHttpError):
            gl.http_get("/projects/42/wikis")
        assert server.failures == ["unexpected request GET /api/v4/projects/42/wikis"]
        with pytest.raises(gitlab.GitlabAuthenticationError):
            gitlab.Gitlab(server.url, job_token=JOB).auth()  # a job token has no /user
