"""`origin` (a bare repository with `main` and the fix branch, as the merge request and pipeline
checks need) and `fake`: the GitLab fake over it, asserting it saw no request it does not know."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.gitlab_fake import GitLabFake
from tests.forge.forges import bare_origin


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return bare_origin(tmp_path)[0]


@pytest.fixture
def fake(origin: Path) -> Iterator[GitLabFake]:
    with GitLabFake(origin) as server:
        yield server
    assert server.failures == []
