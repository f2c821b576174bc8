"""Canary secrets on `ci-agent fix --local`: planted in the environment, the failing log and a
repository file the model reads; looked for in every request the Anthropic fake recorded, the
summary, the JSON events and stderr, the commits on the fix branch and the attempt records, the
clone's `.git/config`, an error message, and the environment the verify command runs in."""

from __future__ import annotations

import base64
import json
import secrets
import string
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake, Fault, message, tool_use
from tests.hardening.secrets.canaries import (
    COMMITS,
    CONSOLE,
    CREDENTIAL_FILES,
    ENV_API_KEY,
    ENV_CUSTOM,
    ENV_FORGE_TOKEN,
    ERRORS,
    GIT_CONFIG,
    LOG_ENV_VALUE,
    LOG_TOKEN_SHAPE,
    MODEL,
    REPO_FILE,
    SECRET_FILES,
    SECRET_FILES_CASE,
    SECRET_LINK,
    SUMMARY,
    VERIFY_ENV,
    Canary,
    anthropic_key,
    custom_secret,
    env_probe,
    github_token,
    read,
    request_text,
    scan,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.conftest import anthropic_fake, api
from tests.scenarios.harness import FIX_BRANCH, ROOT_CAUSE, branch_tip, fix, user_repo
from tests.scenarios.harness import SUMMARY as FIX_SUMMARY
from tests.scenarios.sample_repos import PYTHON, SampleRepo, git
from tests.scenarios.sample_repos import run as run_sample

__all__ = ["anthropic_fake", "api"]

MODE = "local"


def planted_repo(tmp_path: Path, log_token: str, file_secret: str) -> SampleRepo:
    """The sample plus a failing test that prints an env secret and a token into the log, and a
    settings module holding a key (read by the model through read_file)."""
    repo = user_repo(tmp_path, PYTHON)
    (repo.path / "tests" / "test_deploy.py").write_text(
        "import os\n\nfrom shop.ratings import average_rating\n\n\n"
        "def test_deploy_summary() -> None:\n"
        "    print('deploy with', os.environ.get('DEPLOY_SECRET'))\n"
        "    try:\n        average_rating([])\n    except ZeroDivisionError as exc:\n"
        f"        raise AssertionError('deploy failed: DEPLOY_SECRET=' + os.environ.get('DEPLOY_SECRET', '') "
        f"+ ' registry {log_token}') from exc\n")
    (repo.path / "shop" / "settings.py").write_text(
        f'"""Settings of the payments client."""\n\nPAYMENTS_API_KEY = "{file_secret}"\nTIMEOUT_S = 30\n')
    repo.git("add", "tests/test_deploy.py", "shop/settings.py")
    repo.git("commit", "-q", "-m", "deploy: summary test and payment settings", "--",
             "tests/test_deploy.py", "shop/settings.py")
    return repo


# Files the default exclude globs hide from the model (config.SECRET_GLOBS), with values no
# redaction rule recognises (letters only, no secret-looking key): only hiding them keeps them.
SECRET_PATHS = (".env.production", "config/secrets/prod.yml", "certs/server.key")


def plant_secret_files(repo: SampleRepo) -> list[Canary]:
    """Secret files committed in the failing commit (its diff is context) and on disk."""
    return plant_files(repo, {path: "horse {}\n" for path in SECRET_PATHS})


def plant_files(repo: SampleRepo, templates: dict[str, str], row: str = SECRET_FILES) -> list[Canary]:
    """Each file (its template's `{}` a fresh lowercase canary) added to the failing commit."""
    values = {path: "".join(secrets.choice(string.ascii_lowercase) for _ in range(24)) for path in templates}
    for path, value in values.items():
        target = repo.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(templates[path].format(value))
    repo.git("add", "-f", *templates)
    repo.git("commit", "-q", "--amend", "--no-edit")
    return [Canary(row, value) for value in values.values()]


def ask_to_read(api: AnthropicFake, repo: SampleRepo, paths: list[str]) -> None:
    reads = [tool_use("read_file", {"path": p}) for p in paths]
    api.reply(lambda request: message(*reads, tool_use("list_files", {}),
                                      tool_use("search_code", {"pattern": "horse"}), usage=model.USAGE),
              model.submit_patch(repo.diff(PYTHON.fix), summary=FIX_SUMMARY, root_cause=ROOT_CAUSE))


def canaries(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Canary], str, str]:
    key, token, custom = anthropic_key(), github_token(), custom_secret()
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("DEPLOY_SECRET", custom)
    log_token, file_secret = github_token(), f"pk_live_{custom_secret()}"
    planted = [Canary(ENV_API_KEY, key), Canary(ENV_FORGE_TOKEN, token), Canary(ENV_CUSTOM, custom),
               Canary(LOG_ENV_VALUE, custom), Canary(LOG_TOKEN_SHAPE, log_token),
               Canary(REPO_FILE, file_secret)]
    return planted, log_token, file_secret


def test_canaries_reach_nothing_ci_agent_writes(api: AnthropicFake, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    planted, log_token, file_secret = canaries(monkeypatch)
    repo = planted_repo(tmp_path, log_token, file_secret)
    planted += plant_secret_files(repo)
    api.reply(model.read_file("shop/settings.py"))
    ask_to_read(api, repo, list(SECRET_PATHS))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    report = model.first_user_text(api.message_requests[0])
    assert "deploy failed" in report and "[REDACTED" in report, "the failure arrived, redacted"
    (settings,) = model.tool_results(api.message_requests[1])
    assert "PAYMENTS_API_KEY" in model.result_text(settings), "the file arrived, redacted"
    hidden = model.tool_results(api.message_requests[2])[:len(SECRET_PATHS)]
    assert all(r.get("is_error") for r in hidden), "secret files answer like missing ones"
    assert branch_tip(repo, FIX_BRANCH) is not None
    places = {MODEL: request_text(api.requests), SUMMARY: run.summary,
              CONSOLE: run.stdout + run.stderr,
              COMMITS: git(repo.path, "log", "-p", "--all", "--not", "main", "--format=%B"),
              GIT_CONFIG: read(repo.path / ".git" / "config")}
    assert scan(MODE, planted, places) == []


def test_an_error_message_carries_no_canary(api: AnthropicFake, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    """The model service refuses the key (401, echoing part of it as some proxies do): the
    message the user gets names the problem and no secret."""
    planted, log_token, file_secret = canaries(monkeypatch)
    key = planted[0].value
    repo = planted_repo(tmp_path, log_token, file_secret)
    api.reply(Fault(401, "authentication_error", f"invalid x-api-key: {key}"))

    run = fix(repo, capfd, plain=True)

    assert run.exit_code != 0, str(run)
    assert "key" in (run.stdout + run.stderr).lower(), str(run)
    assert scan(MODE, planted, {ERRORS: run.stdout + run.stderr}) == []


def test_the_verify_command_runs_without_any_secret_in_its_environment(
        api: AnthropicFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str], reachable_tmp: Path) -> None:
    """The verify command runs the model's patch: it gets no key or token of ci-agent's (found by
    this test; fixed in 4aeb65b) and, since its environment is built from an allow-list
    (ci_agent/sandbox.py), not the project's own secrets either (issue 12)."""
    planted, log_token, file_secret = canaries(monkeypatch)
    repo = planted_repo(tmp_path, log_token, file_secret)
    verify, seen = env_probe(reachable_tmp, ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "DEPLOY_SECRET"])
    api.reply(model.submit_patch(repo.diff(PYTHON.fix), summary=FIX_SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd, "--verify", verify)

    assert run.exit_code == 0, str(run)
    env_canaries = [c for c in planted if c.planted in (ENV_API_KEY, ENV_FORGE_TOKEN, ENV_CUSTOM)]
    assert len(env_canaries) == 3
    assert read(seen), "the probe ran and wrote what it saw"
    assert scan(MODE, env_canaries, {VERIFY_ENV: read(seen)}) == []


def test_secret_files_in_another_case_are_hidden_too(api: AnthropicFake, tmp_path: Path,
                                                     capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    paths = ["config/Secrets/prod.yml", ".ENV", "certs/SERVER.KEY"]
    planted = plant_files(repo, {path: "horse {}\n" for path in paths}, SECRET_FILES_CASE)
    ask_to_read(api, repo, paths)

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    assert scan(MODE, planted, {MODEL: request_text(api.requests)}) == []


def test_credentials_in_netrc_and_docker_config_are_redacted(api: AnthropicFake, tmp_path: Path,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    password = custom_secret()
    auth = base64.b64encode(f"deploy:{password}".encode()).decode()
    files = {".netrc": f"machine registry.example.com\n  login deploy\n  password {password}\n",
             ".docker/config.json": json.dumps({"auths": {"ghcr.io": {"auth": auth}}}) + "\n"}
    for path, text in files.items():
        (repo.path / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / path).write_text(text)
    repo.git("add", "-f", *files)
    repo.git("commit", "-q", "--amend", "--no-edit")
    planted = [Canary(CREDENTIAL_FILES, password), Canary(CREDENTIAL_FILES, auth)]
    ask_to_read(api, repo, list(files))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    assert scan(MODE, planted, {MODEL: request_text(api.requests)}) == []


def test_symlinks_to_secret_files_or_git_config_are_never_shown(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """An attacker's commit adds links to a secret file and to git's config, and the failing
    log (attacker-controlled output) names them as frames; the model also asks to read them."""
    repo = user_repo(tmp_path, PYTHON)
    planted = plant_files(repo, {".env.production": "horse {}\n"}, SECRET_LINK)
    git_secret = custom_secret()
    repo.git("config", "ci.note", git_secret)  # anything in .git/config (a runner's URL, say)
    planted.append(Canary(SECRET_LINK, git_secret))
    for link, target in (("shop/notes.py", "../.env.production"), ("shop/gitcfg.py", "../.git/config")):
        (repo.path / link).symlink_to(target)
    repo.git("add", "shop/notes.py", "shop/gitcfg.py")
    repo.git("commit", "-q", "--amend", "--no-edit")
    failed = run_sample(PYTHON.command, repo.path)
    log = tmp_path / "build.log"
    log.write_text((failed.stdout + failed.stderr).replace("shop/ratings.py:10: ZeroDivisionError",
                                                           "shop/notes.py:1: in <module>\n"
                                                           "shop/gitcfg.py:1: ZeroDivisionError"))
    ask_to_read(api, repo, ["shop/notes.py", "shop/gitcfg.py"])

    run = fix(repo, capfd, "--build-log", str(log), "--verify", PYTHON.verify, commands=False)

    assert run.exit_code == 0, str(run)
    assert scan(MODE, planted, {MODEL: request_text(api.requests)}) == []
