"""`GitLabForge`'s calls (forge_calls.py): retries, waits, the one sentence a failure becomes and
the token masked in it, through real python-gitlab against the loopback GitLab fake (DESIGN.md §5).
No test sleeps: the waits a forge chose are recorded and read back; retries are counted as
requests the fake received.
"""

from __future__ import annotations

import time

import pytest

from ci_agent.errors import ExitCode, ForgeError
from ci_agent.platforms.gitlab.forge import GitLabForge
from ci_agent.platforms.gitlab.http import asked_wait, message_of, titled, wildcard
from ci_agent.retry import RetryPolicy
from tests.fakes.gitlab_fake import FakeJob, Fault, GitLabFake, Reply, error, rate_limited, server_error
from tests.forge.forges import FIX, GITLAB_BOT_TOKEN, GITLAB_BOT_USER, GITLAB_JOB_TOKEN
from tests.forge.forges import gitlab_forge as make

MAINT = "glpat-maint"
BOT, JOB, BOT_USER = GITLAB_BOT_TOKEN, GITLAB_JOB_TOKEN, GITLAB_BOT_USER


# -- errors, retries -------------------------------------------------------------------------

def test_bad_token_is_one_sentence_exit_5_without_the_token(fake: GitLabFake) -> None:
    secret = "glpat-THIS-IS-SECRET"
    with pytest.raises(ForgeError) as caught:
        make(fake, secret).failed_jobs(1)
    message = str(caught.value)
    assert caught.value.exit_code == ExitCode.EXTERNAL_SERVICE and "401" in message
    assert "rejected the token (CI_AGENT_GITLAB_TOKEN)" in message and secret not in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_a_token_echoed_by_the_server_is_masked(fake: GitLabFake) -> None:
    fake.add_fault(Fault(error(400, f"bad value {BOT}")))
    with pytest.raises(ForgeError) as caught:
        make(fake).find_change_request(FIX)
    assert BOT not in str(caught.value) and "[MASKED]" in str(caught.value)


def test_job_token_cannot_write_and_says_what_to_set(fake: GitLabFake) -> None:
    forge = make(fake, JOB)
    with pytest.raises(ForgeError) as caught:
        forge.open_change_request(FIX, "main", "Fix", "")
    assert str(caught.value).startswith(
        "CI_JOB_TOKEN cannot create merge requests; set CI_AGENT_GITLAB_TOKEN to a project access token "
        "with the api scope and the Developer role")
    with pytest.raises(ForgeError, match="CI_JOB_TOKEN cannot create pipelines"):
        forge.start_pipeline("main", {})
    number = make(fake).open_change_request(FIX, "main", "Fix", "").number
    with pytest.raises(ForgeError, match=rf"CI_JOB_TOKEN cannot comment on merge request !{number}"):
        forge.post_comment(number, "hi")
    assert fake.created_pipelines == []


def test_a_job_token_refused_as_no_token_says_what_to_set(fake: GitLabFake) -> None:
    """GitLab ignores a job token on endpoints that do not take one: the answer is a 401."""
    fake.add_fault(Fault(error(401, "401 Unauthorized"), path="/merge_requests$"))
    with pytest.raises(ForgeError, match=r"^CI_JOB_TOKEN cannot find the merge request of branch .* "
                                         r"the Reporter role \(GitLab said 401 Unauthorized\)\.$"):
        make(fake, JOB).find_change_request(FIX)


def test_403_for_a_member_below_developer_names_the_role(fake: GitLabFake) -> None:
    fake.add_user("reporter", 20)
    fake.add_token("glpat-reporter", "reporter")
    with pytest.raises(ForgeError, match=r"not allowed to create merge requests .*the Developer role"):
        make(fake, "glpat-reporter").open_change_request(FIX, "main", "Fix", "")


def test_404_for_an_unknown_or_invisible_project(fake: GitLabFake) -> None:
    with pytest.raises(ForgeError, match=r"read the project \(404 Project Not Found\).*'acme/nope'"):
        make(fake, project="acme/nope").default_branch()
    fake.add_user("stranger", None)
    fake.add_token("glpat-stranger", "stranger")
    with pytest.raises(ForgeError, match="404"):
        make(fake, "glpat-stranger").default_branch()


def test_a_login_page_instead_of_the_api_names_the_server_url(fake: GitLabFake) -> None:
    fake.add_fault(Fault(Reply(200, b"<html>Sign in</html>", {"content-type": "text/html"})))
    with pytest.raises(ForgeError, match=rf"could not read while trying to read the project .*check that "
                                         rf"{fake.url} is the GitLab server \(CI_SERVER_URL\)\.$"):
        make(fake).default_branch()


def test_429_waits_as_asked_then_succeeds(fake: GitLabFake) -> None:
    fake.add_fault(Fault(rate_limited("7"), path="/merge_requests$", times=2))
    waits: list[float] = []
    forge = make(fake, sleep=waits.append)
    assert forge.find_change_request(FIX) is None
    assert waits == forge.waits == [7.0, 7.0]
    assert len(fake.requests_to("GET", "/projects/acme/shop/merge_requests")) == 3


def test_429_without_retry_after_waits_for_the_reset() -> None:
    assert asked_wait({"RateLimit-Reset": "1030"}, now=1000.0) == 31.0
    assert asked_wait({"Retry-After": "5", "RateLimit-Reset": "1030"}, now=1000.0) == 5.0
    assert asked_wait({"Retry-After": "soon"}) is None and asked_wait({}) is None


def test_rate_limit_beyond_the_wait_budget_stops_at_once(fake: GitLabFake) -> None:
    fake.add_fault(Fault(rate_limited(None, reset_epoch=int(time.time()) + 3600), times=5))
    with pytest.raises(ForgeError, match=r"kept rate-limiting us \(429 Retry later\) after 1 attempt to"):
        make(fake, retry=RetryPolicy(5, 60)).failed_jobs(1)
    assert len(fake.requests) == 1


def test_5xx_retried_then_given_up(fake: GitLabFake) -> None:
    fake.add_fault(Fault(server_error(502), times=10))
    forge = make(fake, retry=RetryPolicy(3, 300))
    with pytest.raises(ForgeError, match=r"kept failing \(502 Bad Gateway\) after 3 attempts to list"):
        forge.failed_jobs(1)
    assert len(fake.requests) == 3 and len(forge.waits) == 2


def test_a_retried_listing_still_lists_everything(fake: GitLabFake) -> None:
    pid = fake.add_pipeline("main", "a" * 40, "failed", [FakeJob(f"job{i}", "failed") for i in range(5)])
    fake.add_fault(Fault(server_error(503), path="/jobs$"))
    assert [j.name for j in make(fake, per_page=2).failed_jobs(pid)] == [f"job{i}" for i in range(5)]


def test_writes_are_not_repeated_after_a_5xx_but_are_after_a_429(fake: GitLabFake) -> None:
    number = make(fake).open_change_request(FIX, "main", "Fix", "").number
    fake.add_fault(Fault(server_error(502), path="/notes$", method="POST"))
    with pytest.raises(ForgeError, match="502"):
        make(fake).post_comment(number, "once")
    fake.add_fault(Fault(rate_limited("1"), path="/notes$", method="POST"))
    make(fake).post_comment(number, "after a 429")
    assert len(fake.requests_to("POST", r".*/notes")) == 3 and len(fake.notes[number]) == 1


def test_unreachable_gitlab() -> None:
    with GitLabFake() as gone:
        url = gone.url
    forge = GitLabForge("acme/shop", BOT, url=url, sleep=lambda s: None, retry=RetryPolicy(2, 300))
    with pytest.raises(ForgeError, match=r"reach GitLab at http://127\.0\.0\.1:\d+ .* after 2 attempts"):
        forge.default_branch()


def test_draft_titles_and_branch_wildcards() -> None:
    assert titled("[Draft] (draft) Fix", False) == "Fix" and titled("draft: Draft: Fix", True) == "Draft: Fix"
    assert titled("Drafting the fix", True) == "Draft: Drafting the fix"  # not a prefix GitLab reads
    assert wildcard("release/*").fullmatch("release/1/2") and not wildcard("release/*").fullmatch("release")
    assert wildcard("v1.*").fullmatch("v1.x") and not wildcard("v1.*").fullmatch("v1-x")  # dots are literal


def test_gitlab_message_shapes() -> None:
    assert message_of("404 Project Not Found") == "404 Project Not Found"
    assert message_of(["Another open MR exists", "second"]) == "Another open MR exists; second"
    assert message_of({"base": ["Reference not found"]}) == "base Reference not found"
    assert message_of(b"<html><h1>502 Bad Gateway</h1></html>") == "502 Bad Gateway"
