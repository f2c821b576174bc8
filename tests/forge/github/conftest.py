"""`fake`: the GitHub fake, with the fix branch, asserting it saw no request it does not know."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.github_fake import GitHubFake
from tests.forge.forges import FIX


@pytest.fixture
def fake() -> Iterator[GitHubFake]:
    with GitHubFake() as server:
        server.branches[FIX] = False
        yield server
    assert server.failures == []
