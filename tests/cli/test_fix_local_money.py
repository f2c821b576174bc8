"""Money caps of `ci-agent fix --local` (issue 16): the attempt's cost in a `CI-Agent-Cost-USD`
trailer and the `done` event, the fix branch cap read back from those trailers by the next run,
the day's spend in the local ref `refs/ci-agent/spend`. Amounts by hand from Sonnet 4.5's price:
$3 input and $15 output per million tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_fix_local import NOT_FIXING, PYTEST, ScriptedClient, fix, no_model, sh
from tests.cli.test_fix_local import repo as repo  # the fixture
from tests.fakes.anthropic_fake import message, tool_use

# 100,000 input tokens * $3 + 2,000 output tokens * $15 = $0.30 + $0.03
USAGE = {"input_tokens": 100_000, "output_tokens": 2000}
COST = 0.33


def costly_patch(diff: str) -> dict[str, Any]:
    return message(tool_use("submit_patch", {
        "diff": diff, "summary": "add multiplies", "root_cause": "add in calc.py subtracted",
        "confidence": 0.5, "assumptions": [], "open_questions": []}), stop_reason="tool_use", usage=USAGE)


def env(**budget: str) -> dict[str, str]:
    return {"CI_AGENT_MODEL_NAME": "claude-sonnet-4-5", "CI_AGENT_REVIEW_ENABLED": "false",
            **{f"CI_AGENT_BUDGET_{k.upper()}": v for k, v in budget.items()}}


def done_event(out: str) -> dict[str, Any]:
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    (done,) = [e for e in events if e.get("event") == "done"]
    assert isinstance(done, dict)
    return done


def test_the_cost_is_a_trailer_and_the_next_run_stops_at_the_branch_cap(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = ScriptedClient(costly_patch(NOT_FIXING))
    caps = env(max_cost_per_branch_usd="0.35", max_cost_per_day_usd="0")
    assert fix(repo, "--command", PYTEST, "--json", client=lambda: client, env=caps) == 0
    assert done_event(capsys.readouterr().out)["cost_usd"] == pytest.approx(COST)
    assert "CI-Agent-Cost-USD: 0.330000" in sh(repo, "log", "-1", "--format=%B", "ci-agent/fix/main")

    # still red on the fix branch: attempt 2 would start at $0.33 of $0.35
    assert fix(repo, "--command", PYTEST, "--json", client=no_model, env=caps) == 3
    done = done_event(capsys.readouterr().out)
    assert done["status"] == "escalated"
    assert "fix branch cost cap" in done["message"] and "$0.3300 spent on this fix branch" in done["message"]


def test_the_day_cap_reads_the_local_ledger(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = ScriptedClient(message(tool_use("give_up", {"reason": "needs a decision"}),
                                    stop_reason="tool_use", usage=USAGE))
    caps = env(max_cost_per_branch_usd="0", max_cost_per_day_usd="0.35")
    assert fix(repo, "--command", PYTEST, client=lambda: client, env=caps) == 4
    (day,) = sh(repo, "ls-tree", "--name-only", "refs/ci-agent/spend").split()
    assert json.loads(sh(repo, "cat-file", "blob", f"refs/ci-agent/spend:{day}"))["spent_usd"] == COST

    assert fix(repo, "--command", PYTEST, "--json", client=no_model, env=caps) == 3
    assert "day cost cap" in done_event(capsys.readouterr().out)["message"]
