"""The day ledger of spend (issue 16): a ref on origin moved by fast-forward push, re-read and
retried when another job was first; a local ref for `fix --local`; unreadable means an error,
never "nothing spent"."""

from __future__ import annotations

import json
import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ci_agent import git
from ci_agent.config import Settings
from ci_agent.config.load import settings_from_layers
from ci_agent.engine import money
from ci_agent.engine.marker import ForgeState, retry
from ci_agent.engine.spend import KEEP_DAYS, SPEND_REF, Day, GitSpendLedger, SpendLedgerError, today
from ci_agent.llm.metered import CapReached

WHO = git.Identity("ci-agent", "ci-agent@example.com")


def run(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def clone(origin: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(origin), str(where)], check=True, capture_output=True)
    return where


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    bare = tmp_path / "origin.git"
    run(tmp_path, "init", "--quiet", "--bare", str(bare))
    return bare


def test_a_new_ledger_has_nothing_spent_and_adds_up(origin: Path, tmp_path: Path) -> None:
    ledger = GitSpendLedger(clone(origin, tmp_path / "a"), WHO, remote=True)
    assert ledger.read("2026-12-03") == Day("2026-12-03")
    ledger.add("2026-12-03", 0.25)
    ledger.add("2026-12-03", 0.5, capped=True)
    other = GitSpendLedger(clone(origin, tmp_path / "b"), WHO, remote=True)  # another job reads origin
    assert other.read("2026-12-03") == Day("2026-12-03", 0.75, True)
    assert other.read("2026-12-04") == Day("2026-12-04")  # a new UTC day starts at nothing
    assert "2026-12-03.json" in run(origin, "ls-tree", "--name-only", SPEND_REF)


def test_two_jobs_adding_at_once_lose_no_spend(origin: Path, tmp_path: Path) -> None:
    ledgers = [GitSpendLedger(clone(origin, tmp_path / name), WHO, remote=True) for name in ("a", "b")]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def spend(ledger: GitSpendLedger) -> None:
        try:
            start.wait()
            for _ in range(6):
                ledger.add("2026-12-03", 0.125)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=spend, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert ledgers[0].read("2026-12-03").spent_usd == pytest.approx(12 * 0.125)
    # every add is one commit on the ledger's history: none was overwritten
    assert run(origin, "rev-list", "--count", SPEND_REF).strip() == "12"


def test_the_local_ledger_is_a_ref_of_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    run(tmp_path, "init", "--quiet", str(repo))
    ledger = GitSpendLedger(repo, WHO, remote=False)
    ledger.add("2026-12-03", 1.5)
    assert GitSpendLedger(repo, WHO, remote=False).read("2026-12-03").spent_usd == 1.5
    assert run(repo, "rev-parse", "--verify", SPEND_REF).strip()


def test_old_days_are_dropped(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    run(tmp_path, "init", "--quiet", str(repo))
    ledger = GitSpendLedger(repo, WHO, remote=False)
    for day in range(1, KEEP_DAYS + 3):
        ledger.add(f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}", 0.01)
    assert len(run(repo, "ls-tree", "--name-only", SPEND_REF).split()) == KEEP_DAYS


def test_an_unreachable_origin_is_an_error_not_nothing_spent(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    run(tmp_path, "init", "--quiet", str(repo))
    run(repo, "remote", "add", "origin", str(tmp_path / "missing.git"))
    with pytest.raises(SpendLedgerError, match="cannot reach origin"):
        GitSpendLedger(repo, WHO, remote=True).read("2026-12-03")


def test_a_ledger_file_that_is_not_ours_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SpendLedgerError):
        Day.parse("2026-12-03", "not json")
    with pytest.raises(SpendLedgerError):
        Day.parse("2026-12-03", '{"spent_usd": -1}')
    with pytest.raises(SpendLedgerError):
        Day.parse("2026-12-03", '{"spent_usd": "NaN"}')


def test_the_day_is_the_utc_day() -> None:
    assert today(datetime(2026, 12, 3, 23, 59, tzinfo=UTC)) == "2026-12-03"


# --- the engine's use of it (ci_agent.engine.money) -------------------------------------------

def _settings(day_cap: float) -> Settings:
    return settings_from_layers({"budget": {"max_cost_per_day_usd": day_cap}})


def test_an_unreadable_day_ledger_holds_every_call_back(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    run(tmp_path, "init", "--quiet", str(repo))
    run(repo, "remote", "add", "origin", str(tmp_path / "missing.git"))
    ledger = GitSpendLedger(repo, WHO, remote=True)
    meter = money.new_meter(_settings(50), lambda _: None)
    money.open_day(meter, ledger, "2026-12-03")
    with pytest.raises(CapReached) as caught:
        meter.check(0.0)  # even a free call: the day cap cannot be checked
    assert caught.value.cap == "day"
    assert "could not be read" in str(caught.value)
    assert "max_cost_per_day_usd: 0" in str(caught.value), "it says how to turn the day cap off"
    # with the day cap off the ledger is not read at all, and calls go ahead
    free = money.new_meter(_settings(0), lambda _: None)
    money.open_day(free, ledger, "2026-12-03")
    free.check(1.0)


def test_a_day_the_cap_stopped_holds_calls_back_until_the_next_day(origin: Path, tmp_path: Path) -> None:
    ledger = GitSpendLedger(clone(origin, tmp_path / "a"), WHO, remote=True)
    ledger.add("2026-12-03", 0.5, capped=True)
    meter = money.new_meter(_settings(50), lambda _: None)
    money.open_day(meter, ledger, "2026-12-03")
    with pytest.raises(CapReached, match="next UTC day"):
        meter.check(0.0)
    tomorrow = money.new_meter(_settings(50), lambda _: None)
    money.open_day(tomorrow, ledger, "2026-12-04")
    tomorrow.check(1.0)
    assert tomorrow.day_before == 0.0


def test_a_run_stopped_by_the_day_cap_marks_the_day(origin: Path, tmp_path: Path) -> None:
    ledger = GitSpendLedger(clone(origin, tmp_path / "a"), WHO, remote=True)
    meter = money.new_meter(_settings(1), lambda _: None)
    money.open_day(meter, ledger, "2026-12-03")
    meter.add(0.25)
    money.close_day(meter, ledger, "2026-12-03", CapReached("day", 0.25, 1.0, 0.9), lambda _: None)
    assert ledger.read("2026-12-03") == Day("2026-12-03", 0.25, True)


def test_the_marker_keeps_the_fix_branchs_spend_and_a_retry_lifts_its_cap() -> None:
    marker = ForgeState(cost_usd=4.5, cost_base=1.0, capped="fix branch")
    assert ForgeState.from_json(json.loads(json.dumps(marker.to_json()))) == marker
    assert marker.branch_spent == 3.5
    # another job's larger total is kept; never added twice
    assert ForgeState(cost_usd=2.0).merged_with(marker).cost_usd == 4.5
    retried = retry(marker, [])
    assert (retried.capped, retried.branch_spent, retried.cost_usd) == ("", 0.0, 4.5)
    # a hand-edited marker's nonsense reads as nothing spent
    assert ForgeState.from_json({**marker.to_json(), "cost_usd": "lots"}).cost_usd == 0.0
    assert ForgeState.from_json({**marker.to_json(), "cost_usd": float("inf")}).cost_usd == 0.0
