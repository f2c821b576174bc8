"""`GitHubForge`'s calls (forge_calls.py): retries, waits and the one sentence a failure becomes,
through real PyGithub against the loopback GitHub fake (DESIGN.md §5).
No test sleeps: the waits a forge chose are recorded and read back; retries are counted as
requests the fake received.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from github import Auth, Github

from ci_agent.errors import ExitCode, ForgeError
from ci_agent.platforms.github.forge import GitHubForge
from ci_agent.platforms.github.http import asked_wait, sentence
from ci_agent.retry import RetryPolicy
from tests.fakes.github_fake import (
    GitHubFake,
    error,
    forbidden,
    rate_limited_403,
    rate_limited_429,
    server_error,
)
from tests.forge.forges import FIX
from tests.forge.forges import GITHUB_ACTIONS_TOKEN as ACTIONS_TOKEN
from tests.forge.forges import github_forge as make

USER_TOKEN = "ghp_fake_user"


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
        forge.start_ci(FIX, "a" * 40, "ci.yml")


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
        make(fake, sleep=waits.append, retry=RetryPolicy(5, 60)).protected("main")
    assert waits == [] and caught.value.exit_code is ExitCode.EXTERNAL_SERVICE
    assert time.strftime("%H:%M:%S", time.gmtime(reset)) in str(caught.value)


def test_5xx_retried_then_given_up(fake: GitHubFake) -> None:
    waits: list[float] = []
    fake.inject(server_error(502), path="/branches/", times=2)
    assert make(fake, sleep=waits.append).protected("main") is True
    assert len(waits) == 2 and len(fake.requests_to("GET", "/repos/octo/app/branches/main")) == 3
    fake.inject(server_error(503), path="/branches/", times=10)
    with pytest.raises(ForgeError, match=r"kept failing \(503.*after 3 attempts"):
        make(fake, retry=RetryPolicy(3, 300)).protected("main")
    assert len(fake.requests_to("GET", "/repos/octo/app/branches/main")) == 6


def test_unreachable_github(tmp_path: Path) -> None:
    with GitHubFake() as gone:
        url = gone.base_url
    forge = GitHubForge("octo/app", ACTIONS_TOKEN, base_url=url, throttle=False, retry=RetryPolicy(2, 300),
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
