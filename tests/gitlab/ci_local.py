"""`gitlab-ci-local` (https://github.com/firecow/gitlab-ci-local), a GitLab CI emulator no one here
wrote, run on a sample project that includes our files with `include: local` + `inputs`.

tests/install-tools (part of the README's test command) installs the pinned version from the npm
registry (4.74+ needs a newer Node than Debian's; 4.70.1 needs `rsync` for `--shell-isolation`).
Missing outside CI: the tests skip. Missing in CI (`CI=true`): they fail, since a skipped emulator
would prove nothing while looking green."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

VERSION = "4.70.1"
PIPELINES = Path(__file__).resolve().parents[2] / "pipelines" / "gitlab"
# Variables we override on purpose (a pipeline source gitlab-ci-local cannot know from git):
# without this list it prints a warning for each.
_PREDEFINED = ("CI_PIPELINE_SOURCE,CI_PROJECT_ID,CI_COMMIT_MESSAGE,CI_COMMIT_REF_NAME,CI_COMMIT_BRANCH,"
               "CI_COMMIT_TAG,CI_PROJECT_DIR,CI_SERVER_URL,CI_API_V4_URL,CI_PROJECT_PATH,CI_PIPELINE_ID,"
               "GITLAB_CI,GITLAB_USER_LOGIN,CI_JOB_TOKEN,CI_SERVER_FQDN")


def binary() -> str:
    """The gitlab-ci-local to run: skip when absent outside CI, fail when absent in CI."""
    found = shutil.which("gitlab-ci-local")
    in_ci = os.environ.get("CI") == "true"
    if found is None:
        message = (f"gitlab-ci-local is not installed (npm install -g gitlab-ci-local@{VERSION}, "
                   "as tests/install-tools does)")
        if in_ci:
            pytest.fail(message + "; in CI this must not be skipped")
        pytest.skip(message)
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False,
                             timeout=60).stdout.strip()
    if in_ci and version != VERSION:
        pytest.fail(f"gitlab-ci-local {version} is installed; CI pins {VERSION}")
    return found


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float


def run(project: Path, args: Sequence[str], variables: Mapping[str, str] | None = None,
        unset: Sequence[str] = (), env: Mapping[str, str] | None = None, timeout: float = 300) -> Run:
    """`gitlab-ci-local ARGS` in `project` with `--variable` overrides, its own HOME folder and
    the environment `env` (default: PATH and locale only, so nothing of ours reaches a job)."""
    argv = [binary(), "--no-color", "--home", str(project.parent / "gcl-home"),
            "--ignore-predefined-vars", _PREDEFINED, *args]
    for name, value in (variables or {}).items():
        argv += ["--variable", f"{name}={value}"]
    for name in unset:
        argv += ["--unset-variable", name]
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(project.parent)}
    started = time.monotonic()
    done = subprocess.run(argv, cwd=project, env=dict(env or base), capture_output=True, text=True,
                          check=False, timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def listed(project: Path, variables: Mapping[str, str], unset: Sequence[str] = ()) -> dict[str, str]:
    """Every job of the pipeline gitlab-ci-local would create, with its `when` (`never` when the
    rules leave it out). Without the JSON-schema check (seconds each; one test does it)."""
    done = run(project, ["--list-json", "--no-json-schema-validation"], variables, unset)
    assert done.code == 0, f"gitlab-ci-local --list-json failed:\n{done.stdout}\n{done.stderr}"
    jobs: list[dict[str, Any]] = json.loads(done.stdout[done.stdout.index("["):])
    return {str(job["name"]): str(job["when"]) for job in jobs}


def install_includes(project: Path) -> None:
    """Our include files, byte for byte, where the sample's .gitlab-ci.yml includes them locally."""
    target = project / "ci"
    target.mkdir(exist_ok=True)
    for name in ("ci-agent.yml", "ci-agent-distill.yml"):
        shutil.copyfile(PIPELINES / name, target / name)
