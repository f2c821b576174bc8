"""Canary secrets on `ci-agent fix --github` (a workflow_run job after red CI) and `/ci-agent fix`
(a comment job): planted in the action's inputs and the job's environment, in the CI log (a test
prints them), in a repository file the model reads, and in the person's command comment; looked
for in the model requests, everything sent to or held by GitHub (ci-agent's own writes), the job
summary, annotations, step outputs, stdout/stderr (minus the mask lines), the workspace's
`.git/config`, the commits pushed, and an error message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.anthropic_fake import Fault
from tests.github_commands.conftest import world as command_world
from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import red_pr
from tests.github_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.github_scenarios.harness import FIX_BRANCH, ActionRun, World
from tests.github_scenarios.steps import answer
from tests.hardening.secrets.canaries import (
    ANNOTATIONS,
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
    OUTPUTS,
    REPO_FILE,
    SUMMARY,
    Canary,
    annotation_lines,
    anthropic_key,
    console,
    custom_secret,
    github_token,
    read,
    request_text,
    scan,
)
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

__all__ = ["anthropic_fake", "command_world", "forge_waits", "make_world", "world"]

MODE = "github"



def env_canaries(world: World, monkeypatch: pytest.MonkeyPatch) -> list[Canary]:
    """The action's API key and token inputs, and a custom secret in the job's environment."""
    key, token, custom = anthropic_key(), github_token(), custom_secret()
    world.github.tokens[token] = "octocat"
    world.inputs.update(anthropic_api_key=key, github_token=token)
    monkeypatch.setenv("DEPLOY_SECRET", custom)  # a repository secret the workflow exposes
    return [Canary(ENV_API_KEY, key), Canary(ENV_FORGE_TOKEN, token), Canary(ENV_CUSTOM, custom)]


def ours_on_github(world: World, exclude_comment: int | None = None) -> str:
    """What ci-agent sent to GitHub or left there (the person's own comment is not ours)."""
    sent = [f"{r.path} {r.body}" for r in world.github.requests if r.server == "api" and r.body]
    held: list[Any] = list(world.github.pulls.values())
    held += [c for i, c in world.github.comments.items() if i != exclude_comment]
    return "\n".join(sent + [str(h) for h in held])


def places(world: World, run: ActionRun, commits: str, exclude_comment: int | None = None) -> dict[str, str]:
    return {MODEL: request_text(world.api.requests), FORGE: ours_on_github(world, exclude_comment),
            SUMMARY: run.summary, ANNOTATIONS: annotation_lines(run.stdout), OUTPUTS: str(run.outputs),
            CONSOLE: console(run.stdout, run.stderr), GIT_CONFIG: read(run.workspace / ".git" / "config"),
            COMMITS: commits}


def test_canaries_on_a_workflow_run_job(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = env_canaries(world, monkeypatch)
    log_token, file_secret = github_token(), f"pk_live_{custom_secret()}"
    monkeypatch.setenv("REGISTRY_LOGIN", log_token)  # only CI's test prints it; the job has it too
    world.human_commit("main", "tests/test_deploy.py", text=DEPLOY_TEST, message="deploy: summary test")
    world.human_commit("main", "shop/settings.py", message="payments settings",
                       text=f'"""Payments client settings."""\n\nPAYMENTS_API_KEY = "{file_secret}"\n')
    red = world.ci("main")
    assert planted[2].value in red.log and log_token in red.log, "the CI log carries both"
    planted += [Canary(LOG_ENV_VALUE, planted[2].value), Canary(LOG_TOKEN_SHAPE, log_token),
                Canary(REPO_FILE, file_secret)]
    world.api.reply(model.read_file("shop/settings.py"))
    answer(world, "broken", "fix")

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert run.outputs.get("outcome") == "committed", str(run)
    (settings,) = model.tool_results(world.api.message_requests[1])
    assert "PAYMENTS_API_KEY" in model.result_text(settings)
    commits = git(world.repo.origin, "log", "-p", f"refs/heads/{FIX_BRANCH}", "--not", red.sha, "--format=%B")
    assert commits.strip(), "the fix was pushed"
    assert scan(MODE, planted, places(world, run, commits)) == []


def test_canary_in_a_slash_command_and_the_environment(command_world: CommandWorld,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    world = command_world
    planted = env_canaries(world, monkeypatch)
    pasted = github_token()  # a person pastes a token into the instructions
    number, ci = red_pr(world)
    comment = world.say(number, f"/ci-agent fix the registry login is {pasted}, keep the signature")
    planted.append(Canary(COMMENT, pasted))
    answer(world, "broken", "fix")

    # the command job's inputs come from the command workflow; its token is this canary
    run = world.command(number, comment, inputs={"github_token": planted[1].value})

    assert run.exit_code == 0, str(run)
    assert "registry login" in model.first_user_text(world.api.message_requests[0])
    fix_branch = "ci-agent/fix/feature"
    commits = git(world.repo.origin, "log", "-p", f"refs/heads/{fix_branch}", "--not", ci.sha, "--format=%B")
    assert commits.strip(), "the fix was pushed"
    assert scan(MODE, planted, places(world, run, commits, exclude_comment=comment)) == []


def test_an_error_message_carries_no_canary(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model service refuses the key, echoing it: the job fails with a message naming the
    problem, and no secret in the log, the summary, the outputs or on GitHub."""
    planted = env_canaries(world, monkeypatch)
    red = world.ci("main")
    world.api.reply(Fault(401, "authentication_error", f"invalid x-api-key: {planted[0].value}"))

    run = world.after_ci(red)

    assert run.exit_code != 0, str(run)
    said = console(run.stdout, run.stderr)
    assert "key" in said.lower(), str(run)
    found = {ERRORS: said + run.summary, OUTPUTS: str(run.outputs), FORGE: ours_on_github(world)}
    assert scan(MODE, planted, found) == []
