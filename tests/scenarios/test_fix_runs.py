"""`ci-agent fix --local` across runs and around the model call: the attempt budget spans CI runs,
`--retry` starts a new count, service errors cost no attempt, a dry run sends nothing."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake, Fault, overloaded, validate
from tests.platform_scenarios.base import FIX_BRANCH, ROOT_CAUSE, SUMMARY
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import (
    DUMMY_KEY,
    assert_clean_finish,
    assert_fixed_on_branch,
    attempt_refs,
    branch_tip,
    fix,
    user_repo,
)
from tests.scenarios.sample_repos import PYTHON, PYTHON_CANARY, git, working_copy


def test_dry_run_prints_the_exact_request_without_a_key_or_a_secret(
        api: AnthropicFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    suffix = secrets.token_hex(8)
    monkeypatch.setenv("CANARY_TOKEN", f"ci-agent-canary-{suffix}")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    repo = user_repo(tmp_path, PYTHON_CANARY, {"CANARY": f"ci-agent-canary-{suffix}"})
    before = working_copy(repo.path)

    run = fix(repo, capfd, "--dry-run")

    assert run.exit_code == 0, str(run)
    assert api.requests == [], "a dry run sends nothing"
    (dry,) = run.of("dry_run")
    request = dry["request"]
    assert validate(request) is None, "the printed request is one the API would accept"
    assert {"system", "messages", "tools", "model", "max_tokens"} <= set(request)
    # its size: the body as compact UTF-8 JSON
    assert dry["bytes"] == len(json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode())
    assert "test_reviews_summary_for_the_service" in model.first_user_text(request)
    assert suffix not in run.stdout + run.stderr + run.summary
    assert branch_tip(repo, FIX_BRANCH) in (None, git(repo.path, "rev-parse", "main").strip())
    assert_clean_finish(repo, before)


def test_the_budget_spans_runs(api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Two CI runs: one failed attempt, then the model gives up; the next run has two attempts
    left, not three, and escalates after them."""
    repo = user_repo(tmp_path, PYTHON)
    wrong = {name: repo.diff(edit) for name, edit in PYTHON.wrong.items()}
    api.reply(model.submit_patch(wrong["floor"], summary="Guard.", root_cause=ROOT_CAUSE),
              model.give_up("I do not know what else to try."))

    first = fix(repo, capfd, label="first")

    assert first.exit_code == 4, str(first)
    assert len(api.message_requests) == 2
    api.reply(model.submit_patch(wrong["none"], summary="Guard.", root_cause=ROOT_CAUSE),
              model.submit_patch(wrong["floor_float"], summary="Guard.", root_cause=ROOT_CAUSE))

    second = fix(repo, capfd, label="second")

    assert second.exit_code == 3, str(second)
    assert len(api.message_requests) == 4, "attempts 2 and 3 only"
    assert [e["ok"] for e in second.of("verified")] == [False, False]
    assert second.of("escalated")


def test_retry_starts_a_new_count_after_an_escalation(api: AnthropicFake, tmp_path: Path,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    api.reply(*(model.submit_patch(repo.diff(PYTHON.wrong[name]), summary="Guard.", root_cause=ROOT_CAUSE)
                for name in ("floor", "floor_float", "none")))
    assert fix(repo, capfd, label="escalated").exit_code == 3
    api.reply(model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd, "--retry", label="retry")

    assert run.exit_code == 0, str(run)
    assert len(api.message_requests) == 4
    assert_fixed_on_branch(repo, attempt=1)


def test_model_service_failure_exits_5_and_costs_no_attempt(api: AnthropicFake, tmp_path: Path,
                                                          capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    api.reply(Fault(401, "authentication_error", "invalid x-api-key"))

    run = fix(repo, capfd)

    assert run.exit_code == 5, str(run)
    assert len(api.message_requests) == 1, "a 401 is not retried"
    assert "key" in run.stderr.lower() + run.stdout.lower()
    assert DUMMY_KEY not in run.stdout + run.stderr + run.summary
    assert attempt_refs(repo) == [], "no patch was tried: the budget is untouched"
    assert_clean_finish(repo, before)


def test_an_overloaded_api_is_retried_within_the_attempt(api: AnthropicFake, tmp_path: Path,
                                                         capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    api.reply(overloaded(),
              model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    first, second = api.message_requests
    assert first == second, "the same request, sent again"
    assert_fixed_on_branch(repo, attempt=1)


NOTE = "Ratings are shown on product pages: an empty list is a normal case, never an error."


@pytest.mark.parametrize(("flags", "attempts"), [((), 1), (("--max-attempts", "2"), 2)],
                         ids=["file", "flag-over-file"])
def test_repository_config_drives_the_run(api: AnthropicFake, tmp_path: Path,
                                          capfd: pytest.CaptureFixture[str], flags: tuple[str, ...],
                                          attempts: int) -> None:
    """`.ci-agent.yml` gives the commands, the budget, team notes and the answer language;
    a flag beats the file."""
    repo = user_repo(tmp_path, PYTHON)
    config = {"commands": {"test": PYTHON.command, "verify": PYTHON.verify}, "budget": {"max_attempts": 1},
              "notes": [NOTE], "language": "es"}
    (repo.path / ".ci-agent.yml").write_text(json.dumps(config))  # JSON is YAML
    repo.git("add", ".ci-agent.yml")
    repo.git("commit", "-q", "-m", "ci-agent configuration", "--", ".ci-agent.yml")
    api.reply(*(model.submit_patch(repo.diff(PYTHON.wrong[name]), summary="Guard.", root_cause=ROOT_CAUSE)
                for name in ("floor", "none")))

    run = fix(repo, capfd, *flags, commands=False)

    assert run.exit_code == 3, str(run)
    assert len(api.message_requests) == attempts
    system = " ".join(block["text"] for block in api.message_requests[0]["system"])
    assert NOTE in system
    assert "Spanish" in system
