"""The GitHub reference job of the fault tests (tests/github_scenarios' world, imported): its
setup, one run of it, and the state every rerun must converge to."""

from __future__ import annotations

import traceback

from ci_agent.engine.forge import parse_marker
from ci_agent.errors import ExitCode
from tests.github_scenarios.harness import (
    ACTIONS_TOKEN,
    API_KEY,
    FIX_BRANCH,
    ROOT_CAUSE,
    SUMMARY,
    USER_TOKEN,
    CiRun,
    World,
)
from tests.github_scenarios.steps import diff, version
from tests.hardening.faults.matrix import CLIENT_TIMEOUT_S, Outcome, tokens_in
from tests.scenarios import model_scripts as model

RUN_ID = 5150
SECRETS = (API_KEY, USER_TOKEN, ACTIONS_TOKEN)


def setup(world: World) -> CiRun:
    world.inputs["github_token"] = USER_TOKEN  # a PAT: its pushes start CI by themselves
    world.inputs["max_attempts"] = "3"
    fix = diff(version(world, "broken"), version(world, "fix"))
    world.api.reply_always(model.submit_patch(fix, summary=SUMMARY, root_cause=ROOT_CAUSE))
    return world.ci("main")


def job(world: World, ci: CiRun, attempt: int) -> Outcome:
    env = {"CI_AGENT_MODEL_TIMEOUT_S": str(CLIENT_TIMEOUT_S)}
    try:
        done = world.after_ci(ci, run_id=RUN_ID, run_attempt=attempt, env=env)
    except Exception:  # what escapes main() is the finding
        out, err = world.capfd.readouterr()
        return Outcome(1, out, err, "", traceback.format_exc())
    written = "\n".join(f"{k}={v}" for k, v in done.outputs.items()) + "\n" + done.summary
    config = done.workspace / ".git" / "config"
    return Outcome(done.exit_code, done.stdout, done.stderr, written,
                   git_config=config.read_text() if config.exists() else "")


def assert_converged(world: World, rerun: Outcome, at: object) -> None:
    assert rerun.code == ExitCode.OK and not rerun.crash, f"{at}: the rerun failed:\n{rerun}"
    pulls = world.pulls_from(FIX_BRANCH)
    assert len(pulls) == 1 and pulls[0]["state"] == "open", f"{at}: fix PRs {pulls}"
    number = pulls[0]["number"]
    ours = [c for c in world.comments_on(number) if parse_marker(c["body"]) is not None]
    assert len(ours) == 1, f"{at}: status comments {[c['body'][:80] for c in ours]}"
    assert ours[0]["user"] == "octocat", f"{at}: written by the token's account"
    escalations = [c for c in world.comments_on(number) if "escalated after" in c["body"]]
    assert len(escalations) <= 1, f"{at}: duplicate escalation comments"
    main_tip = world.origin_tip("main")
    assert main_tip is not None
    commits = world.commits(main_tip, FIX_BRANCH)
    attempts = [world.trailers(sha).get("CI-Agent-Attempt") for sha in commits]
    assert attempts == [["1"]], f"{at}: one pushed attempt, numbered 1: {attempts}"
    assert world.show(FIX_BRANCH, "shop/ratings.py") == version(world, "fix")
    assert "attempt 1" in ours[0]["body"].lower() and "attempt 2" not in ours[0]["body"].lower(), at
    assert "ci-agent" in pulls[0]["labels"], f"{at}: the fix PR is labelled"
    assert tokens_in(rerun.stdout + rerun.stderr + rerun.written + world.all_github_text(), SECRETS) == []
