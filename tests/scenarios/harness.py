"""Driving `ci-agent fix --local` in-process against the loopback fake, and what the scenarios check
after a run: the fix branch and its trailers, the attempt record, the user's untouched working copy."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ci_agent.cli.main import main
from tests.platform_scenarios.base import FIX_BRANCH, ROOT_CAUSE, SUMMARY, trailers_of
from tests.scenarios.sample_repos import Sample, SampleRepo, apply_edit, create_sample_repo, git, working_copy

__all__ = ["ATTEMPTS_REF_PREFIX", "DUMMY_KEY", "FIX_BRANCH", "ROOT_CAUSE", "SUMMARY", "FixRun",
           "assert_clean_finish", "assert_fixed_on_branch", "attempt_refs", "branch_tip", "changed_files",
           "commits_on", "fix", "fixed_text", "trailers", "user_repo", "worktrees"]

ATTEMPTS_REF_PREFIX = "refs/ci-agent/attempts/"
DUMMY_KEY = "sk-ant-api03-scenario-dummy-key-0000"


@dataclass(frozen=True)
class FixRun:
    exit_code: int
    stdout: str
    stderr: str
    summary: str
    events: list[dict[str, Any]]

    def __str__(self) -> str:  # what an assertion message shows: the whole story of the run
        return f"exit {self.exit_code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"

    def names(self) -> list[str]:
        return [e["event"] for e in self.events]

    def of(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == name]


def fix(repo: SampleRepo, capfd: pytest.CaptureFixture[str], *extra: str, label: str = "run",
        commands: bool = True, plain: bool = False) -> FixRun:
    """`ci-agent fix --local --json --summary F`, with the sample's build and verify commands
    as flags (or, `commands=False`, whatever the repository's configuration says). `plain`: no
    `--json`/`--summary`, so the summary goes to stdout and human progress lines to stderr."""
    summary = repo.path.parent / f"{label}-summary.md"
    given = ["--command", repo.sample.command, "--verify", repo.sample.verify] if commands else []
    output = [] if plain else ["--json", "--summary", str(summary)]
    argv = ["fix", "--local", "--repo", str(repo.path), *given, *output, *extra]
    capfd.readouterr()  # start clean: only this run's output
    code = main(argv)
    out, err = capfd.readouterr()
    if plain:
        return FixRun(code, out, err, out, [])
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    text = summary.read_text(encoding="utf-8") if summary.exists() else ""
    return FixRun(code, out, err, text, events)


def branch_tip(repo: SampleRepo, branch: str) -> str | None:
    ref = f"refs/heads/{branch}^{{commit}}"
    return git(repo.path, "rev-parse", "--verify", "-q", ref, check=False).strip() or None


def trailers(repo: SampleRepo, rev: str) -> dict[str, list[str]]:
    return trailers_of(repo.path, rev)


def attempt_refs(repo: SampleRepo) -> list[str]:
    out = git(repo.path, "for-each-ref", "--format=%(refname)", ATTEMPTS_REF_PREFIX)
    return out.split()


def commits_on(repo: SampleRepo, ref: str, since: str | None = None) -> list[str]:
    spec = f"{since}..{ref}" if since else ref
    return git(repo.path, "rev-list", spec).split()


def changed_files(repo: SampleRepo, base: str, tip: str) -> list[str]:
    return git(repo.path, "diff", "--name-only", base, tip).split("\n")[:-1]


def worktrees(repo: Path) -> list[str]:
    return [line.split(" ", 1)[1] for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def user_repo(tmp_path: Path, sample: Sample, substitutions: dict[str, str] | None = None) -> SampleRepo:
    """The sample, with the user's own uncommitted work in it (which ci-agent must not touch)."""
    repo = create_sample_repo(tmp_path, sample, substitutions)
    readme = repo.path / "README.md"
    readme.write_text((readme.read_text() if readme.exists() else "") + "\nwork in progress\n")
    (repo.path / "notes.txt").write_text("my notes, not committed\n")
    (repo.path / "staged.txt").write_text("staged, not committed\n")
    repo.git("add", "staged.txt")
    return repo


def fixed_text(repo: SampleRepo) -> str:
    return apply_edit(repo.files[repo.sample.fix.path], repo.sample.fix)


def assert_fixed_on_branch(repo: SampleRepo, attempt: int) -> str:
    """The fix branch holds exactly the fix, on top of the failing commit, with our trailers."""
    tip = branch_tip(repo, FIX_BRANCH)
    assert tip is not None, f"no {FIX_BRANCH} branch"
    head = git(repo.path, "rev-parse", "main").strip()
    assert commits_on(repo, tip, since=head) == [tip], "one fix commit on top of the failing commit"
    assert changed_files(repo, head, tip) == [repo.sample.fix.path]
    assert git(repo.path, "show", f"{tip}:{repo.sample.fix.path}") == fixed_text(repo)
    found = trailers(repo, tip)
    assert found.get("CI-Agent-Attempt") == [str(attempt)], found
    assert found.get("CI-Agent-Result") == ["passed"], found
    return tip


def assert_clean_finish(repo: SampleRepo, before: object) -> None:
    assert working_copy(repo.path) == before, "the user's working copy, index or HEAD changed"
    assert worktrees(repo.path) == [str(repo.path)], "a worktree was left behind"
    remote = git(repo.path, "ls-remote", "--heads", "origin").split()
    assert remote[1::2] == ["refs/heads/main"], "fix --local must not push anything"
