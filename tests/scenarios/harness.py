"""Driving `ci-agent fix --local` in-process against the loopback Anthropic fake."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ci_agent.main import main
from tests.scenarios.sample_repos import SampleRepo, git

ATTEMPTS_REF_PREFIX = "refs/ci-agent/attempts/"


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


def fix(repo: SampleRepo, capfd: pytest.CaptureFixture[str], *extra: str, label: str = "run") -> FixRun:
    """`ci-agent fix --local --json --summary F` with the sample's build and verify commands."""
    summary = repo.path.parent / f"{label}-summary.md"
    argv = ["fix", "--local", "--repo", str(repo.path), "--command", repo.sample.command,
            "--verify", repo.sample.verify, "--json", "--summary", str(summary), *extra]
    capfd.readouterr()  # start clean: only this run's output
    code = main(argv)
    out, err = capfd.readouterr()
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    text = summary.read_text(encoding="utf-8") if summary.exists() else ""
    return FixRun(code, out, err, text, events)


def branch_tip(repo: SampleRepo, branch: str) -> str | None:
    ref = f"refs/heads/{branch}^{{commit}}"
    return git(repo.path, "rev-parse", "--verify", "-q", ref, check=False).strip() or None


def trailers(repo: SampleRepo, rev: str) -> dict[str, list[str]]:
    out = git(repo.path, "log", "-1", "--format=%(trailers:only,unfold)", rev)
    found: dict[str, list[str]] = {}
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            found.setdefault(key.strip(), []).append(value.strip())
    return found


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
