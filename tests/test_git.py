"""The thin git layer against real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_agent import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "a.txt").write_text("a\n")
    subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e.x", "commit", "-q", "--allow-empty",
                    "-m", "init"], cwd=path, check=True)
    return path


def test_toplevel_from_subdir(repo: Path) -> None:
    (repo / "sub").mkdir()
    assert git.toplevel(repo / "sub") == repo.resolve()


def test_toplevel_outside_a_repo_raises(tmp_path: Path) -> None:
    with pytest.raises(git.GitError, match="rev-parse failed"):
        git.toplevel(tmp_path)


def test_status_and_diffs(repo: Path) -> None:
    assert "? a.txt" in git.status_v2(repo)
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    assert "+a" in git.diff(repo, cached=True)
    (repo / "a.txt").write_text("b\n")
    assert "+b" in git.diff(repo)


def test_apply_check_does_not_write_and_reports(repo: Path) -> None:
    patch = ("diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n"
             "@@ -0,0 +1 @@\n+n\n")
    assert git.apply(repo, patch, check=True).ok
    assert not (repo / "n.txt").exists()
    assert git.apply(repo, patch).ok
    assert (repo / "n.txt").read_text() == "n\n"
    failed = git.apply(repo, patch, check=True)
    assert not failed.ok and "already exists" in failed.stderr


def test_write_and_read_tree_round_trip(repo: Path) -> None:
    tree = git.write_tree(repo)
    (repo / "b.txt").write_text("b\n")
    subprocess.run(["git", "add", "b.txt"], cwd=repo, check=True)
    assert git.index_mode(repo, "b.txt") == "100644"
    git.read_tree(repo, tree)
    assert git.index_mode(repo, "b.txt") is None


def test_trailers_commit_identity_and_config(repo: Path) -> None:
    message = git.add_trailers(repo, "Subject\n\nBody\n", [("CI-Agent-Attempt", "1"), ("CI-Agent-Run", "r")])
    assert message.endswith("\n\nCI-Agent-Attempt: 1\nCI-Agent-Run: r\n")
    subprocess.run(["git", "config", "user.name", "Repo Config Person"], cwd=repo, check=True)
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    sha = git.commit(repo, message, git.Identity("Bot", "bot@example.com"))
    assert sha == git.head(repo)
    who = subprocess.run(["git", "log", "-1", "--format=%an %ae %cn %ce"], cwd=repo, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert who == "Bot bot@example.com Bot bot@example.com"  # config cannot override the identity
    assert git.config_get(repo, "user.name") == "Repo Config Person"
    assert git.config_get(repo, "no.such-key") is None


def test_push_to_bare_origin(repo: Path, tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    git.push(repo, str(origin), "HEAD:refs/heads/ci-agent/x")
    out = subprocess.run(["git", "rev-parse", "ci-agent/x"], cwd=origin, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == git.head(repo)


def test_timeout_is_an_error_not_a_hang(repo: Path) -> None:
    # a git alias running `sleep` stands in for a hung network or hook
    with pytest.raises(git.GitError, match="timed out"):
        git.git_ok(repo, ["-c", "alias.hang=!sleep 30", "hang"], timeout=0.5)
