"""Cache reads and writes per attempt, from the API's usage fields to `fix --local --json` and the
summary (issue 15, defect 8), with the loopback fake answering as the API's prompt cache would:
the repository's AGENTS.md sits in the cached prefix, attempt 1 writes it, its second turn reads
its first, and attempt 2 (a new conversation) reads the stable prefix attempt 1 wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.llm.caching import min_cacheable_tokens
from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.prompt_cache import PromptCache
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import ROOT_CAUSE, SUMMARY, assert_fixed_on_branch, fix, user_repo
from tests.scenarios.sample_repos import PYTHON

GUIDANCE = "GUIDANCE-31C7: money is Decimal here; run `pytest -q` before you submit.\n"


def test_each_attempt_reports_its_cache_reads_and_writes(api: AnthropicFake, tmp_path: Path,
                                                         capfd: pytest.CaptureFixture[str]) -> None:
    api.prompt_cache = cache = PromptCache(min_cacheable_tokens)
    repo = user_repo(tmp_path, PYTHON)
    (repo.path / "AGENTS.md").write_text(GUIDANCE)
    wrong = repo.diff(PYTHON.wrong["floor"])
    api.reply(model.read_file("shop/ratings.py"),
              model.submit_patch(wrong, summary="Avoid dividing by zero.", root_cause=ROOT_CAUSE),
              model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    assert_fixed_on_branch(repo, attempt=2)
    first = api.message_requests[0]
    assert GUIDANCE.strip() in first["system"][-1]["text"], "local mode reads the working tree's"
    turn1, turn2, attempt2 = cache.answered
    assert turn2["cache_read_input_tokens"] == turn1["cache_creation_input_tokens"] > 0
    assert attempt2["cache_read_input_tokens"] > 0, "attempt 2 reads the tools, rules and guidance"
    one, two = (e["usage"] for e in run.of("asked"))
    assert (one["cache_creation_input_tokens"], one["cache_read_input_tokens"]) == (
        turn1["cache_creation_input_tokens"] + turn2["cache_creation_input_tokens"],
        turn2["cache_read_input_tokens"])
    assert (two["cache_creation_input_tokens"], two["cache_read_input_tokens"]) == (
        attempt2["cache_creation_input_tokens"], attempt2["cache_read_input_tokens"])
    for n, usage in ((1, one), (2, two)):
        attempt = run.summary.split(f"### Attempt {n}")[1]
        assert (f"cache write {usage['cache_creation_input_tokens']}, cache read "
                f"{usage['cache_read_input_tokens']}") in attempt, run.summary
