"""The image run the way GitLab's Docker executor runs the include files' jobs.

The include files set `image: {name: ..., entrypoint: [""]}`: the runner then starts the image
with no entrypoint and feeds the job's `script:` lines to a shell, in the checkout at
`/builds/<group>/<project>` with the job's variables in the environment. Here: the jobs are
rendered from `pipelines/gitlab/*.yml` with `tests/gitlab/gitlab_ci.py` (GitLab's interpolation),
and their scripts run by `sh -e` inside the real image. No network is needed: the distill job
reads files only, and the fix job is given a fork's merge request pipeline, which it refuses
before any API call.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT
from tests.gitlab import gitlab_ci
from tests.image import buildah

BUILDS = "/builds/acme/shop"
EXAMPLES = REPO_ROOT / "examples" / "dotnet"
PIPELINES = REPO_ROOT / "pipelines" / "gitlab"


def _job(path: Path, name: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    config = gitlab_ci.render(path.read_text(), inputs or {})
    job: dict[str, Any] = config[name]
    assert job["image"]["entrypoint"] == [""], "GitLab's runner needs a shell, not our entrypoint"
    return job


def _checkout(tmp_path: Path) -> Path:
    """The job's checkout after earlier jobs' artifacts were restored into it."""
    work = tmp_path / "shop"
    results = work / "tests" / "Shop.Tests" / "TestResults"
    results.mkdir(parents=True)
    shutil.copy(EXAMPLES / "build.log", work / "build.log")
    shutil.copy(EXAMPLES / "results.trx", results / "results.trx")
    git = ["git", "-C", str(work), "-c", "user.name=CI", "-c", "user.email=ci@example.invalid"]
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "checkout"]):
        subprocess.run([*git, *argv], check=True, capture_output=True)
    return work


def _run_job(container: str, job: dict[str, Any], work: Path,
             extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    variables = {k: gitlab_ci.variable_text(v) for k, v in job.get("variables", {}).items()}
    env = {"GITLAB_CI": "true", "CI": "true", "CI_PROJECT_DIR": BUILDS, "HOME": "/root",
           # the runner marks the checkout safe for git itself
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*",
           **variables, **(extra or {})}
    return buildah.run_in(container, ["sh", "-e", "-c", "\n".join(job["script"])], env=env,
                          volumes={work: BUILDS}, workdir=BUILDS)


def test_the_distill_job_writes_the_reports_gitlab_reads(container: str, tmp_path: Path) -> None:
    work = _checkout(tmp_path)
    job = _job(PIPELINES / "ci-agent-distill.yml", "ci-agent-distill", {"build_logs": "build.log"})

    result = _run_job(container, job, work)

    assert result.returncode == 0, result.stderr
    junit = ET.parse(work / job["artifacts"]["reports"]["junit"]).getroot()
    cases = junit.findall(".//testcase")
    # the TRX's own <Counters>: 11 results, 5 failed, one not executed
    assert len(cases) == 11
    assert sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None) == 5
    issues = json.loads((work / job["artifacts"]["reports"]["codequality"]).read_text())
    # MSBuild's own summary of the log: 20 errors and 3 warnings, each printed twice
    assert len(issues) == 23
    assert all({"description", "check_name", "fingerprint", "severity", "location"} <= set(i) for i in issues)


def test_the_fix_job_refuses_a_fork_merge_request_and_leaves_its_outputs(
        container: str, tmp_path: Path) -> None:
    work = _checkout(tmp_path)
    job = _job(PIPELINES / "ci-agent.yml", "ci-agent-fix")
    fork_pipeline = {"CI_SERVER_URL": "https://gitlab.example.com", "CI_PROJECT_PATH": "acme/shop",
                     "CI_PROJECT_ID": "42", "CI_PIPELINE_ID": "900", "CI_COMMIT_SHA": "a" * 40,
                     "CI_COMMIT_REF_NAME": "refs/merge-requests/7/head", "CI_MERGE_REQUEST_IID": "7",
                     "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "main",
                     "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "4242", "CI_JOB_NAME": "ci-agent-fix",
                     "CI_JOB_TOKEN": "job-token-secret", "ANTHROPIC_API_KEY": "sk-ant-api03-image-test"}

    result = _run_job(container, job, work, fork_pipeline)

    assert result.returncode == 0, result.stderr
    assert "fork" in result.stdout
    outputs = dict(line.split("=", 1) for line in (work / "ci-agent.env").read_text().splitlines())
    assert outputs["CI_AGENT_OUTCOME"] == "refused"
    assert "fork" in (work / "ci-agent-summary.md").read_text()
    assert "job-token-secret" not in result.stdout + result.stderr


def test_a_fix_job_outside_gitlab_ci_says_so(container: str, tmp_path: Path) -> None:
    work = _checkout(tmp_path)
    job = _job(PIPELINES / "ci-agent.yml", "ci-agent-fix")

    result = _run_job(container, job, work)

    assert result.returncode == 2, result.stdout + result.stderr
    assert "CI_SERVER_URL" in result.stderr
    outputs = (work / "ci-agent.env").read_text()
    assert outputs == "CI_AGENT_OUTCOME=error\n", "later jobs can tell the fix job failed"
