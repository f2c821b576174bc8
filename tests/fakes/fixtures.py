"""Pytest fixtures for the fakes; tests/conftest.py (or a package conftest) imports them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_fake import AnthropicFake


@pytest.fixture
def anthropic_fake() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake
    # Unknown routes and unscripted requests are failures even if the client coped with them.
    assert not fake.failures, fake.failures
