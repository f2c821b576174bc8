"""`ci-agent fix --gitlab` reads its job: inputs (CI_AGENT_INPUT_*), secrets (CI/CD variables),
GitLab's predefined CI_* variables, and what it may touch (forks never, ci-agent branches not
again, tags have no branch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent import git
from ci_agent.engine.gitops import auth_config
from ci_agent.engine.types import ActionInputs
from ci_agent.errors import UsageError
from ci_agent.platforms.gitlab.cycle import own_job_prefix
from ci_agent.platforms.gitlab.env import (
    GITLAB_INPUT_NAMES,
    gitlab_context,
    gitlab_input_env_name,
    gitlab_inputs,
    gitlab_trigger,
)
from ci_agent.platforms.gitlab.output import write_dotenv

JOB = {"GITLAB_CI": "true", "CI_SERVER_URL": "https://gitlab.example.com", "CI_PROJECT_PATH": "acme/shop",
       "CI_PROJECT_ID": "42", "CI_PIPELINE_ID": "900", "CI_COMMIT_SHA": "a" * 40, "CI_COMMIT_BRANCH": "main",
       "CI_COMMIT_REF_NAME": "main", "CI_PROJECT_DIR": "/builds/acme/shop", "GITLAB_USER_LOGIN": "dev",
       "CI_JOB_TOKEN": "job-token-1", "CI_AGENT_TRIGGER": "on_failure"}


def test_defaults_when_the_include_passes_empty_inputs() -> None:
    env = {gitlab_input_env_name(n): "" for n in GITLAB_INPUT_NAMES}
    assert gitlab_inputs(env) == ActionInputs()


def test_every_input_and_secret_is_read() -> None:
    env = {"CI_AGENT_INPUT_BUILD_LOGS": "build.log\nlogs/*.log", "CI_AGENT_INPUT_TEST_RESULTS": "**/*.xml",
           "CI_AGENT_INPUT_VERIFY": "dotnet test", "CI_AGENT_INPUT_MODE": "pr",
           "CI_AGENT_INPUT_MAX_ATTEMPTS": "2", "CI_AGENT_INPUT_MODEL": "claude-x",
           "CI_AGENT_INPUT_CONFIG": "ci/agent.yml", "CI_AGENT_INPUT_DRAFT": "false",
           "CI_AGENT_INPUT_DRY_RUN": "true", "ANTHROPIC_API_KEY": "sk-ant-k",
           "CI_AGENT_GITLAB_TOKEN": " glpat-x "}
    got = gitlab_inputs(env)
    assert got == ActionInputs("sk-ant-k", "glpat-x", ("build.log", "logs/*.log"), ("**/*.xml",),
                               "dotnet test", "pr", 2, "claude-x", "ci/agent.yml", "", False, True)


@pytest.mark.parametrize(("name", "value", "words"), [
    ("CI_AGENT_INPUT_MODE", "yolo", "mode"), ("CI_AGENT_INPUT_MAX_ATTEMPTS", "99", "max_attempts"),
    ("CI_AGENT_INPUT_DRAFT", "yes", "draft")])
def test_bad_inputs_are_usage_errors(name: str, value: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        gitlab_inputs({name: value})


@pytest.mark.parametrize(("change", "words"), [
    ({"CI_SERVER_URL": ""}, "CI_SERVER_URL"), ({"CI_SERVER_URL": "gitlab.example.com"}, "CI_SERVER_URL"),
    ({"CI_PROJECT_PATH": "shop"}, "CI_PROJECT_PATH"), ({"CI_PROJECT_PATH": "a/../b c"}, "CI_PROJECT_PATH"),
    ({"CI_AGENT_TRIGGER": "always"}, "CI_AGENT_TRIGGER")])
def test_a_job_that_is_not_gitlab_ci_is_refused_clearly(change: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        gitlab_context({**JOB, **change})


def test_a_branch_pipeline() -> None:
    trig = gitlab_trigger(gitlab_context(JOB))
    assert (trig.kind, trig.branch, trig.run_id, trig.conclusion, trig.pr_number, trig.actor) == (
        "pipeline", "main", "900", "failure", None, "dev")
    assert not trig.refused and not trig.skipped and trig.failed
    assert gitlab_context(JOB).project_dir == Path("/builds/acme/shop")


def test_a_merge_request_pipeline_names_its_source_branch_and_mr() -> None:
    env = {**JOB, "CI_COMMIT_BRANCH": "", "CI_COMMIT_REF_NAME": "refs/merge-requests/7/head",
           "CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/x",
           "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "42"}
    trig = gitlab_trigger(gitlab_context(env))
    assert (trig.branch, trig.pr_number, trig.refused) == ("feature/x", 7, "")


def test_a_fork_merge_request_is_refused() -> None:
    env = {**JOB, "CI_MERGE_REQUEST_IID": "8", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "main",
           "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "4242"}
    trig = gitlab_trigger(gitlab_context(env))
    assert "fork" in trig.refused and "4242" in trig.refused


@pytest.mark.parametrize(("change", "words"), [
    ({"CI_COMMIT_BRANCH": "", "CI_COMMIT_REF_NAME": "v1.0", "CI_COMMIT_TAG": "v1.0"}, "no branch"),
    ({"CI_COMMIT_BRANCH": "ci-agent/other", "CI_COMMIT_REF_NAME": "ci-agent/other"}, "never fixes"),
    ({"CI_AGENT_TRIGGER": "on_success"}, "nothing to fix")])
def test_what_is_skipped(change: dict[str, str], words: str) -> None:
    assert words in gitlab_trigger(gitlab_context({**JOB, **change})).skipped


def test_a_green_pipeline_on_a_fix_branch_is_observed() -> None:
    env = {**JOB, "CI_AGENT_TRIGGER": "on_success", "CI_COMMIT_BRANCH": "ci-agent/fix/main"}
    trig = gitlab_trigger(gitlab_context(env))
    assert (trig.skipped, trig.conclusion, trig.on_fix_branch, trig.failed) == ("", "success", True, False)


def test_dotenv_values_stay_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "ci-agent.env"
    write_dotenv(path, {"CI_AGENT_OUTCOME": "fixed", "CI_AGENT_BRANCH": "ci-agent/fix/x\nEVIL=1\r"})
    assert path.read_text() == "CI_AGENT_OUTCOME=fixed\nCI_AGENT_BRANCH=ci-agent/fix/xEVIL=1\n"


def test_push_auth_matches_a_runner_clone_url_with_credentials(tmp_path: Path) -> None:
    """GitLab runners clone from https://gitlab-ci-token:<job token>@host/...: the host is what
    counts, and our header never lands in .git/config."""
    git.git_ok(tmp_path, ["init", "-q"])
    git.git_ok(tmp_path, ["remote", "add", "origin", "https://gitlab-ci-token:job@gitlab.example.com/acme/shop.git"])
    options = auth_config(tmp_path, "glpat-secret", "https://gitlab.example.com", user="oauth2")
    assert options[0] == "-c" and options[1].startswith("http.https://gitlab.example.com/.extraheader=")
    assert "glpat-secret" not in (tmp_path / ".git" / "config").read_text()
    assert auth_config(tmp_path, "glpat-secret", "https://gitlab.example.com:8443") == [], "another port"
    assert auth_config(tmp_path, "glpat-secret", "https://evil.example.com") == []


@pytest.mark.parametrize(("job", "prefix"), [("ci-agent-fix", "ci-agent"), ("ci-agent-success", "ci-agent"),
                                             ("bot-fix", "bot"), ("build", ""), ("", "")])
def test_the_include_jobs_own_prefix_comes_from_the_job_name(job: str, prefix: str) -> None:
    assert own_job_prefix(job) == prefix
