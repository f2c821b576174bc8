"""`GitHubForge` through real PyGithub against the loopback GitHub fake (DESIGN.md §5).

Expected values come from the fake's state (what "GitHub" holds) and the REST docs' shapes,
never from our own output. No sleeping: the forge's `sleep` is a list append, so the waits it
chose are read back, and retries are counted as requests the fake received.
"""

from __future__ import annotations

import io
import stat
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from github import Auth, Github

from ci_agent.engine.forge import (
    CommandForge,
    Comment,
    Forge,
    Limits,
    Permission,
    parse_marker,
    render_marker,
)
from ci_agent.errors import ExitCode, ForgeError
from ci_agent.platforms.github.forge import ACTIONS_BOT, GitHubForge
from ci_agent.platforms.github.http import asked_wait, sentence
from tests.fakes.github_fake import (
    GitHubFake,
    Reply,
    error,
    forbidden,
    rate_limited_403,
    rate_limited_429,
    server_error,
)

FIX = "ci-agent/fix/main"
ACTIONS_TOKEN = "ghs_fake_actions"
USER_TOKEN = "ghp_fake_user"


@pytest.fixture
def fake() -> Iterator[GitHubFake]:
    with GitHubFake() as server:
        server.branches[FIX] = False
        yield server
    assert server.failures == []


def make(fake: GitHubFake, token: str = ACTIONS_TOKEN, **kwargs: Any) -> GitHubForge:
    kwargs.setdefault("sleep", lambda seconds: None)
    return GitHubForge("octo/app", token, base_url=fake.base_url, throttle=False, **kwargs)


def zip_bytes(*members: tuple[str, bytes], symlink: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members:
            archive.writestr(name, data)
        if symlink is not None:
            info = zipfile.ZipInfo(symlink)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buf.getvalue()


def test_it_is_a_forge(fake: GitHubFake) -> None:
    assert isinstance(make(fake), Forge)


# -- runs, logs, artifacts -------------------------------------------------------------------

def test_failed_jobs_across_pages(fake: GitHubFake) -> None:
    ids = fake.add_run(7, [("build", "failure"), ("lint", "success"), ("test", "timed_out"),
                           ("docs", "skipped"), ("pack", "failure")])
    jobs = make(fake, per_page=2).failed_jobs(7)
    assert [(j.id, j.name, j.conclusion) for j in jobs] == [
        (ids[0], "build", "failure"), (ids[2], "test", "timed_out"), (ids[4], "pack", "failure")]
    pages = fake.requests_to("GET", "/repos/octo/app/actions/runs/7/jobs")
    assert [r.query.get("page") for r in pages] == [None, "2", "3"]
    assert all(r.query["filter"] == "latest" for r in pages)


def test_job_log_follows_the_redirect_without_our_token(fake: GitHubFake, tmp_path: Path) -> None:
    (job_id,) = fake.add_run(7, [("build / windows", "failure")])
    log = make(fake).download_job_log(job_id, tmp_path / "logs")
    assert log.name == "build / windows" and not log.truncated
    assert log.text_path.parent == tmp_path / "logs"
    assert log.text_path.read_bytes() == fake.logs[job_id]
    (api,) = fake.requests_to("GET", f"/repos/octo/app/actions/jobs/{job_id}/logs")
    (storage,) = [r for r in fake.requests if r.server == "storage"]
    assert api.headers["authorization"] == f"token {ACTIONS_TOKEN}"
    assert "authorization" not in storage.headers  # the short-lived URL needs no token: never leak it


def test_expired_storage_link_asks_the_api_again(fake: GitHubFake, tmp_path: Path) -> None:
    (job_id,) = fake.add_run(7, [("build", "failure")])
    fake.expired_storage_links = 1
    log = make(fake).download_job_log(job_id, tmp_path)
    assert log.text_path.read_bytes() == fake.logs[job_id]
    assert len(fake.requests_to("GET", f"/repos/octo/app/actions/jobs/{job_id}/logs")) == 2


def test_a_retried_listing_still_lists_everything(fake: GitHubFake) -> None:
    fake.add_run(7, [(f"job{i}", "failure") for i in range(5)])
    fake.inject(server_error(502), path="/jobs$", times=1)
    jobs = make(fake, per_page=2).failed_jobs(7)
    assert [j.name for j in jobs] == [f"job{i}" for i in range(5)]


def test_a_download_without_redirect_is_a_clear_error(fake: GitHubFake, tmp_path: Path) -> None:
    (job_id,) = fake.add_run(7, [("build", "failure")])
    fake.inject(Reply(200, {}), path="/logs$")
    with pytest.raises(ForgeError, match="no Location header"):
        make(fake).download_job_log(job_id, tmp_path)


def test_job_log_is_capped(fake: GitHubFake, tmp_path: Path) -> None:
    (job_id,) = fake.add_run(7, [("build", "failure")])
    fake.logs[job_id] = b"x" * 5000
    log = make(fake, limits=Limits(max_log_bytes=1000)).download_job_log(job_id, tmp_path)
    assert log.truncated and log.text_path.stat().st_size == 1000


def test_artifacts_extracted_and_hostile_ones_refused(fake: GitHubFake, tmp_path: Path) -> None:
    trx = b"<TestRun/>"
    fake.add_run(7, [("test", "failure")], [
        ("test-results", zip_bytes(("TestResults/a.trx", trx))),
        ("evil", zip_bytes(("ok.txt", b"fine"), ("../escaped.txt", b"pwned"))),
        ("link", zip_bytes(symlink="passwd")),
        ("old", zip_bytes(("a.txt", b"a"))),
    ], expired=("old",))
    dest = tmp_path / "artifacts"
    got = {a.name: a for a in make(fake).download_artifacts(7, dest)}
    assert got["test-results"].path == dest / "test-results"
    assert (dest / "test-results" / "TestResults" / "a.trx").read_bytes() == trx
    assert got["evil"].path is None and "escapes" in (got["evil"].problem or "")
    assert not (tmp_path / "escaped.txt").exists() and not (dest / "escaped.txt").exists()
    assert not (dest / "evil").exists()  # refused whole: not even ok.txt
    assert got["link"].path is None and "symbolic link" in (got["link"].problem or "")
    assert got["old"].path is None and "expired" in (got["old"].problem or "")
    # the expired one is never fetched
    assert len(fake.requests_to("GET", r"/repos/octo/app/actions/artifacts/\d+/zip")) == 3


def test_artifact_over_the_size_caps(fake: GitHubFake, tmp_path: Path) -> None:
    fake.add_run(7, [], [("big", zip_bytes(("a.txt", b"a" * 4000)))])
    (art,) = make(fake, limits=Limits(max_archive_bytes=100)).download_artifacts(7, tmp_path)
    assert art.path is None and "larger than 100 bytes" in (art.problem or "")
    (art,) = make(fake, limits=Limits(max_extracted_bytes=1000)).download_artifacts(7, tmp_path)
    assert art.path is None and "uncompressed" in (art.problem or "")


# -- change requests -------------------------------------------------------------------------

def test_open_change_request_is_idempotent_across_runs(fake: GitHubFake) -> None:
    first = make(fake).open_change_request(FIX, "main", "Fix the build", "why", draft=True)
    second = make(fake).open_change_request(FIX, "main", "Fix the build", "why", draft=True)
    assert first == second
    assert len(fake.requests_to("POST", "/repos/octo/app/pulls")) == 1
    pull = fake.pulls[first.number]
    assert (first.source_branch, first.target_branch, first.draft) == (pull["head"], pull["base"], True)
    assert first.url == f"https://github.com/octo/app/pull/{first.number}"
    assert make(fake).find_change_request(FIX) == first
    assert make(fake).find_change_request("other") is None


def test_open_change_request_race_uses_the_other_jobs_one(fake: GitHubFake) -> None:
    existing = make(fake).open_change_request(FIX, "main", "t", "b")
    # Our search runs before the other job's create lands: it sees nothing, the create gets 422.
    fake.inject(Reply(200, []), path="/pulls$", method="GET")
    again = make(fake).open_change_request(FIX, "main", "t", "b")
    assert again == existing
    assert len(fake.requests_to("POST", "/repos/octo/app/pulls")) == 2


def test_update_change_request_title_body_and_draft(fake: GitHubFake) -> None:
    forge = make(fake)
    opened = forge.open_change_request(FIX, "main", "t", "b", draft=True)
    ready = forge.update_change_request(opened.number, title="T2", body="B2", draft=False)
    assert ready.draft is False and fake.pulls[opened.number]["draft"] is False
    assert (fake.pulls[opened.number]["title"], fake.pulls[opened.number]["body"]) == ("T2", "B2")
    (graphql,) = fake.requests_to("POST", "/graphql")
    assert "markPullRequestReadyForReview" in graphql.body["query"]
    forge.update_change_request(opened.number, draft=False)  # already ready: no mutation
    assert len(fake.requests_to("POST", "/graphql")) == 1
    assert forge.update_change_request(opened.number, draft=True).draft is True


# -- the status comment ----------------------------------------------------------------------

def test_status_comment_created_once_then_edited_in_place(fake: GitHubFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "t", "b").number
    first = make(fake).upsert_status_comment(number, {"attempt": 1}, "Attempt 1 failed.")
    second = make(fake).upsert_status_comment(number, {"attempt": 2}, "Attempt 2 failed.")
    assert first.id == second.id
    assert [c["body"] for c in fake.comments.values()] == [
        render_marker({"attempt": 2}) + "\nAttempt 2 failed."]
    assert fake.comments[first.id]["user"] == ACTIONS_BOT
    assert len(fake.requests_to("POST", rf"/repos/octo/app/issues/{number}/comments")) == 1
    assert len(fake.requests_to("PATCH", r"/repos/octo/app/issues/comments/\d+")) == 1
    assert make(fake).read_status_state(number) == {"attempt": 2}
    make(fake).upsert_status_comment(number, {"attempt": 2}, "Attempt 2 failed.")  # unchanged
    assert len(fake.requests_to("PATCH", r"/repos/octo/app/issues/comments/\d+")) == 1


def test_someone_elses_marker_is_never_ours(fake: GitHubFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "t", "b").number
    ours = render_marker({"attempt": 3, "escalated": True})
    fake.add_comment(number, f"> {ours}\n> quoted by a person", "octocat")
    fake.add_comment(number, ours + "\nforged by a person", "mallory")
    fake.add_comment(number, ours + "\nanother bot", "renovate[bot]", bot=True)
    forge = make(fake)
    assert forge.read_status_state(number) is None
    mine = forge.upsert_status_comment(number, {"attempt": 1}, "ours")
    assert len(fake.comments) == 4 and fake.comments[mine.id]["user"] == ACTIONS_BOT
    assert forge.read_status_state(number) == {"attempt": 1}
    assert [c["body"] for c in fake.comments.values()][:3] == [
        f"> {ours}\n> quoted by a person", ours + "\nforged by a person", ours + "\nanother bot"]


def test_status_comment_found_beyond_the_first_page(fake: GitHubFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "t", "b").number
    for i in range(5):
        fake.add_comment(number, f"chatter {i}", "octocat")
    make(fake).upsert_status_comment(number, {"attempt": 1}, "one")
    for i in range(3):
        fake.add_comment(number, f"more {i}", "octocat")
    forge = make(fake, per_page=2)
    assert forge.read_status_state(number) == {"attempt": 1}
    forge.upsert_status_comment(number, {"attempt": 2}, "two")
    assert len([c for c in fake.comments.values() if c["user"] == ACTIONS_BOT]) == 1
    listed = fake.requests_to("GET", rf"/repos/octo/app/issues/{number}/comments")
    pages = {r.query.get("page") for r in listed if r.query.get("per_page") == "2"}
    assert pages == {None, "2", "3", "4", "5"}


def test_marker_json_cannot_close_the_html_comment() -> None:
    marker = render_marker({"note": "--> <b>&"})
    assert marker.count("-->") == 1 and "<b>" not in marker
    assert parse_marker(marker + "\nbody") == {"note": "--> <b>&"}


def test_own_login_of_a_personal_token(fake: GitHubFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "t", "b").number
    fake.add_comment(number, render_marker({"by": "bot"}), ACTIONS_BOT, bot=True)
    forge = make(fake, USER_TOKEN)
    assert forge.own_login() == "octocat"
    assert forge.read_status_state(number) is None  # the bot's comment is not the PAT user's
    assert make(fake, own_login=ACTIONS_BOT).read_status_state(number) == {"by": "bot"}


# -- labels, reactions, permission, dispatch, branches ---------------------------------------

def test_labels_added_and_removed_idempotently(fake: GitHubFake) -> None:
    forge = make(fake)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    forge.add_labels(number, ["ci-agent", "ci-agent:escalated"])
    forge.add_labels(number, ["ci-agent"])
    assert fake.pulls[number]["labels"] == ["ci-agent", "ci-agent:escalated"]
    assert forge.find_change_request(FIX).labels == ("ci-agent", "ci-agent:escalated")  # type: ignore[union-attr]
    forge.remove_label(number, "ci-agent:escalated")
    forge.remove_label(number, "ci-agent:escalated")  # GitHub answers 404: already gone
    assert fake.pulls[number]["labels"] == ["ci-agent"]
    (delete, _) = fake.requests_to("DELETE", r".*/labels/.*")
    assert delete.path.endswith("/labels/ci-agent:escalated")


def test_reaction_on_a_comment(fake: GitHubFake) -> None:
    forge = make(fake)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    comment_id = fake.add_comment(number, "/ci-agent fix", "octocat")
    forge.add_reaction(number, comment_id, "eyes")
    forge.add_reaction(number, comment_id, "eyes")
    assert fake.reactions == [(comment_id, "eyes", ACTIONS_BOT)]
    with pytest.raises(ForgeError, match="422"):
        forge.add_reaction(number, comment_id, "thumbs")


def test_post_comment_writes_as_the_token_account(fake: GitHubFake) -> None:
    forge = make(fake)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    posted = forge.post_comment(number, "escalated")
    assert posted.author == ACTIONS_BOT and posted.body == "escalated"
    assert [c.id for c in forge.list_comments(number)] == [posted.id]


@pytest.mark.parametrize(("role", "expected"), [
    ("admin", Permission.ADMIN), ("maintain", Permission.MAINTAIN), ("write", Permission.WRITE),
    ("triage", Permission.TRIAGE), ("read", Permission.READ), ("none", Permission.NONE),
    ("custom-reviewer", Permission.NONE),  # a custom role: the legacy field says "custom-reviewer" too
])
def test_permission_by_role(fake: GitHubFake, role: str, expected: Permission) -> None:
    fake.collaborators["dev"] = role
    assert make(fake).permission("dev") is expected


def test_permission_of_an_unknown_user_is_none(fake: GitHubFake) -> None:
    assert make(fake).permission("ghost") is Permission.NONE
    assert make(fake).permission("octocat") >= Permission.WRITE


def test_dispatch_workflow(fake: GitHubFake) -> None:
    fake.add_workflow("ci.yml", dispatchable=True)
    fake.add_workflow("push-only.yml", dispatchable=False)
    forge = make(fake)
    assert forge.dispatch_workflow("ci.yml", FIX, {"reason": "ci-agent"}) is True
    assert fake.dispatches == [{"workflow": "ci.yml", "ref": FIX, "inputs": {"reason": "ci-agent"}}]
    assert forge.dispatch_workflow("push-only.yml", FIX, {}) is False
    with pytest.raises(ForgeError, match="404"):
        forge.dispatch_workflow("missing.yml", FIX, {})


def test_default_branch_and_protection(fake: GitHubFake) -> None:
    fake.default_branch = "trunk"
    forge = make(fake)
    assert forge.default_branch() == "trunk"
    assert forge.protected("main") is True
    assert forge.protected(FIX) is False
    assert forge.protected("does-not-exist") is False


# -- errors and retries ----------------------------------------------------------------------

def test_bad_token_is_one_sentence_and_exit_5(fake: GitHubFake) -> None:
    with pytest.raises(ForgeError) as caught:
        make(fake, "ghp_wrong").default_branch()
    message = str(caught.value)
    assert "401" in message and "Bad credentials" in message and "token" in message
    assert caught.value.exit_code is ExitCode.EXTERNAL_SERVICE
    assert len(fake.requests) == 1  # not retried


def test_403_names_the_missing_permission(fake: GitHubFake) -> None:
    forge = make(fake)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    fake.inject(forbidden("pull_requests=write"), path="/comments$", method="POST")
    with pytest.raises(ForgeError, match="grant `pull-requests: write`"):
        forge.upsert_status_comment(number, {"a": 1}, "x")
    # Without GitHub's header, our own note of what the call needs.
    fake.inject(error(403, "Resource not accessible by integration"), path="/dispatches$")
    fake.add_workflow("ci.yml")
    with pytest.raises(ForgeError, match="grant `actions: write`"):
        forge.dispatch_workflow("ci.yml", FIX, {})


def test_404_and_422_mapped(fake: GitHubFake) -> None:
    forge = make(fake)
    with pytest.raises(ForgeError, match=r"found nothing to list the jobs of run 99 \(404"):
        forge.failed_jobs(99)
    with pytest.raises(ForgeError, match=r"refused to open a pull .*\(422 Validation Failed: invalid"):
        forge.open_change_request("no-such-branch", "main", "t", "b")


def test_429_waits_as_asked_then_succeeds(fake: GitHubFake) -> None:
    waits: list[float] = []
    fake.inject(rate_limited_429("3"), path="/branches/", times=2)
    assert make(fake, sleep=waits.append).protected("main") is True
    assert waits == [3.0, 3.0]
    assert len(fake.requests_to("GET", "/repos/octo/app/branches/main")) == 3


def test_403_rate_limit_waits_until_the_reset(fake: GitHubFake) -> None:
    waits: list[float] = []
    reset = int(time.time()) + 30
    fake.inject(rate_limited_403(reset), path="/branches/")
    assert make(fake, sleep=waits.append).protected("main") is True
    assert len(waits) == 1 and 25 <= waits[0] <= 32


def test_rate_limit_reset_beyond_the_budget_stops_at_once(fake: GitHubFake) -> None:
    waits: list[float] = []
    reset = int(time.time()) + 3600
    fake.inject(rate_limited_403(reset), path="/branches/", times=5)
    with pytest.raises(ForgeError, match=r"rate-limiting us.*after 1 attempt to.*resets at") as caught:
        make(fake, sleep=waits.append, max_total_wait_s=60).protected("main")
    assert waits == [] and caught.value.exit_code is ExitCode.EXTERNAL_SERVICE
    assert time.strftime("%H:%M:%S", time.gmtime(reset)) in str(caught.value)


def test_5xx_retried_then_given_up(fake: GitHubFake) -> None:
    waits: list[float] = []
    fake.inject(server_error(502), path="/branches/", times=2)
    assert make(fake, sleep=waits.append).protected("main") is True
    assert len(waits) == 2 and len(fake.requests_to("GET", "/repos/octo/app/branches/main")) == 3
    fake.inject(server_error(503), path="/branches/", times=10)
    with pytest.raises(ForgeError, match=r"kept failing \(503.*after 3 attempts"):
        make(fake, max_attempts=3).protected("main")
    assert len(fake.requests_to("GET", "/repos/octo/app/branches/main")) == 6


def test_unreachable_github(tmp_path: Path) -> None:
    with GitHubFake() as gone:
        url = gone.base_url
    forge = GitHubForge("octo/app", ACTIONS_TOKEN, base_url=url, throttle=False, max_attempts=2,
                        sleep=lambda s: None)
    with pytest.raises(ForgeError, match=r"Could not reach GitHub .* after 2 attempts"):
        forge.default_branch()


def test_github_http_conventions() -> None:
    assert asked_wait({"retry-after": "7"}) == 7.0
    assert asked_wait({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000"}, now=990.0) == 11.0
    assert asked_wait({"x-ratelimit-remaining": "12", "x-ratelimit-reset": "1000"}, now=990.0) is None
    assert asked_wait({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None  # GitHub sends seconds
    text = sentence(403, {"x-accepted-github-permissions": "repository_projects=write; "
                          "organization_projects=admin"}, {"message": "Forbidden"}, "list",
                    "contents: read", 1, rate_limited=False)
    assert "`repository-projects: write or organization-projects: admin`" in text


def test_fake_serves_a_pull_request_as_an_issue(fake: GitHubFake) -> None:
    """Older PyGithub fetched the issue before listing its comments; GitHub answers that too."""
    number = make(fake).open_change_request(FIX, "main", "Fix", "b").number
    client = Github(base_url=fake.base_url, auth=Auth.Token(ACTIONS_TOKEN), seconds_between_requests=None)
    issue = client.get_repo("octo/app").get_issue(number)
    assert (issue.title, issue.pull_request is not None) == ("Fix", True)


# -- slash commands (CommandForge) -----------------------------------------------------------

def test_it_is_a_command_forge(fake: GitHubFake) -> None:
    assert isinstance(make(fake), CommandForge)


def test_get_change_request_of_a_same_repository_pull_request(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x", sha="d" * 40, draft=True)
    found = make(fake).get_change_request(number)
    assert (found.number, found.source_branch, found.target_branch) == (number, "feature/x", "main")
    assert (found.head_sha, found.fork, found.state, found.draft) == ("d" * 40, False, "open", True)


def test_a_fork_pull_request_is_a_fork_even_with_a_branch_name_like_ours(fake: GitHubFake) -> None:
    """`head.repo.full_name` differs from `base.repo.full_name`: the branch name proves nothing."""
    number = fake.add_pull("main", head_repo="mallory/app")
    found = make(fake).get_change_request(number)
    assert found.fork is True and found.source_branch == "main"


def test_a_pull_request_whose_head_repository_was_deleted_counts_as_a_fork(fake: GitHubFake) -> None:
    number = fake.add_pull("gone", head_repo=None)
    assert make(fake).get_change_request(number).fork is True


def test_merged_and_closed_states(fake: GitHubFake) -> None:
    merged = fake.add_pull("done", merged=True)
    closed = fake.add_pull("dropped", state="closed")
    forge = make(fake)
    assert forge.get_change_request(merged).state == "merged"
    assert forge.get_change_request(closed).state == "closed"
    # Found through the list endpoint (no `merged` key there): still merged, and no extra GET.
    fake.pulls[merged]["head"] = FIX
    single = rf"/repos/octo/app/pulls/{merged}"
    before = len(fake.requests_to("GET", single))
    assert forge.find_change_request(FIX, include_closed=True).state == "merged"  # type: ignore[union-attr]
    assert len(fake.requests_to("GET", single)) == before


def test_find_change_request_fills_head_sha_and_fork(fake: GitHubFake) -> None:
    opened = make(fake).open_change_request(FIX, "main", "t", "b")
    assert (opened.head_sha, opened.fork, opened.state) == ("b" * 40, False, "open")


def test_get_change_request_that_does_not_exist_is_a_forge_error(fake: GitHubFake) -> None:
    with pytest.raises(ForgeError, match="404"):
        make(fake).get_change_request(404)


def test_get_comment_reads_the_current_body(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    comment_id = fake.add_comment(number, "/ci-agent fix", "octocat", created_at="2026-03-04T05:06:07Z")
    fake.comments[comment_id]["body"] = "/ci-agent explain"  # edited after the event was sent
    got = make(fake).get_comment(number, comment_id)
    assert got == Comment(comment_id, "/ci-agent explain", "octocat", False, "2026-03-04T05:06:07Z", False)
    assert fake.requests_to("GET", rf"/repos/octo/app/issues/comments/{comment_id}")


def test_get_review_comment_uses_the_pulls_route(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    comment_id = fake.add_review_comment(number, "/ci-agent fix here", "dependabot[bot]", bot=True,
                                         created_at="2026-03-04T05:06:07Z")
    got = make(fake).get_comment(number, comment_id, review=True)
    assert got == Comment(comment_id, "/ci-agent fix here", "dependabot[bot]", True,
                          "2026-03-04T05:06:07Z", True)
    assert fake.requests_to("GET", rf"/repos/octo/app/pulls/comments/{comment_id}")
    # The same id is no issue comment: the two kinds do not share ids on GitHub.
    assert make(fake).get_comment(number, comment_id) is None


def test_a_deleted_comment_is_none(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    comment_id = fake.add_comment(number, "/ci-agent fix", "octocat")
    del fake.comments[comment_id]
    assert make(fake).get_comment(number, comment_id) is None


def test_a_comment_of_another_pull_request_is_none(fake: GitHubFake) -> None:
    """The event said #a; the comment lives on #b: trust neither, act on nothing."""
    a, b = fake.add_pull("a"), fake.add_pull("b")
    comment_id = fake.add_comment(b, "/ci-agent fix", "octocat")
    review_id = fake.add_review_comment(b, "/ci-agent fix", "octocat")
    forge = make(fake)
    assert forge.get_comment(a, comment_id) is None
    assert forge.get_comment(a, review_id, review=True) is None
    assert forge.get_comment(b, comment_id) is not None


def test_list_comments_carry_created_at(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    fake.add_comment(number, "hello", "octocat", created_at="2026-05-06T07:08:09Z")
    (comment,) = make(fake).list_comments(number)
    assert comment.created_at == "2026-05-06T07:08:09Z" and comment.review is False


def test_claim_is_true_once_201_then_false_200(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    comment_id = fake.add_comment(number, "/ci-agent fix", "octocat")
    assert make(fake).claim(number, comment_id) is True
    assert make(fake).claim(number, comment_id) is False  # a second delivery: another run
    assert fake.reactions == [(comment_id, "eyes", ACTIONS_BOT)]
    posts = fake.requests_to("POST", rf"/repos/octo/app/issues/comments/{comment_id}/reactions")
    assert [p.body for p in posts] == [{"content": "eyes"}] * 2


def test_claim_of_a_review_comment_reacts_on_the_pulls_route(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    comment_id = fake.add_review_comment(number, "/ci-agent fix", "octocat")
    forge = make(fake)
    assert forge.claim(number, comment_id, review=True) is True
    assert forge.claim(number, comment_id, review=True) is False
    assert fake.review_reactions == [(comment_id, "eyes", ACTIONS_BOT)] and fake.reactions == []


def test_claim_by_another_account_does_not_count_as_ours(fake: GitHubFake) -> None:
    """GitHub's 200 means "you already reacted so"; a person's 👀 leaves ours to be created."""
    number = fake.add_pull("feature/x")
    comment_id = fake.add_comment(number, "/ci-agent fix", "octocat")
    assert make(fake, USER_TOKEN).claim(number, comment_id) is True
    assert make(fake).claim(number, comment_id) is True


def test_claim_retries_a_server_error_and_reports_a_refusal(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    comment_id = fake.add_comment(number, "/ci-agent fix", "octocat")
    fake.inject(server_error(502), path="/reactions$", method="POST")
    assert make(fake).claim(number, comment_id) is True
    other = fake.add_comment(number, "/ci-agent fix", "octocat")
    fake.inject(forbidden("pull_requests=write"), path="/reactions$", method="POST")
    with pytest.raises(ForgeError, match="pull-requests: write"):
        make(fake).claim(number, other)


def test_claim_of_a_deleted_comment_is_a_forge_error(fake: GitHubFake) -> None:
    number = fake.add_pull("feature/x")
    with pytest.raises(ForgeError, match="404"):
        make(fake).claim(number, 123456)


def test_latest_failed_run_picks_the_newest_failure_of_branch_and_sha(fake: GitHubFake) -> None:
    sha = "e" * 40
    fake.add_run(11, [("test", "failure")], branch="feature/x", sha=sha, created_at="2026-01-01T10:00:00Z")
    fake.add_run(12, [("test", "failure")], branch="feature/x", sha=sha, created_at="2026-01-01T12:00:00Z")
    fake.add_run(13, [("test", "success")], branch="feature/x", sha=sha, conclusion="success",
                 created_at="2026-01-01T13:00:00Z")
    fake.add_run(14, [("test", "failure")], branch="feature/x", sha="f" * 40,
                 created_at="2026-01-01T14:00:00Z")
    fake.add_run(15, [("test", "failure")], branch="other", sha=sha, created_at="2026-01-01T15:00:00Z")
    assert make(fake).latest_failed_run("feature/x", sha) == 12
    (listed,) = fake.requests_to("GET", "/repos/octo/app/actions/runs")
    assert {k: listed.query[k] for k in ("branch", "head_sha", "status")} == {
        "branch": "feature/x", "head_sha": sha, "status": "failure"}


def test_latest_failed_run_none_when_nothing_failed(fake: GitHubFake) -> None:
    fake.add_run(21, [("test", "success")], branch="feature/x", sha="e" * 40, conclusion="success")
    assert make(fake).latest_failed_run("feature/x", "e" * 40) is None


def test_latest_failed_run_needs_actions_read(fake: GitHubFake) -> None:
    fake.inject(forbidden("actions=read"), path="/actions/runs$", method="GET")
    with pytest.raises(ForgeError, match="actions: read"):
        make(fake).latest_failed_run("feature/x", "e" * 40)


def test_an_app_installation_token_knows_its_bot_and_keeps_one_status_comment(fake: GitHubFake) -> None:
    """GitHub refuses `GET /user` to App installation tokens: the bot's login comes from GraphQL's
    `viewer`, so a second run finds the status comment the first one wrote (not GITHUB_TOKEN's
    bot, which would make every run post a new one)."""
    fake.tokens["ghs_app_installation"] = "ci-agent-app[bot]"
    fake.integration_logins.add("ci-agent-app[bot]")
    first = make(fake, "ghs_app_installation")
    number = first.open_change_request(FIX, "main", "t", "b").number
    assert first.own_login() == "ci-agent-app[bot]"
    first.upsert_status_comment(number, {"v": 1, "run": 1}, "first")

    second = make(fake, "ghs_app_installation")
    second.upsert_status_comment(number, {"v": 1, "run": 2}, "second")

    ours = [c for c in fake.comments.values() if c["number"] == number]
    assert len(ours) == 1 and ours[0]["user"] == "ci-agent-app[bot]" and ours[0]["body"].endswith("second")
    assert second.read_status_state(number) == {"v": 1, "run": 2}
