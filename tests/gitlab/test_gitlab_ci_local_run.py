"""A red pipeline of the Python sample, run by `gitlab-ci-local` in shell mode, reaches our
`ci-agent-fix` job, which fixes it against the GitLab and Anthropic fakes; the fix branch's green
pipeline then reaches `ci-agent-success`, which marks the merge request ready. A slash command's
pipeline runs `ci-agent-command` (and no fix job, though the project's test job fails there).

The sample project's `.gitlab-ci.yml` is what the README tells a project to write: a test job
that keeps its JUnit file as an artifact (`when: always`), and our two include files (copied
byte for byte) with `include: local` + `inputs`. Every job runs for real in its own copy of the
project (`--shell-isolation`; `--force-shell-executor` since no container engine is here, so the
`image:` is not pulled): the sample's pytest, `ci-agent fix --gitlab` from this test's environment
(its bin folder first on PATH), git pushing to the sample's bare origin. The job's predefined
variables are gitlab-ci-local's, with what it cannot know set as `--variable`: the fake's URL,
project and pipeline id, the job token, and the CI/CD variables (key and access token). The fake
serves the test job's trace and artifacts from the files gitlab-ci-local wrote
(tests/fakes/gitlab_fake_runner.py).

Time: the red pipeline takes about 40 s, the green one about 27 s and the command one about 33 s
on a 2-core machine shared with seven other test runs (most of it Python start-up and git).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_agent.engine.forge import parse_marker
from tests.fakes.anthropic_fake import AnthropicFake
from tests.fakes.fixtures import anthropic_fake
from tests.fakes.gitlab_fake_routes import FakeJob
from tests.fakes.gitlab_fake_runner import RunnerBackedGitLabFake
from tests.github_scenarios.harness import API_KEY, ROOT_CAUSE, SUMMARY
from tests.github_scenarios.steps import diff
from tests.gitlab import ci_local
from tests.gitlab_commands.harness import DEV, DEV_TOKEN, CommandFake
from tests.gitlab_scenarios.harness import BOT, BOT_TOKEN, FIX_BRANCH, JOB_TOKEN, parse_dotenv
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, SampleRepo, apply_edit, create_sample_repo, git

__all__ = ["anthropic_fake"]

RATINGS = PYTHON.fix.path
TEST_JOB = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider --junitxml=test-results/junit.xml"
SAMPLE_CI = f"""\
stages: [test]
include:
  - local: ci/ci-agent.yml
    inputs:
      test_results: "**/junit*.xml"
  - local: ci/ci-agent-distill.yml
    inputs:
      test_results: "**/junit*.xml"
test:
  stage: test
  variables:
    PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1"
  script:
    - {TEST_JOB}
  artifacts:
    when: always
    paths: [test-results/]
"""


@pytest.fixture
def project(tmp_path: Path) -> SampleRepo:
    ci_local.binary()
    repo = create_sample_repo(tmp_path, PYTHON)
    (repo.path / ".gitlab-ci.yml").write_text(SAMPLE_CI)
    (repo.path / ".gitignore").write_text(".gitlab-ci-local/\n__pycache__/\ntest-results/\n")
    ci_local.install_includes(repo.path)
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "CI: tests, and ci-agent")
    git(repo.path, "push", "-q", "origin", "main")
    return repo


class Fake(RunnerBackedGitLabFake, CommandFake):
    """Jobs served from gitlab-ci-local's files, and the people of the command scenarios."""


@pytest.fixture
def gitlab(project: SampleRepo) -> Iterator[Fake]:
    fake = Fake(project.origin)
    with fake:
        # gitlab-ci-local derives the project's variables from the remote `gcl-origin` when there
        # is one: the project's URL on the "server". Git itself uses `origin`, the bare repository
        # (the fake speaks the API, not git).
        git(project.path, "remote", "add", "gcl-origin", f"{fake.url}/{fake.project_path}.git")
        yield fake
    assert fake.failures == [], fake.failures


def job_environment() -> dict[str, str]:
    """What the shell runner's jobs inherit: this test's `ci-agent` first on PATH, the fakes'
    endpoints, nothing else of the test process (no real key, no CI variables of our own CI)."""
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
    return {"PATH": path, "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/root"),
            "CI_AGENT_GITLAB_THROTTLE": "0"}


def job_log(project: SampleRepo, job: str) -> str:
    path = project.path / ".gitlab-ci-local" / "output" / f"{job}.log"
    return path.read_text() if path.exists() else ""


def test_a_red_pipeline_reaches_the_fix_job_and_the_fix_branchs_green_one_the_success_job(
        project: SampleRepo, gitlab: RunnerBackedGitLabFake, anthropic_fake: AnthropicFake) -> None:
    fixed = apply_edit(project.files[RATINGS], PYTHON.fix)
    anthropic_fake.reply(model.submit_patch(diff(project.files[RATINGS], fixed), summary=SUMMARY,
                                            root_cause=ROOT_CAUSE))
    env = job_environment()
    env["CI_AGENT_ANTHROPIC_BASE_URL"] = anthropic_fake.base_url

    red, red_id = pipeline_with(project, gitlab, "failed", env, "ci-agent-fix")

    out = red.stdout + red.stderr
    assert red.code == 1, out  # the pipeline failed: its test job did
    fix_log = job_log(project, "ci-agent-fix")
    assert "ci-agent: committed:" in fix_log, out + fix_log
    assert "PASS  ci-agent-fix" in out and "FAIL  test" in out, out
    assert "ci-agent-success" not in out and "ci-agent-command" not in out and "ci-agent-poll" not in out
    # the merge request and the status note the fix job opened, as the fake recorded them
    (mr,) = [m for m in gitlab.merge_requests.values() if m["source_branch"] == FIX_BRANCH]
    assert mr["target_branch"] == "main" and mr["draft"] is True and "ci-agent" in mr["labels"]
    notes = [n for n in gitlab.notes.get(mr["iid"], []) if parse_marker(n["body"]) is not None]
    assert len(notes) == 1 and notes[0]["author"]["username"] == BOT
    assert git(project.origin, "show", f"refs/heads/{FIX_BRANCH}:{RATINGS}") == fixed
    # the report came from the test job's trace and its artifacts, fetched from the "server"
    report = model.first_user_text(anthropic_fake.message_requests[0])
    assert "test_no_ratings_yet" in report and "junit.xml" in report
    assert gitlab.requests_to("GET", r"/projects/(42|acme/shop)/jobs/\d+/artifacts")
    dotenv = parse_dotenv((project.path / ".gitlab-ci-local" / "builds" / "ci-agent-fix" / "ci-agent.env")
                          .read_text())
    assert dotenv["CI_AGENT_OUTCOME"] == "committed" and dotenv["CI_AGENT_MR_IID"] == str(mr["iid"])
    builds = project.path / ".gitlab-ci-local" / "builds"
    assert not (builds / "ci-agent-fix" / "test-results").exists(), "dependencies: [] (read through the API)"
    # the distill job ran too (always) and turned the JUnit artifact into GitLab's reports
    assert "PASS  ci-agent-distill" in out
    assert "test_no_ratings_yet" in (builds / "ci-agent-distill" / "ci-agent-junit.xml").read_text()
    print(f"red pipeline {red_id}: {red.seconds:.1f} s")

    git(project.path, "fetch", "-q", "origin")
    git(project.path, "checkout", "-q", "-B", FIX_BRANCH, f"origin/{FIX_BRANCH}")
    green, _ = pipeline_with(project, gitlab, "success", env, "ci-agent-success")

    out = green.stdout + green.stderr
    assert green.code == 0, out
    assert "PASS  ci-agent-success" in out and "ci-agent-fix" not in out, out
    assert "ci-agent: fixed:" in job_log(project, "ci-agent-success"), out
    ready = gitlab.merge_requests[mr["iid"]]
    assert ready["draft"] is False and not ready["title"].lower().startswith("draft")
    assert len(anthropic_fake.message_requests) == 1, "a green pipeline asks the model nothing"
    print(f"green pipeline: {green.seconds:.1f} s")


def pipeline_with(project: SampleRepo, gitlab: RunnerBackedGitLabFake, status: str,
                  env: dict[str, str], our_job: str, more: dict[str, str] | None = None
                  ) -> tuple[ci_local.Run, int]:
    """Register the pipeline at the checkout's HEAD in the fake (its test job served from what
    gitlab-ci-local writes), then let gitlab-ci-local run all of it. `our_job` is the ci-agent
    job expected to run: gitlab-ci-local gives a job with an `image:` the container's
    CI_PROJECT_DIR (/builds/<group>/<project>) even under --force-shell-executor, so the folder
    that job really runs in (--shell-isolation: .gitlab-ci-local/builds/<job>) is set here."""
    branch = git(project.path, "branch", "--show-current").strip()
    sha = git(project.path, "rev-parse", "HEAD").strip()
    state = project.path / ".gitlab-ci-local"
    pipeline_id = gitlab.add_pipeline(branch, sha, status, [FakeJob("test", status)])
    (job_id,) = gitlab.job_ids(pipeline_id)
    gitlab.follow(job_id, state / "output" / "test.log", state / "artifacts" / "test")
    variables = {
        "GITLAB_CI": "true", "CI_SERVER_URL": gitlab.url, "CI_API_V4_URL": f"{gitlab.url}/api/v4",
        "CI_SERVER_FQDN": gitlab.url.split("//", 1)[1], "CI_PROJECT_PATH": gitlab.project_path,
        "CI_PROJECT_ID": str(gitlab.project_id), "CI_PIPELINE_ID": str(pipeline_id),
        "CI_JOB_TOKEN": JOB_TOKEN,
        "GITLAB_USER_LOGIN": "maint", "CI_PROJECT_DIR": str(state / "builds" / our_job),
        "CI_COMMIT_MESSAGE": git(project.path, "log", "-1", "--format=%B").strip(),
        # CI/CD variables (Settings > CI/CD > Variables)
        "ANTHROPIC_API_KEY": API_KEY, "CI_AGENT_GITLAB_TOKEN": BOT_TOKEN, **(more or {}),
    }
    flags = ["--force-shell-executor", "--shell-isolation", "--no-artifacts-to-source",
             "--no-json-schema-validation"]
    return ci_local.run(project.path, flags, variables, env=env), pipeline_id


def open_mr(gitlab: Fake, source: str, title: str, token: str) -> int:
    """A person opens a merge request into main through the API, as the web UI does."""
    data = json.dumps({"source_branch": source, "target_branch": "main", "title": title}).encode()
    request = urllib.request.Request(f"{gitlab.url}/api/v4/projects/{gitlab.project_id}/merge_requests",
                                     data=data, method="POST",
                                     headers={"PRIVATE-TOKEN": token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return int(json.load(reply)["iid"])


def test_a_command_pipeline_runs_the_command_job_and_no_fix_job(
        project: SampleRepo, gitlab: Fake, anthropic_fake: AnthropicFake) -> None:
    """The pipeline the relay or the poller creates on the default branch for one note: the
    command job answers it; the project's own test job runs and fails there too (main is red), yet
    no fix job starts (its rules skip command pipelines)."""
    git(project.path, "checkout", "-q", "-b", "feature/stars")
    (project.path / "NOTES.md").write_text("A person's note.\n")
    git(project.path, "add", "NOTES.md")
    git(project.path, "commit", "-q", "-m", "docs: a note")
    git(project.path, "push", "-q", "origin", "feature/stars")
    git(project.path, "checkout", "-q", "main")
    iid = open_mr(gitlab, "feature/stars", "Stars", DEV_TOKEN)
    note = gitlab.add_note(iid, "/ci-agent help", DEV)
    env = job_environment()
    env["CI_AGENT_ANTHROPIC_BASE_URL"] = anthropic_fake.base_url

    command = {"CI_PIPELINE_SOURCE": "api", "CI_AGENT_COMMAND_MR_IID": str(iid),
               "CI_AGENT_COMMAND_NOTE_ID": str(note)}
    done, _ = pipeline_with(project, gitlab, "failed", env, "ci-agent-command", command)

    out = done.stdout + done.stderr
    assert "PASS  ci-agent-command" in out and "FAIL  test" in out, out
    assert "ci-agent-fix" not in out and "ci-agent-distill" not in out, out
    assert gitlab.awards(note) == [("eyes", BOT)], "acknowledged once, by the access token's user"
    answers = [n for n in gitlab.notes.get(iid, []) if parse_marker(n["body"]) is not None]
    assert len(answers) == 1 and "`/ci-agent fix" in answers[0]["body"], answers
    assert anthropic_fake.message_requests == []
    print(f"command pipeline: {done.seconds:.1f} s")
