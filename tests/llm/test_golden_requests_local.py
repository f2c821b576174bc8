"""The first request of `ci-agent fix --local --dry-run` on the Python sample, against its golden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.llm.golden import assert_facts, assert_golden, body_parts, distilled_failures, normalise
from tests.scenarios.conftest import anthropic_fake, api
from tests.scenarios.harness import fix, user_repo
from tests.scenarios.sample_repos import PYTHON, run

__all__ = ["anthropic_fake", "api"]


def test_the_local_first_request_is_the_golden_one(api: AnthropicFake, tmp_path: Path,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    failing, parent = repo.git("rev-parse", "HEAD", "HEAD^").split()

    dry = fix(repo, capfd, "--dry-run", plain=True)

    assert dry.exit_code == 0, str(dry)
    assert api.requests == []
    assert_golden("local.json", normalise(dry.stdout, tmp_path, failing, parent))
    tests = run(PYTHON.command, repo.path)
    assert_facts(body_parts(json.loads(dry.stdout)), distilled_failures(capfd, tmp_path, tests.stdout))
