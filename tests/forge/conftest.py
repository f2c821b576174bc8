"""`subject`: each test that asks for it runs three times, against the local forge, GitHub (its
fake) and GitLab (its fake). The fakes must see no request they do not know."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.github_fake import GitHubFake
from tests.fakes.gitlab_fake import GitLabFake
from tests.forge.forges import GitHubSubject, GitLabSubject, LocalSubject, Subject, bare_origin


@pytest.fixture(params=["local", "github", "gitlab"])
def subject(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Subject]:
    if request.param == "local":
        yield LocalSubject(tmp_path)
        return
    origin, sha = bare_origin(tmp_path)
    if request.param == "github":
        with GitHubFake() as github:
            yield GitHubSubject(github, sha)
        assert github.failures == []
        return
    with GitLabFake(origin) as gitlab:
        yield GitLabSubject(gitlab, sha)
    assert gitlab.failures == []
