"""`GitHubForge` through real PyGithub against the loopback GitHub fake (DESIGN.md §5).

Expected values come from the fake's state (what "GitHub" holds) and the REST docs' shapes,
never from our own output. No sleeping: the forge's `sleep` is a list append, so the waits it
chose are read back, and retries are counted as requests the fake received.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.engine.forge import (
    Comment,
    Limits,
    Permission,
    parse_marker,
    render_marker,
)
from ci_agent.errors import ForgeError
from ci_agent.platforms.github.forge import ACTIONS_BOT
from tests.fakes.github_fake import (
    GitHubFake,
    Reply,
    forbidden,
    server_error,
)
from tests.forge.forges import FIX, zip_bytes
from tests.forge.forges import GITHUB_ACTIONS_TOKEN as ACTIONS_TOKEN
from tests.forge.forges import github_forge as make

USER_TOKEN = "ghp_fake_user"


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

def test_a_second_open_creates_nothing_and_the_url_is_githubs(fake: GitHubFake) -> None:
    first = make(fake).open_change_request(FIX, "main", "Fix the build", "why", draft=True)
    assert make(fake).open_change_request(FIX, "main", "Fix the build", "why", draft=True) == first
    assert len(fake.requests_to("POST", "/repos/octo/app/pulls")) == 1
    assert first.url == f"https://github.com/octo/app/pull/{first.number}"


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

def test_status_comment_is_written_only_when_it_changes(fake: GitHubFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "t", "b").number
    first = make(fake).upsert_status_comment(number, {"attempt": 1}, "Attempt 1 failed.")
    make(fake).upsert_status_comment(number, {"attempt": 2}, "Attempt 2 failed.")
    assert fake.comments[first.id]["user"] == ACTIONS_BOT
    assert len(fake.requests_to("POST", rf"/repos/octo/app/issues/{number}/comments")) == 1
    assert len(fake.requests_to("PATCH", r"/repos/octo/app/issues/comments/\d+")) == 1
    make(fake).upsert_status_comment(number, {"attempt": 2}, "Attempt 2 failed.")  # unchanged
    assert len(fake.requests_to("PATCH", r"/repos/octo/app/issues/comments/\d+")) == 1


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


# -- reactions, permission, starting CI ----------------------------------------------------

def test_an_unknown_reaction_is_refused_by_github(fake: GitHubFake) -> None:
    forge = make(fake)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    comment_id = fake.add_comment(number, "/ci-agent fix", "octocat")
    with pytest.raises(ForgeError, match="422"):
        forge.add_reaction(number, comment_id, "thumbs")


@pytest.mark.parametrize("role", ["none", "custom-reviewer"])  # custom: the legacy field says so too
def test_no_role_or_a_custom_one_is_no_permission(fake: GitHubFake, role: str) -> None:
    fake.collaborators["dev"] = role
    assert make(fake).permission("dev") is Permission.NONE


def test_start_ci_dispatches_the_workflow_without_inputs(fake: GitHubFake) -> None:
    fake.add_workflow("ci.yml", dispatchable=True)
    forge = make(fake)
    assert forge.start_ci(FIX, "a" * 40, "ci.yml").kind == "started"
    assert fake.dispatches == [{"workflow": "ci.yml", "ref": FIX, "inputs": {}}]
    assert forge.start_ci(FIX, "a" * 40).kind == "not_startable"  # no workflow named: no request
    assert len(fake.requests_to("POST", r".*/dispatches")) == 1
    with pytest.raises(ForgeError, match="404"):
        forge.start_ci(FIX, "a" * 40, "missing.yml")


# -- slash commands (CommandForge) -----------------------------------------------------------

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
