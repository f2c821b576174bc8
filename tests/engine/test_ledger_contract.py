"""The ledger contract (`ci_agent.engine.ledger`): the same assertions against the ledger on git
refs (`fix --local`) and the ledger on the forge marker (the CI cycle).

Each test is a series of runs on real repositories with a bare origin. A run opens a ledger over
what survived the previous run, works on the local fix branch, and ends by pushing that branch
and keeping what the ledger wrote: the side ref (git) or the marker as the status comment holds
it (marker: rendered into a comment body and parsed back).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ci_agent.engine import state
from ci_agent.engine.budget import AttemptRecord, AttemptResult, Event, Reset, ResetReason, assess
from ci_agent.engine.forge import parse_marker, render_marker
from ci_agent.engine.gitops import reset_local_fix_branch
from ci_agent.engine.ledger import Build, GitLedger, Ledger, MarkerLedger
from ci_agent.engine.marker import ForgeState, fetch_fix_branch, read_chain
from ci_agent.git import Identity

FIX = "ci-agent/fix/main"
BOT = Identity("ci-agent", "ci-agent@example.com")
LONG_SUMMARY = "raise the timeout " * 20  # 360 characters: longer than any record keeps


def sh(cwd: Path, *argv: str) -> str:
    return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e.x", *argv], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


class Storage:
    """Where a ledger's records survive between runs (`kind`: git | marker)."""

    def __init__(self, kind: str, repo: Path) -> None:
        self.kind, self.repo, self.runs = kind, repo, 0
        self.marker_body = render_marker(ForgeState(fix_branch=FIX, source_branch="main").to_json())

    def open(self) -> Ledger:
        self.runs += 1
        if self.kind == "git":
            return GitLedger(self.repo, FIX, BOT)
        # a CI job: the fix branch as origin has it, the marker as the status comment holds it
        tip = fetch_fix_branch(self.repo, FIX)
        reset_local_fix_branch(self.repo, FIX, tip)
        return MarkerLedger(self.repo, FIX, ForgeState.from_json(parse_marker(self.marker_body)),
                            read_chain(self.repo, tip), f"run{self.runs}")

    def close(self, ledger: Ledger) -> None:
        if state.rev(self.repo, "refs/heads/" + FIX) is not None:
            sh(self.repo, "push", "-q", "--force", "origin", f"refs/heads/{FIX}:refs/heads/{FIX}")
        if isinstance(ledger, MarkerLedger):
            self.marker_body = render_marker(ledger.marker.to_json())

    @contextmanager
    def run(self) -> Iterator[tuple[Ledger, str]]:
        """One run: the ledger, and the fix branch's tip (created from main when it is new)."""
        ledger = self.open()
        tip = state.prepare_fix_branch(self.repo, "main", FIX)
        yield ledger, tip
        self.close(ledger)


@pytest.fixture(params=["git", "marker"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True, capture_output=True)
    sh(work, "checkout", "-q", "-b", "main")
    (work / "a.txt").write_text("base\n")
    sh(work, "add", ".")
    sh(work, "commit", "-q", "-m", "base")
    sh(work, "push", "-q", "origin", "main")
    return Storage(str(request.param), work)


def failed(fingerprint: str, after: str, run: str, summary: str = "") -> Build:
    """A failed attempt numbered from what the ledger counts now, as the attempt engine builds it."""
    def build(events: list[Event]) -> Event:
        return AttemptRecord(assess(events, 3).next_attempt, AttemptResult.FAILED, fingerprint, after,
                             run, summary)
    return build


def counted(ledger: Ledger) -> list[tuple[int, str, str]]:
    return [(f.number, f.fingerprint, f.after) for f in assess(ledger.events(), 3).failures]


def human_commit(repo: Path) -> str:
    """A commit without our trailers on the fix branch: a person took over."""
    tip = sh(repo, "rev-parse", "refs/heads/" + FIX)
    made = sh(repo, "commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", "a person's commit")
    sh(repo, "update-ref", "refs/heads/" + FIX, made, tip)
    sh(repo, "push", "-q", "origin", f"refs/heads/{FIX}:refs/heads/{FIX}")
    return made


def test_a_new_fix_branch_starts_a_count(storage: Storage) -> None:
    with storage.run() as (ledger, _):
        assert ledger.events() == [Reset(ResetReason.HUMAN_COMMIT)]
        assert assess(ledger.events(), 3).next_attempt == 1


def test_failed_attempts_are_numbered_and_survive_the_run(storage: Storage) -> None:
    with storage.run() as (ledger, tip):
        ledger.record(tip, failed("a" * 16, "b" * 16, "id-1", LONG_SUMMARY))
        ledger.record(tip, failed("b" * 16, "c" * 16, "id-2"))
        in_run = counted(ledger)
        summary = assess(ledger.events(), 3).failures[0].summary
    assert in_run == [(1, "a" * 16, "b" * 16), (2, "b" * 16, "c" * 16)]
    assert summary == " ".join(LONG_SUMMARY.split())[:120]  # the commit-subject length
    with storage.run() as (ledger, _):
        assert counted(ledger) == in_run
        budget = assess(ledger.events(), 3)
        assert budget.no_progress("b" * 16) and budget.next_attempt == 3
        later = budget.failures[0].summary
        assert len(later) >= 120 and " ".join(LONG_SUMMARY.split()).startswith(later)


def test_the_same_attempt_recorded_twice_counts_once(storage: Storage) -> None:
    with storage.run() as (ledger, tip):
        first = ledger.record(tip, failed("a" * 16, "", "same"))
        again = ledger.record(tip, failed("a" * 16, "", "same"))
        assert not first.already and again.already
        assert counted(ledger) == [(1, "a" * 16, "")]


def test_a_retry_starts_a_new_count(storage: Storage) -> None:
    with storage.run() as (ledger, tip):
        ledger.record(tip, failed("a" * 16, "", "id-1"))
        ledger.record(tip, lambda _events: Reset(ResetReason.RETRY))
        assert counted(ledger) == []
    with storage.run() as (ledger, tip):
        assert counted(ledger) == []
        ledger.record(tip, failed("a" * 16, "", "id-2"))
        assert counted(ledger) == [(1, "a" * 16, "")]


def test_a_human_commit_on_the_fix_branch_starts_a_new_count(storage: Storage) -> None:
    with storage.run() as (ledger, tip):
        ledger.record(tip, failed("a" * 16, "", "id-1"))
    human_commit(storage.repo)
    with storage.run() as (ledger, tip):
        assert ledger.events() == [Reset(ResetReason.HUMAN_COMMIT)]
        ledger.record(tip, failed("a" * 16, "", "id-2"))
        assert counted(ledger) == [(1, "a" * 16, "")]


def test_a_published_attempt_counts_until_ci_decides(storage: Storage) -> None:
    with storage.run() as (ledger, tip):
        made = sh(storage.repo, "commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m",
                  "fix it\n\nCI-Agent-Attempt: 1\nCI-Agent-Failure: " + "a" * 16 + "\nCI-Agent-Run: id-1\n"
                  "CI-Agent-Result: pending")
        state.publish(storage.repo, FIX, made, tip)
        assert counted(ledger) == [(1, "a" * 16, "")]
        assert [e.result for e in ledger.events() if isinstance(e, AttemptRecord)] == [AttemptResult.PENDING]
    with storage.run() as (ledger, tip):
        assert tip == made
        ledger.record(tip, failed("b" * 16, "", "id-2"))
        assert counted(ledger) == [(1, "a" * 16, ""), (2, "b" * 16, "")]


def test_deleting_the_fix_branch_starts_over(storage: Storage) -> None:
    with storage.run() as (ledger, tip):
        ledger.record(tip, failed("a" * 16, "", "id-1"))
    sh(storage.repo, "push", "-q", "origin", f":refs/heads/{FIX}")
    sh(storage.repo, "branch", "-q", "-D", FIX)
    with storage.run() as (ledger, _):
        assert ledger.events() == [Reset(ResetReason.HUMAN_COMMIT)]
