"""The Dockerfile is built and the image run for real, the way GitHub runs a container action.

The build uses buildah (no Docker engine here) on a local Debian bookworm base instead of the
published python:3.12-slim (see tests/image/buildah.py). Cold, the first test pays for
installing buildah, debootstrapping the base and building (a few minutes); warm, buildah's layer
cache and the cached base make it seconds. Where the machine cannot do it the module is skipped
with the failing command and its stderr, never silently.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.image import buildah
from tests.image.github_step import WORKSPACE, GithubStep, entrypoint_command

# GitHub-hosted runners check out as uid 1001 while the container runs as root, which is what
# makes git's "dubious ownership" check bite inside container actions.
RUNNER_UID = 1001
BUILD_LOG = REPO_ROOT / "examples" / "dotnet" / "build.log"


def _package_version() -> str:
    with (REPO_ROOT / "pyproject.toml").open("rb") as handle:
        version: str = tomllib.load(handle)["project"]["version"]
    return version


def _msbuild_summary_counts(log: Path) -> tuple[int, int]:
    """What MSBuild itself says at the end of the log: `N Warning(s)` / `M Error(s)`."""
    text = log.read_text(encoding="utf-8-sig")
    warnings = re.search(r"^\s*(\d+) Warning\(s\)\s*$", text, re.MULTILINE)
    errors = re.search(r"^\s*(\d+) Error\(s\)\s*$", text, re.MULTILINE)
    assert warnings is not None and errors is not None, "the example log lost its MSBuild summary"
    return int(errors.group(1)), int(warnings.group(1))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout like actions/checkout leaves it: a git repo with the build log, owned by the
    runner's uid, not by the container's root."""
    repo = tmp_path / "workspace"
    repo.mkdir()
    shutil.copy(BUILD_LOG, repo / "build.log")
    git = ["git", "-C", str(repo), "-c", "user.name=CI", "-c", "user.email=ci@example.invalid"]
    for argv in (["init", "-q", "-b", "main"], ["add", "build.log"], ["commit", "-q", "-m", "build log"]):
        subprocess.run([*git, *argv], check=True, capture_output=True)
    shutil.chown(repo, RUNNER_UID, RUNNER_UID)
    for path in repo.rglob("*"):
        shutil.chown(path, RUNNER_UID, RUNNER_UID)
    return repo


@pytest.fixture
def step(tmp_path: Path, workspace: Path) -> GithubStep:
    event = {"ref": "refs/heads/main", "repository": {"full_name": "octo/app", "default_branch": "main"}}
    return GithubStep.create(tmp_path / "_temp", workspace, event)


def _head(repo: Path) -> str:
    return subprocess.run(["git", "-c", f"safe.directory={repo}", "-C", str(repo), "rev-parse", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()


def _run_step(image: buildah.Image, container: str, step: GithubStep,
              args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """`docker run` as the runner does it for a container action: mounts, env, workdir, ENTRYPOINT."""
    inputs = {"build-log": "build.log", "test-results": "**/*.trx", "mode": "pr", "max-attempts": "3"}
    env = step.env(inputs, repository="octo/app", sha=_head(step.workspace), ref="refs/heads/main",
                   event_name="push")
    command = entrypoint_command(image.entrypoint, image.cmd, args)
    return buildah.run_in(container, command, env=env, volumes=step.volumes(), workdir=WORKSPACE)


def test_image_config_is_a_container_action(image: buildah.Image) -> None:
    assert image.entrypoint == ("ci-agent",)
    assert image.working_dir == WORKSPACE
    assert image.labels["org.opencontainers.image.version"] == _package_version()


def test_version_inside_the_image_is_the_package_version(
        image: buildah.Image, container: str, step: GithubStep) -> None:
    result = _run_step(image, container, step, ["--version"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ci-agent {_package_version()}"


def test_without_args_the_image_runs_its_cmd(image: buildah.Image, container: str, step: GithubStep) -> None:
    """An action whose `args` are empty runs the image's CMD: help, exit 0."""
    result = _run_step(image, container, step, [])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: ci-agent")


def test_distill_reads_the_log_in_the_mounted_workspace(
        image: buildah.Image, container: str, step: GithubStep) -> None:
    errors, warnings = _msbuild_summary_counts(BUILD_LOG)
    assert (errors, warnings) == (20, 3)
    result = _run_step(image, container, step, ["distill", f"{WORKSPACE}/build.log", "--output", "json"])
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "ci-agent/report@1"
    assert [(s["path"], s["format"]) for s in report["sources"]] == [(f"{WORKSPACE}/build.log", "msbuild")]
    severities = [d["severity"] for d in report["diagnostics"]]
    assert (severities.count("error"), severities.count("warning")) == (errors, warnings)


def test_git_works_on_the_mounted_checkout_of_another_uid(
        image: buildah.Image, container: str, step: GithubStep) -> None:
    git = ["git", "-C", WORKSPACE]
    result = buildah.run_in(container, [*git, "rev-parse", "HEAD"], env=step.env(
        {}, repository="octo/app", sha="", ref="refs/heads/main", event_name="push"),
        volumes=step.volumes(), workdir=WORKSPACE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == _head(step.workspace)


def test_without_safe_directory_git_would_refuse_that_checkout(
        image: buildah.Image, container: str, step: GithubStep) -> None:
    """The control for the test above: the checkout really trips git's ownership check, so it
    is the image's `safe.directory` that makes git work there (an empty value clears the list)."""
    result = buildah.run_in(container, ["git", "-c", "safe.directory=", "-C", WORKSPACE, "rev-parse", "HEAD"],
                            volumes=step.volumes(), workdir=WORKSPACE)
    assert result.returncode != 0
    assert "dubious ownership" in result.stderr
