"""forge_state: the budget of a fix branch read from the REMOTE branch's trailers plus the status
marker; a green run resets, a human commit resets, a rerun of the same run never counts twice."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from ci_agent.engine.budget import AttemptRecord, AttemptResult, Reset, ResetReason, assess
from ci_agent.engine.forge import parse_marker, render_marker
from ci_agent.engine.marker import ForgeState, events, fetch_fix_branch, observe_run, read_chain, retry

FIX = "ci-agent/fix/main"
IDENTITY = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
            "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd),
                            **IDENTITY}, capture_output=True, text=True, check=True)
    return result.stdout.strip()


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path]:
    """(the runner's clone, a second clone standing for CI and people) sharing a bare origin."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(origin))
    other = tmp_path / "other"
    git(tmp_path, "clone", "--quiet", str(origin), str(other))
    (other / "a.txt").write_text("base\n", encoding="utf-8")
    git(other, "add", "a.txt")
    git(other, "commit", "--quiet", "-m", "base")
    git(other, "push", "--quiet", "origin", "HEAD:main")
    runner = tmp_path / "runner"
    git(tmp_path, "clone", "--quiet", str(origin), str(runner))
    return runner, other


def commit(repo: Path, text: str, trailers: dict[str, str] | None = None) -> str:
    (repo / "a.txt").write_text(text + "\n", encoding="utf-8")
    git(repo, "add", "a.txt")
    message = text + ("\n\n" + "\n".join(f"{k}: {v}" for k, v in trailers.items()) if trailers else "")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def attempt(repo: Path, n: int, run: str) -> str:
    sha = commit(repo, f"attempt {n}", {"CI-Agent-Attempt": str(n), "CI-Agent-Failure": "f" * 16,
                                        "CI-Agent-Run": run, "CI-Agent-Result": "pending"})
    git(repo, "push", "--quiet", "origin", f"HEAD:refs/heads/{FIX}")
    return sha


def test_no_remote_fix_branch(repos: tuple[Path, Path]) -> None:
    runner, _ = repos
    assert fetch_fix_branch(runner, FIX) is None
    assert read_chain(runner, None) == []


def test_pending_attempts_read_from_the_remote_branch(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    attempt(other, 1, "r1")
    tip = attempt(other, 2, "r2")
    assert fetch_fix_branch(runner, FIX) == tip
    chain = read_chain(runner, tip)
    assert [link.attempt is None for link in chain] == [True, False, False]  # base is a human commit
    found = events(chain, ForgeState())
    assert isinstance(found[0], Reset) and found[0].reason is ResetReason.HUMAN_COMMIT
    assert [(e.number, e.result, e.run, e.summary) for e in found[1:] if isinstance(e, AttemptRecord)] == \
        [(1, AttemptResult.PENDING, "r1", "attempt 1"), (2, AttemptResult.PENDING, "r2", "attempt 2")]


def test_ci_verdicts_from_the_marker_decide_the_budget(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    a1 = attempt(other, 1, "r1")
    chain = read_chain(runner, fetch_fix_branch(runner, FIX))
    seen = observe_run(ForgeState(), chain, "100", a1, green=False, fingerprint="e" * 16)
    assert seen.verdict == "failed" and seen.attempt is not None and seen.attempt.number == 1
    budget = assess(events(chain, seen.state), 3)
    assert budget.consecutive_failures == 1 and budget.failures[0].after == "e" * 16


def test_rerun_of_the_same_run_does_not_count_twice(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    a1 = attempt(other, 1, "r1")
    chain = read_chain(runner, fetch_fix_branch(runner, FIX))
    first = observe_run(ForgeState(), chain, "100", a1, green=False)
    again = observe_run(first.state, chain, "100", a1, green=False)
    assert again.verdict == "seen" and again.state == first.state and not again.counts
    # Through the marker JSON, as the next run reads it back from the status comment.
    state = ForgeState.from_json(parse_marker(render_marker(first.state.to_json())))
    assert state == first.state
    assert observe_run(state, chain, "100", a1, green=False).verdict == "seen"


def test_run_of_an_older_commit_is_stale(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    a1 = attempt(other, 1, "r1")
    attempt(other, 2, "r2")
    chain = read_chain(runner, fetch_fix_branch(runner, FIX))
    assert observe_run(ForgeState(), chain, "100", a1, green=False).verdict == "stale"


def test_three_failures_exhaust_the_budget(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    state = ForgeState()
    for n in (1, 2, 3):
        sha = attempt(other, n, f"r{n}")
        chain = read_chain(runner, fetch_fix_branch(runner, FIX))
        state = observe_run(state, chain, str(100 + n), sha, green=False).state
    assert assess(events(chain, state), 3).exhausted


def test_green_run_passes_the_attempt_and_resets(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    a1 = attempt(other, 1, "r1")
    chain = read_chain(runner, fetch_fix_branch(runner, FIX))
    state = observe_run(ForgeState(), chain, "100", a1, green=False).state
    a2 = attempt(other, 2, "r2")
    chain = read_chain(runner, fetch_fix_branch(runner, FIX))
    passed = observe_run(state, chain, "101", a2, green=True)
    assert passed.verdict == "passed" and passed.state.fixed == a2
    assert assess(events(chain, passed.state), 3).consecutive_failures == 0


def test_human_commit_on_the_fix_branch_resets(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    state = ForgeState()
    for n in (1, 2):
        sha = attempt(other, n, f"r{n}")
        chain = read_chain(runner, fetch_fix_branch(runner, FIX))
        state = observe_run(state, chain, str(100 + n), sha, green=False).state
    commit(other, "a person's fix")
    git(other, "push", "--quiet", "origin", f"HEAD:refs/heads/{FIX}")
    chain = read_chain(runner, fetch_fix_branch(runner, FIX))
    assert len(chain) == 1 and chain[0].attempt is None
    assert assess(events(chain, state), 3).consecutive_failures == 0


def test_retry_resets_and_deleted_branch_is_gone(repos: tuple[Path, Path]) -> None:
    runner, other = repos
    a1 = attempt(other, 1, "r1")
    chain = read_chain(runner, fetch_fix_branch(runner, FIX))
    state = observe_run(ForgeState(escalated=True, escalation_posted=True), chain, "100", a1, False).state
    state = retry(state, chain)
    assert not state.escalated and not state.escalation_posted
    assert assess(events(chain, state), 3).consecutive_failures == 0
    git(other, "push", "--quiet", "origin", f":refs/heads/{FIX}")
    assert fetch_fix_branch(runner, FIX) is None


def test_foreign_or_broken_marker_is_empty_state() -> None:
    assert ForgeState.from_json(None) == ForgeState()
    assert ForgeState.from_json({"v": 2, "results": {"x": "failed"}}) == ForgeState()
    broken = ForgeState.from_json({"v": 1, "results": {"x": 3, "y": "failed"}, "resets": [["a"], 5],
                                   "tokens": -4, "escalated": "yes"})
    assert broken == ForgeState(results={"y": "failed"})


def test_locally_verified_failures_count_after_their_commit(repos: tuple[Path, Path]) -> None:
    from ci_agent.engine.marker_entries import Tried

    runner, other = repos
    chain = read_chain(runner, git(other, "rev-parse", "HEAD"))
    base = chain[-1].sha
    state = ForgeState(tried=(Tried(base, 1, "f" * 16, "e" * 16, "run-1"),
                              Tried(base, 2, "e" * 16, "", "run-2")))
    again = ForgeState.from_json(parse_marker(render_marker(state.to_json())))
    assert again == state
    budget = assess(events(chain, again), 3)
    assert budget.consecutive_failures == 2 and budget.no_progress("e" * 16)


def test_the_marker_ledger_counts_what_the_forge_state_counts(repos: tuple[Path, Path]) -> None:
    """The attempt engine reads its ledger (`ci_agent.engine.ledger`); over the marker it must
    agree with `events` on every kind of event: failed, passed, green run, rolled back."""
    from ci_agent.engine.gitops import reset_local_fix_branch
    from ci_agent.engine.ledger import MarkerLedger
    from ci_agent.engine.marker_entries import Tried

    runner, other = repos
    marker = ForgeState()
    shas = []
    for n in (1, 2, 3):
        shas.append(attempt(other, n, f"r{n}"))
        chain = read_chain(runner, fetch_fix_branch(runner, FIX))
        marker = observe_run(marker, chain, str(100 + n), shas[-1], green=(n == 2)).state
    marker = replace(marker, tried=(Tried(shas[-1], 2, "f" * 16, "e" * 16, "t-1"),))
    tip = fetch_fix_branch(runner, FIX)
    chain = read_chain(runner, tip)
    reset_local_fix_branch(runner, FIX, tip)
    ledger_budget = assess(MarkerLedger(runner, FIX, marker, chain, "200").events(), 3)
    forge_budget = assess(events(chain, marker), 3)
    assert (ledger_budget.consecutive_failures, forge_budget.consecutive_failures) == (2, 2)
    assert [f.number for f in ledger_budget.failures] == [f.number for f in forge_budget.failures] == [3, 2]
