"""Canary secrets on the fix job of each forge (GitHub: `ci-agent fix --github`, a workflow_run
job after red CI; GitLab: `ci-agent fix --gitlab`, the include's fix job after a failed pipeline)
and on `/ci-agent fix` (a comment's / note's command job): planted where the forge gives them
(the action's inputs and the job's environment; the CI/CD variables), in the CI log (a test
prints them), in a repository file the model reads, and in the person's command; looked for in
the model requests, everything ci-agent sent to or left on the forge, the job summary, GitHub's
annotations, the step outputs / dotenv report, stdout/stderr (minus the mask lines), the
workspace's `.git/config`, the commits pushed, and an error message."""

from __future__ import annotations

import pytest

from tests.fakes.anthropic_fake import Fault
from tests.hardening.platforms import FIX_BRANCH, Side
from tests.hardening.secrets.canaries import (
    COMMENT,
    DEPLOY_TEST,
    ERRORS,
    FORGE,
    LOG_ENV_VALUE,
    LOG_TOKEN_SHAPE,
    OUTPUTS,
    REPO_FILE,
    Canary,
    console,
    custom_secret,
    scan,
)
from tests.hardening.secrets.on_forge import env_canaries, places
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git


def test_canaries_on_the_fix_job(side: Side, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = env_canaries(side, monkeypatch)
    log_token, file_secret = side.fresh_token(), f"pk_live_{custom_secret()}"
    # CI's test job has the secrets too (the repository's, the project's variables): its test prints them
    monkeypatch.setenv("DEPLOY_SECRET", planted[2].value)
    monkeypatch.setenv("REGISTRY_LOGIN", log_token)
    side.person_pushes("main", "tests/test_deploy.py", DEPLOY_TEST, "deploy: summary test")
    side.person_pushes("main", "shop/settings.py",
                       f'"""Payments client settings."""\n\nPAYMENTS_API_KEY = "{file_secret}"\n',
                       "payments settings")
    red = side.red("main")
    assert planted[2].value in red.log and log_token in red.log, "the CI log carries both"
    planted += [Canary(LOG_ENV_VALUE, planted[2].value), Canary(LOG_TOKEN_SHAPE, log_token),
                Canary(REPO_FILE, file_secret)]
    side.world.api.reply(model.read_file("shop/settings.py"))
    side.answer("broken", "fix")

    run = side.run(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    (settings,) = model.tool_results(side.world.api.message_requests[1])
    assert "PAYMENTS_API_KEY" in model.result_text(settings)
    commits = git(side.world.repo.origin, "log", "-p", f"refs/heads/{FIX_BRANCH}", "--not", red.sha,
                  "--format=%B")
    assert commits.strip(), "the fix was pushed"
    assert scan(side.name, planted, places(side, run, commits)) == []


def test_an_error_message_carries_no_canary(side: Side, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model service refuses the key, echoing it: the job fails with a message naming the
    problem, and no secret in the log, the summary, the outputs or on the forge."""
    planted = env_canaries(side, monkeypatch)
    red = side.red("main")
    side.world.api.reply(Fault(401, "authentication_error", f"invalid x-api-key: {planted[0].value}"))

    run = side.run(red)

    assert run.exit_code != 0, str(run)
    said = console(run.stdout, run.stderr)
    assert "key" in said.lower(), str(run)
    found = {ERRORS: said + run.summary, OUTPUTS: run.outputs_text, FORGE: side.ours_on_forge()}
    assert scan(side.name, planted, found) == []


def test_canary_in_a_slash_command_and_the_environment(command_side: Side,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    side = command_side
    planted = env_canaries(side, monkeypatch)
    pasted = side.fresh_token()  # a person pastes a token into the instructions
    number, red = side.red_request()
    comment = side.say(number, f"/ci-agent fix the registry login is {pasted}, keep the signature")
    planted.append(Canary(COMMENT, pasted))
    side.answer("broken", "fix")

    run = side.command(number, comment)  # the command job is given the same token canary

    assert run.exit_code == 0, str(run)
    assert "registry login" in model.first_user_text(side.world.api.message_requests[0])
    commits = git(side.world.repo.origin, "log", "-p", f"refs/heads/{side.command_fix_branch}", "--not",
                  red.sha, "--format=%B")
    assert commits.strip(), "the fix was pushed"
    assert scan(side.name, planted, places(side, run, commits, exclude_comment=comment)) == []
