"""Inputs are named as a person knows them (issue 13 point 15), in the inline step: a run that finds
no TRX file says nothing about the default `**/*.trx` glob while it read other inputs, and a glob
that matches nothing is said once. (The fix request and the prompt naming fetched inputs without
temp paths, the same on GitLab: tests/platform_scenarios/test_fix_cycle.py.)"""

from __future__ import annotations

from tests.github_scenarios.harness import USER_TOKEN, World
from tests.github_scenarios.steps import answer


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
