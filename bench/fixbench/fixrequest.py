"""A case as a real git repository, and ci-agent's first request for it (`fix --local --dry-run`).

The repository: before/ committed as "initial" on `main`, then a branch `change` holding
break.diff committed with the case's break_message (the change under test), checked out. The
case's outputs are copied beside the repository (`<work>/outputs/`, not tracked) and passed by
relative path, so the request does not depend on where the temp folder is.

ci-agent runs as `<python> -m ci_agent ...` with the temp folder as working directory, so the
interpreter chosen (`--python`) decides which checkout builds the request.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixcase import Case, apply_diff, copy_tree, git_env

BRANCH = "change"
_IDENTITY = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
             "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}
# Fixed dates: the same case gives the same commit ids, so request bytes compare across runs.
_DATES = ("2026-01-05T10:00:00+00:00", "2026-01-06T15:30:00+00:00")


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**git_env(repo), **_IDENTITY}
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=True).stdout


def build_repo(case: Case, repo: Path) -> None:
    """before/ on main ("initial"), break.diff committed on `change`, which is checked out."""
    copy_tree(case.before, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial", date=_DATES[0])
    _git(repo, "checkout", "-q", "-b", BRANCH)
    apply_diff(case.break_diff, repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", case.break_message, date=_DATES[1])


def build_plain_repo(repo: Path) -> None:
    """For a report-only log (no project): a repository with one README commit on `change`."""
    repo.mkdir(parents=True)
    (repo / "README.md").write_text("Report-only: the project of this log is not included.\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial", date=_DATES[0])
    _git(repo, "checkout", "-q", "-b", BRANCH)


def tracked_files(repo: Path) -> dict[str, list[str]]:
    """Every tracked file's lines (undecodable bytes replaced), by repository path."""
    names = _git(repo, "ls-files", "-z").split("\0")
    return {name: (repo / name).read_text(encoding="utf-8", errors="replace").splitlines()
            for name in names if name and (repo / name).is_file()}


def stage_outputs(files: dict[str, list[Path]], work: Path) -> list[str]:
    """Copy input files to `<work>/outputs/` and return the ci-agent input flags naming them."""
    flags: list[str] = []
    flag_of = {"build_log": "--build-log", "junit": "--test-results", "trx": "--test-results"}
    for kind, paths in files.items():
        for index, source in enumerate(paths):
            target = work / "outputs" / (f"{index}-{source.name}" if len(paths) > 1 else source.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            flags += [flag_of[kind], str(target.relative_to(work))]
    return flags


def agent_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A local run: no forge or CI variables, our own HOME, no Python path leaking in."""
    drop = ("CI_AGENT_", "GITHUB_", "GITLAB_", "CI_", "INPUT_", "PYTHONPATH", "ANTHROPIC_")
    env = {key: value for key, value in os.environ.items() if not key.startswith(drop) and key != "CI"}
    env.update({"HOME": str(home), "LC_ALL": "C.UTF-8", **(extra or {})})
    return env


@dataclass(frozen=True)
class DryRun:
    request: dict[str, Any] | None
    exit_code: int
    stderr: str


def dry_run(python: str, work: Path, input_flags: list[str], timeout: float = 300) -> DryRun:
    """`<python> -m ci_agent fix --local --dry-run` on `<work>/repo`: the exact first request."""
    home = work / "home"
    home.mkdir(exist_ok=True)
    argv = [python, "-m", "ci_agent", "fix", "--local", "--dry-run", "--repo", "repo", *input_flags]
    done = subprocess.run(argv, cwd=work, env=agent_env(home), capture_output=True, text=True,
                          timeout=timeout, check=False)
    request: dict[str, Any] | None = None
    if done.returncode == 0:
        try:
            parsed = json.loads(done.stdout)
        except ValueError:
            parsed = None
        request = parsed if isinstance(parsed, dict) else None
    return DryRun(request, done.returncode, done.stderr)


def request_bytes(request: dict[str, Any]) -> int:
    """The body's size as ci-agent measures it (compact JSON, UTF-8)."""
    return len(json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def checkout_of(python: str) -> str:
    """Which ci_agent package `python` imports (run outside any checkout)."""
    done = subprocess.run([python, "-c", "import ci_agent, os; print(os.path.dirname(ci_agent.__file__))"],
                          cwd="/", capture_output=True, text=True, check=False, timeout=60)
    return str(Path(done.stdout.strip()).parent) if done.returncode == 0 else "?"
