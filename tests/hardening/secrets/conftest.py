"""Writes the canary table (tests/hardening/secrets/canaries.py) at the end of the session when
`CI_AGENT_CANARY_TABLE` names a file: the SECURITY.md figure of where canaries were planted and
where they were looked for, from the checks the tests actually made."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hardening.secrets.canaries import table


@pytest.fixture(scope="session", autouse=True)
def canary_table() -> Iterator[None]:
    yield
    target = os.environ.get("CI_AGENT_CANARY_TABLE")
    if target:
        Path(target).write_text(table(), encoding="utf-8")
