"""`ci-agent fix --local` on a detached HEAD (issue 15, defect 9): the fix branch is named from
the commit, `ci-agent/fix/detached-<12 hex digits>`, and the output says so. Real git
repositories, the scripted model of tests/cli/test_fix_local.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ci_agent.cli.main import main
from ci_agent.engine import state
from ci_agent.engine.budget import AttemptRecord, AttemptResult
from ci_agent.platforms.local.source import LocalSource, local_source
from tests.cli.test_fix_local import FIXING, PYTEST, RIGHT, ScriptedClient, fix, no_model, sh, submit
from tests.cli.test_fix_local import repo as repo  # the fixture: a clone whose test fails


@pytest.fixture
def detached(repo: Path) -> tuple[Path, str]:
    """The repository checked out detached at its tip, as CI and `git checkout <tag>` leave it."""
    head = sh(repo, "rev-parse", "HEAD").strip()
    sh(repo, "checkout", "-q", "--detach", head)
    assert state.current_branch(repo) is None
    return repo, head


def test_a_detached_head_is_fixed_on_a_branch_named_from_the_commit(
        detached: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, head = detached
    client = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, client=lambda: client) == 0
    branch = f"ci-agent/fix/detached-{head[:12]}"
    assert sh(repo, "show", f"{branch}:calc.py") == RIGHT
    assert sh(repo, "rev-parse", f"{branch}^").strip() == head
    assert subprocess.run(["git", "check-ref-format", "--branch", branch]).returncode == 0
    # The user's checkout stays detached where it was.
    assert state.current_branch(repo) is None and state.rev(repo, "HEAD") == head
    err = capsys.readouterr().err
    assert f"HEAD is detached at {head[:12]}: the fix goes on {branch}" in err


def test_a_rerun_on_the_same_commit_continues_the_same_fix_branch(
        detached: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, head = detached
    first = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, client=lambda: first) == 0  # committed, verification pending
    branch = f"ci-agent/fix/detached-{head[:12]}"
    tip = state.rev(repo, branch)
    attempts = [e for e in state.read_events(repo, branch) if isinstance(e, AttemptRecord)]
    assert [a.result for a in attempts] == [AttemptResult.PENDING]
    capsys.readouterr()
    # The rerun runs the command on that branch's fix: green, so nothing to do and no model call.
    assert fix(repo, "--command", PYTEST, "--dry-run", client=no_model) == 0
    assert "nothing fails" in capsys.readouterr().out
    assert state.rev(repo, branch) == tip


def test_the_dry_run_says_so_in_its_json_events(detached: tuple[Path, str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo, head = detached
    refs_before = sh(repo, "for-each-ref")
    assert fix(repo, "--command", PYTEST, "--dry-run", "--json", client=no_model) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[0] == {"event": "detached_head", "note": f"HEAD is detached at {head[:12]}: the fix "
                         f"goes on ci-agent/fix/detached-{head[:12]}, a branch named from that commit"}
    assert [e["event"] for e in events[-2:]] == ["dry_run", "done"]
    assert events[-1]["branch"] == f"ci-agent/fix/detached-{head[:12]}"
    assert sh(repo, "for-each-ref") == refs_before  # a dry run creates no branch


def test_a_branch_and_a_ci_agent_branch_are_as_before(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert local_source(repo) == LocalSource("main", "ci-agent/fix/main", None)
    sh(repo, "checkout", "-q", "-b", "ci-agent/fix/main")
    assert main(["fix", "--local", "--repo", str(repo), "--command", PYTEST]) == 2
    assert "never fixes its own fixes" in capsys.readouterr().err


def test_a_detached_attempt_commit_of_ci_agent_is_refused(detached: tuple[Path, str],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo, head = detached
    client = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, client=lambda: client) == 0
    sh(repo, "checkout", "-q", "--detach", f"ci-agent/fix/detached-{head[:12]}")
    assert main(["fix", "--local", "--repo", str(repo), "--command", PYTEST]) == 2
    assert "an attempt commit of ci-agent; ci-agent never fixes its own fixes" in capsys.readouterr().err
