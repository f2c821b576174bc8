"""Canary secrets on `ci-agent fix --gitlab` (the include's fix job after a failed pipeline):
planted in the CI/CD variables (the API key, the project access token, a custom secret), in the
job trace (a test prints them) and in a repository file the model reads; looked for in the model
requests, everything ci-agent sent to or left on GitLab, the summary file, the dotenv report,
the job log (stdout/stderr), the workspace's `.git/config`, the commits pushed, and an error
message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import Fault
from tests.gitlab_commands.conftest import world as command_world
from tests.gitlab_commands.harness import CommandWorld
from tests.gitlab_commands.steps import FEATURE_FIX
from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.gitlab_scenarios.harness import BOT, FIX_BRANCH, JobRun, World
from tests.gitlab_scenarios.steps import answer
from tests.hardening.secrets.canaries import (
    COMMENT,
    COMMITS,
    CONSOLE,
    DEPLOY_TEST,
    ENV_API_KEY,
    ENV_CUSTOM,
    ENV_FORGE_TOKEN,
    ERRORS,
    FORGE,
    GIT_CONFIG,
    LOG_ENV_VALUE,
    LOG_TOKEN_SHAPE,
    MODEL,
    ORIGIN_URL,
    OUTPUTS,
    REPO_FILE,
    SUMMARY,
    Canary,
    anthropic_key,
    custom_secret,
    gitlab_token,
    read,
    request_text,
    scan,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

__all__ = ["anthropic_fake", "command_world", "forge_waits", "make_world", "world"]

MODE = "gitlab"


def env_canaries(world: World) -> list[Canary]:
    key, token, custom = anthropic_key(), gitlab_token(), custom_secret()
    world.gitlab.add_token(token, BOT, "project")
    world.variables.update(ANTHROPIC_API_KEY=key, CI_AGENT_GITLAB_TOKEN=token, DEPLOY_SECRET=custom)
    return [Canary(ENV_API_KEY, key), Canary(ENV_FORGE_TOKEN, token), Canary(ENV_CUSTOM, custom)]


def person_pushes(world: World, path: str, text: str, message: str) -> None:
    clone = world.clone("main", "person")
    (clone / path).write_text(text)
    git(clone, "add", path)
    git(clone, "commit", "-q", "-m", message)
    git(clone, "push", "-q", "origin", "HEAD:refs/heads/main")


def ours_on_gitlab(world: World, exclude_note: int | None = None) -> str:
    """What ci-agent sent to GitLab or left there (the person's own note is not ours)."""
    sent = [f"{r.path} {r.body}" for r in world.gitlab.requests if r.body]  # (people's notes: not HTTP)
    notes = [n for ns in world.gitlab.notes.values() for n in ns if n.get("id") != exclude_note]
    return "\n".join(sent) + str(world.gitlab.merge_requests) + str(notes)


def places(world: World, run: JobRun, commits: str, exclude_note: int | None = None) -> dict[str, str]:
    return {MODEL: request_text(world.api.requests), FORGE: ours_on_gitlab(world, exclude_note),
            SUMMARY: run.summary,
            OUTPUTS: read(run.workspace / "ci-agent.env"), CONSOLE: run.stdout + run.stderr,
            GIT_CONFIG: read(run.workspace / ".git" / "config"), COMMITS: commits}


def test_canaries_on_a_fix_job(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = env_canaries(world)
    log_token, file_secret = gitlab_token(), f"pk_live_{custom_secret()}"
    # the pipeline's test job has the project's variables too: its test prints them
    monkeypatch.setenv("DEPLOY_SECRET", planted[2].value)
    monkeypatch.setenv("REGISTRY_LOGIN", log_token)
    person_pushes(world, "tests/test_deploy.py", DEPLOY_TEST, "deploy: summary test")
    person_pushes(world, "shop/settings.py", f'"""Payments."""\n\nPAYMENTS_API_KEY = "{file_secret}"\n',
                  "payments settings")
    red = world.pipeline("main")
    assert planted[2].value in red.log and log_token in red.log, "the job trace carries both"
    planted += [Canary(LOG_ENV_VALUE, planted[2].value), Canary(LOG_TOKEN_SHAPE, log_token),
                Canary(REPO_FILE, file_secret)]
    world.api.reply(model.read_file("shop/settings.py"))
    answer(world, "broken", "fix")

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    (settings,) = model.tool_results(world.api.message_requests[1])
    assert "PAYMENTS_API_KEY" in model.result_text(settings)
    commits = git(world.repo.origin, "log", "-p", f"refs/heads/{FIX_BRANCH}", "--not", red.sha, "--format=%B")
    assert commits.strip(), "the fix was pushed"
    assert scan(MODE, planted, places(world, run, commits)) == []


def test_an_error_message_carries_no_canary(world: World) -> None:
    planted = env_canaries(world)
    red = world.pipeline("main")
    world.api.reply(Fault(401, "authentication_error", f"invalid x-api-key: {planted[0].value}"))

    run = world.job(red)

    assert run.exit_code != 0, str(run)
    said = run.stdout + run.stderr
    assert "key" in said.lower(), str(run)
    found = {ERRORS: said + run.summary, OUTPUTS: read(run.workspace / "ci-agent.env"),
             FORGE: ours_on_gitlab(world)}
    assert scan(MODE, planted, found) == []


def test_canary_in_a_command_note_and_the_variables(command_world: CommandWorld) -> None:
    world = command_world
    planted = env_canaries(world)
    pasted = gitlab_token()  # a person pastes a token into the instructions
    iid, red = world.red_mr()
    note = world.say(iid, f"/ci-agent fix the registry login is {pasted}, keep the signature")
    planted.append(Canary(COMMENT, pasted))
    answer(world, "broken", "fix")

    run = world.command(iid, note)

    assert run.exit_code == 0, str(run)
    assert "registry login" in model.first_user_text(world.api.message_requests[0])
    commits = git(world.repo.origin, "log", "-p", f"refs/heads/{FEATURE_FIX}", "--not", red.sha,
                  "--format=%B")
    assert commits.strip(), "the fix was pushed"
    assert scan(MODE, planted, places(world, run, commits, exclude_note=note)) == []


def test_the_runners_credentialed_origin_url_goes_nowhere(world: World) -> None:
    """GitLab runners check out with `https://gitlab-ci-token:<CI_JOB_TOKEN>@host/group/project.git`
    as origin, in `.git/config`. Git is pointed at the bare origin by `url.<base>.insteadOf`, so
    fetch and push work while ci-agent reads the credentialed URL as the runner leaves it."""
    planted = env_canaries(world)
    job_token = f"glcbt-{custom_secret()}"
    world.gitlab.add_token(job_token, "maint", "job")
    planted.append(Canary(ORIGIN_URL, job_token))
    runner_url = f"https://gitlab-ci-token:{job_token}@gitlab.example.com/acme/shop.git"
    plain_clone = world.clone

    def runner_clone(ref: str, name: str) -> Path:
        path = plain_clone(ref, name)
        git(path, "remote", "set-url", "origin", runner_url)
        git(path, "config", f"url.file://{world.repo.origin}.insteadOf", runner_url)
        return path

    world.clone = runner_clone  # type: ignore[method-assign]
    red = world.pipeline("main")
    answer(world, "broken", "fix")

    run = world.job(red, env={"CI_JOB_TOKEN": job_token})

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    commits = git(world.repo.origin, "log", "-p", f"refs/heads/{FIX_BRANCH}", "--not", red.sha,
                  "--format=%B")
    assert commits.strip(), "the fix was pushed"
    found = places(world, run, commits)
    config = found.pop(GIT_CONFIG)
    assert config.count(job_token) == 2, "the runner's URL (and our test's insteadOf) only: nothing added"
    assert scan(MODE, planted, found) == []
    assert scan(MODE, planted[:-1], {GIT_CONFIG: config}) == []
