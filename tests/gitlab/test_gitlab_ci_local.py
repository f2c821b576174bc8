"""Our GitLab include files as a real GitLab CI implementation reads them: `gitlab-ci-local`
(tests/gitlab/ci_local.py) on a sample project whose `.gitlab-ci.yml` includes both files with
`include: local` + `inputs`. For every kind of pipeline, the jobs it creates (and their `when`)
must be exactly the README's table under "GitLab CI", parsed from README.md.

Push pipelines run on a real branch of the sample (gitlab-ci-local takes the branch from git);
what git cannot say (merge request, tag, fork, API and schedule sources, the commit message) is
given as `--variable`, as GitLab would predefine it.

Time: each listing takes 1.5-2 s on an idle machine (about 7 s while seven other test runs share
its two cores); the schema check adds about 2 s.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.gitlab import ci_local

ROOT = Path(__file__).resolve().parents[2]
PROJECT_ID = "42"
OURS = ("ci-agent-fix", "ci-agent-success", "ci-agent-command", "ci-agent-poll", "ci-agent-distill")
SAMPLE_CI = """\
stages: [build, test]
include:
  - local: ci/ci-agent.yml
    inputs:
      test_results: "**/*.trx, **/junit*.xml"
      build_logs: build.log
  - local: ci/ci-agent-distill.yml
    inputs:
      build_logs: build.log
build:
  stage: build
  script: [echo build]
test:
  stage: test
  script: [echo test]
"""


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ci_local.binary()
    root = tmp_path_factory.mktemp("gcl") / "shop"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / ".gitlab-ci.yml").write_text(SAMPLE_CI)
    (root / ".gitignore").write_text(".gitlab-ci-local/\n")
    ci_local.install_includes(root)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "CI with ci-agent")
    _git(root, "remote", "add", "origin", "https://gitlab.example.com/acme/shop.git")
    return root


def _mr(source: str, source_project: str = PROJECT_ID) -> dict[str, str]:
    return {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "7",
            "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": source, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
            "CI_MERGE_REQUEST_PROJECT_ID": PROJECT_ID, "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": source_project,
            "CI_COMMIT_REF_NAME": source}


# README row -> (branch checked out, variables, variables unset). A merge request pipeline and a
# tag pipeline have no CI_COMMIT_BRANCH (GitLab's predefined variables).
PIPELINES: dict[str, tuple[str, dict[str, str], tuple[str, ...]]] = {
    "push to a branch": ("feature/login", {}, ()),
    "merge request": ("feature/login", _mr("feature/login"), ("CI_COMMIT_BRANCH",)),
    "push to a fix branch `ci-agent/fix/*`": ("ci-agent/fix/main", {}, ()),
    "merge request from a fix branch": ("ci-agent/fix/feature/login", _mr("ci-agent/fix/feature/login"),
                                        ("CI_COMMIT_BRANCH",)),
    "push to another `ci-agent/*` branch": ("ci-agent/experiment", {}, ()),
    "an attempt's commit on the failing branch (modes `push`, `propose`)": (
        "feature/login", {"CI_COMMIT_MESSAGE": "Guard empty ratings\n\nCI-Agent-Attempt: 1\n"}, ()),
    "the fix branch's pipeline ci-agent creates through the API (after a push with `CI_JOB_TOKEN`)": (
        "ci-agent/fix/main", {"CI_PIPELINE_SOURCE": "api"}, ()),
    "tag": ("main", {"CI_COMMIT_TAG": "v1.0.0", "CI_COMMIT_REF_NAME": "v1.0.0"}, ("CI_COMMIT_BRANCH",)),
    "a fork's merge request": ("feature/login", _mr("feature/login", source_project="99"),
                               ("CI_COMMIT_BRANCH",)),
    "slash command (`CI_AGENT_COMMAND_NOTE_ID`, created by the relay or the poller)": (
        "main", {"CI_PIPELINE_SOURCE": "api", "CI_AGENT_COMMAND_MR_IID": "7",
                 "CI_AGENT_COMMAND_NOTE_ID": "1244"}, ()),
    "poll schedule (`CI_AGENT_POLL=true`)": (
        "main", {"CI_PIPELINE_SOURCE": "schedule", "CI_AGENT_POLL": "true"}, ()),
}
_WORDS = {"on failure": "on_failure", "on success": "on_success", "always": "always", "–": "never"}


def readme_table() -> dict[str, dict[str, str]]:
    """The README's pipeline table: row -> job -> `when` as gitlab-ci-local spells it."""
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- pipeline-jobs:", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("|")]
    header = [cell.strip().strip("`") for cell in rows[0].strip("|").split("|")]
    assert header == ["Pipeline", *OURS], header
    table: dict[str, dict[str, str]] = {}
    for line in rows[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        table[cells[0]] = {job: _WORDS[cell] for job, cell in zip(OURS, cells[1:], strict=True)}
    return table


def test_the_readme_table_covers_every_pipeline_kind() -> None:
    assert list(readme_table()) == list(PIPELINES)


@pytest.mark.parametrize("kind", list(PIPELINES), ids=["push", "mr", "fix-branch", "fix-branch-mr",
                                                      "other-ci-agent-branch", "attempt-commit",
                                                      "api-fix-branch", "tag", "fork-mr", "command", "poll"])
def test_each_pipeline_gets_the_jobs_the_readme_promises(project: Path, kind: str) -> None:
    branch, variables, unset = PIPELINES[kind]
    _git(project, "checkout", "-q", "-B", branch)
    jobs = ci_local.listed(project, {"CI_PROJECT_ID": PROJECT_ID, **variables}, unset)

    assert {job: jobs.get(job) for job in OURS} == readme_table()[kind]
    # The project's own jobs (no rules) are in every pipeline: the command and poll pipelines
    # too, as the README says.
    assert jobs["build"] == jobs["test"] == "on_success"


def test_the_include_files_pass_gitlabs_schema_as_gitlab_ci_local_bundles_it(project: Path) -> None:
    _git(project, "checkout", "-q", "-B", "main")
    done = ci_local.run(project, ["--list", "--json-schema-validation"])
    assert done.code == 0, done.stdout + done.stderr
    assert "ci-agent-fix" in done.stdout


def test_the_stage_and_prefix_inputs_reach_the_jobs(project: Path) -> None:
    """`include: local` with `inputs` is interpolated by gitlab-ci-local as by GitLab."""
    _git(project, "checkout", "-q", "-B", "custom")
    ci = SAMPLE_CI.replace("      build_logs: build.log\n  - local: ci/ci-agent-distill.yml",
                           "      build_logs: build.log\n      job_prefix: bot\n      stage: test\n"
                           "  - local: ci/ci-agent-distill.yml")
    (project / ".gitlab-ci.yml").write_text(ci)
    try:
        done = ci_local.run(project, ["--list-json", "--no-json-schema-validation"],
                            {"CI_PROJECT_ID": PROJECT_ID})
    finally:
        _git(project, "checkout", "-q", "--", ".gitlab-ci.yml")
    assert done.code == 0, done.stdout + done.stderr
    found = {job["name"]: job for job in _json(done.stdout)}
    assert found["bot-fix"]["stage"] == "test" and found["bot-fix"]["when"] == "on_failure"
    assert "ci-agent-fix" not in found


def _json(stdout: str) -> list[dict[str, object]]:
    import json

    data = json.loads(stdout[stdout.index("["):])
    assert isinstance(data, list)
    return data


def test_a_missing_emulator_fails_in_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="must not be skipped"):
        ci_local.binary()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        ci_local.binary()


def test_the_readme_words_are_the_only_ones_used() -> None:
    for row in readme_table().values():
        assert set(row.values()) <= set(_WORDS.values())
    assert re.search(r"gitlab-ci-local", (ROOT / "README.md").read_text())
