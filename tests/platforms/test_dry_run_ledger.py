"""A dry run writes nothing: `fix --local --dry-run` runs the attempt engine on a `DryRunLedger`,
which reads the repository's side records and keeps what the run would record in memory.

The repository, git and pytest are real (the sample of tests/cli/test_fix_local.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_agent.engine import state
from ci_agent.engine.budget import Event, Reset, ResetReason
from ci_agent.engine.dry_run import DryRunLedger
from ci_agent.engine.ledger import Build
from tests.cli.test_fix_local import PYTEST, exhaust, fix, no_model, quick_pytest, repo, sh

__all__ = ["quick_pytest", "repo"]  # the fixtures, shared with tests/cli/test_fix_local.py


class ListLedger:
    """A ledger of the events it is given; what the dry run would write must not reach it."""

    def __init__(self, events: list[Event]) -> None:
        self.held = list(events)

    def events(self) -> list[Event]:
        return list(self.held)

    def record(self, head: str, build: Build) -> state.Recorded:
        raise AssertionError("a dry run writes no record")


def test_the_dry_run_ledger_reads_through_and_writes_nowhere() -> None:
    real = ListLedger([Reset(ResetReason.RETRY)])
    ledger = DryRunLedger(real)

    recorded = ledger.record("abc", lambda events: Reset(ResetReason.GREEN_RUN) if events else Reset(
        ResetReason.RETRY))

    assert recorded.event == Reset(ResetReason.GREEN_RUN)  # built from what the real ledger holds
    assert ledger.would_record == [("abc", Reset(ResetReason.GREEN_RUN))]
    assert ledger.events() == real.held == [Reset(ResetReason.RETRY)]


def test_a_dry_run_retry_records_no_reset_and_still_sees_the_spent_budget(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exhaust(repo)
    refs_before = sh(repo, "for-each-ref")

    code = fix(repo, "--command", PYTEST, "--dry-run", "--retry", "--json", client=no_model)

    assert code == 3  # the retry would reset the count; the dry run shows the count as it stands
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events] == ["distilled", "budget", "escalated", "done"]
    assert sh(repo, "for-each-ref") == refs_before


def test_a_green_dry_run_records_no_green_run(repo: Path) -> None:
    exhaust(repo, 2)
    refs_before, events_before = sh(repo, "for-each-ref"), state.read_events(repo, "ci-agent/fix/main")

    assert fix(repo, "--command", "true", "--dry-run", client=no_model) == 0

    assert sh(repo, "for-each-ref") == refs_before  # a real run would record the green run here
    assert state.read_events(repo, "ci-agent/fix/main") == events_before
