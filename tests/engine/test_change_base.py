"""`engine.change_base`: the pull request's target as a local ref, on real clones (issue 15)."""

from __future__ import annotations

from pathlib import Path

from ci_agent.config import ContextSettings, Settings
from ci_agent.engine.change_base import BASE_PREFIX, target_ref, with_change_base
from ci_agent.git import git_ok

IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]


def _origin(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    git_ok(work, ["init", "-q", "-b", "main"])
    (work / "a.txt").write_text("a\n")
    git_ok(work, ["add", "-A"])
    git_ok(work, [*IDENTITY, "commit", "-q", "-m", "a"])
    git_ok(work, ["branch", "topic"])
    origin = tmp_path / "origin.git"
    git_ok(tmp_path, ["clone", "-q", "--bare", str(work), str(origin)])
    return origin


def test_a_full_checkout_uses_the_remote_tracking_branch(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    clone = tmp_path / "clone"
    git_ok(tmp_path, ["clone", "-q", "--branch", "topic", f"file://{origin}", str(clone)])
    assert target_ref(clone, "main", []) == "refs/remotes/origin/main"


def test_a_single_branch_checkout_fetches_the_target(tmp_path: Path) -> None:
    # a GitLab job fetches only its own branch
    origin = _origin(tmp_path)
    clone = tmp_path / "clone"
    git_ok(tmp_path, ["clone", "-q", "--single-branch", "--branch", "topic", f"file://{origin}", str(clone)])
    assert target_ref(clone, "main", []) == BASE_PREFIX + "main"
    assert target_ref(clone, "no-such-branch", []) is None


def test_an_explicit_base_ref_wins_and_no_target_changes_nothing(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    clone = tmp_path / "clone"
    git_ok(tmp_path, ["clone", "-q", "--branch", "topic", f"file://{origin}", str(clone)])
    configured = Settings(context=ContextSettings(base_ref="origin/topic"))
    assert with_change_base(configured, clone, "main", []) is configured
    assert with_change_base(Settings(), clone, None, []) == Settings()
    assert with_change_base(Settings(), clone, "main", []).context.base_ref == "refs/remotes/origin/main"
