"""Inputs are named as a person knows them (issue 13 point 15): the fix pull request's body and the
model's `inputs:` line never show the runner's temp folders (the cycle's download folder, the
attempt's worktree), but `job log <id>-<job>.log` and `artifact <name>/<path>`; and a run that
finds no TRX file says nothing about the default `**/*.trx` glob while it read other inputs."""

from __future__ import annotations

import re

from tests.github_scenarios.harness import USER_TOKEN, World
from tests.github_scenarios.steps import answer, assert_fix_pr_outputs
from tests.scenarios import model_scripts as model

TEMP = re.compile(r"/tmp/|ci-agent-cycle-|ci-agent-wt")


def test_the_pr_body_and_the_prompt_name_fetched_inputs_without_temp_paths(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")
    ci = world.ci("main")

    run = world.after_ci(ci)

    assert run.exit_code == 0, str(run)
    pull = assert_fix_pr_outputs(world, run, "committed", attempt=1)
    prompt = model.first_user_text(world.api.message_requests[0])
    (inputs_line,) = [line for line in prompt.splitlines() if line.startswith("inputs: ")]
    assert f"job log {ci.job_id}-test.log (pytest_console" in inputs_line, inputs_line
    assert "artifact test-results/junit.xml (junit" in inputs_line, inputs_line
    for text in (prompt, pull["body"], run.summary):
        assert not TEMP.search(text), TEMP.search(text)
        assert str(world.tmp) not in text
    assert f"job log {ci.job_id}-test.log" in pull["body"]
    assert "no file matches" not in run.stderr and "no test-result file" not in run.stderr, run.stderr


def test_a_glob_that_matches_nothing_is_said_once_in_the_words_given(world: World) -> None:
    """The inline step's `test_results` names only files the job never wrote: one warning (not
    one per collection: the attempt engine reads the same inputs again), with the pattern as
    given, relative to the workspace."""
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")

    run = world.inline("main", inputs={"test_results": "reports/*.xml"})

    assert run.exit_code == 0, str(run)
    warnings = [line for line in run.stderr.splitlines() if "warning" in line]
    assert warnings == ["ci-agent: warning: no test-result file matches 'reports/*.xml'"], run.stderr


def test_the_default_trx_glob_is_quiet_while_the_build_log_was_read(world: World) -> None:
    """A Python project has no TRX file: the default `**/*.trx` matching nothing is no news."""
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")

    run = world.inline("main")  # test_results: the action's default, **/*.trx

    assert run.exit_code == 0, str(run)
    assert "warning" not in run.stderr, run.stderr
