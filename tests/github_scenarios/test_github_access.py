"""Who and what `ci-agent fix --github` acts for: a triggering actor without write access is
refused, runs that have nothing to fix are skipped (said plainly, never as a success), a bad
token is exit 5, and a dry run sends, pushes and posts nothing."""

from __future__ import annotations

from ci_agent.errors import ExitCode
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import answer, assert_outputs, model_calls


def _untouched(world: World) -> None:
    assert model_calls(world) == 0
    assert world.origin_branches() == ["main"]
    assert world.github.pulls == {} and world.github.comments == {}
    assert not [r for r in world.github.requests if r.method in {"POST", "PATCH", "DELETE"}]


def test_an_actor_without_write_access_is_refused(world: World) -> None:
    world.github.collaborators["reader"] = "read"
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")

    run = world.after_ci(world.ci("main"), actor="reader")

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "refused")
    assert "reader" in run.stdout + run.stderr and "write" in (run.stdout + run.stderr).lower()
    _untouched(world)


def test_a_green_run_of_a_source_branch_is_skipped(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    ci = world.ci("main")
    world.github.run_meta[ci.id]["conclusion"] = "success"  # as if main were green

    run = world.after_ci(ci)

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "skipped")
    assert "skip" in run.summary.lower()
    _untouched(world)


def test_a_ci_agent_branch_that_is_not_a_fix_branch_is_skipped(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    world.repo.git("push", "-q", "origin", "main:refs/heads/ci-agent/experiment")
    ci = world.ci("ci-agent/experiment")

    run = world.after_ci(ci)

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "skipped")
    assert model_calls(world) == 0
    assert FIX_BRANCH not in world.origin_branches()
    assert not any(b.startswith("ci-agent/fix/ci-agent") for b in world.origin_branches()), "no fix of a fix"


def test_a_rejected_token_is_exit_5_with_a_sentence(world: World) -> None:
    world.inputs["github_token"] = "ghp_revoked_token_000000000000000000000"
    run = world.after_ci(world.ci("main"))

    assert run.exit_code == ExitCode.EXTERNAL_SERVICE, str(run)
    assert "rejected the token" in run.stderr, str(run)
    printed = [line for line in run.stdout.splitlines() if not line.startswith("::add-mask::")]
    assert "ghp_revoked" not in run.stderr + run.summary + "\n".join(printed)
    assert model_calls(world) == 0


def test_a_dry_run_sends_pushes_and_posts_nothing(world: World) -> None:
    world.inputs.update(github_token=USER_TOKEN, dry_run="true")

    run = world.after_ci(world.ci("main"))

    assert run.exit_code == 0, str(run)
    assert run.outputs.get("outcome") in {"skipped", "nothing_to_do"}, str(run)
    assert "dry run" in (run.stdout + run.stderr + run.summary).lower()
    assert world.api.requests == []
    assert world.origin_branches() == ["main"]
    assert world.github.pulls == {} and world.github.comments == {}


MANY = '''import pytest


@pytest.mark.parametrize("case", range(25))
def test_many_cases(case: int) -> None:
    assert case < 0, f"case {case} is not negative"
'''


def test_annotations_stay_within_the_per_step_limits(world: World) -> None:
    """GitHub shows at most 10 annotations of each type per step (DESIGN.md §4.6); 27 failing
    tests must not print more `::error` lines than that (the rest are in the summary)."""
    world.inputs["github_token"] = USER_TOKEN
    world.human_commit("main", "tests/test_many.py", MANY, "tests: many cases")

    run = world.inline("main")  # the model's default answer in these scenarios: give_up

    assert run.exit_code == ExitCode.NO_SAFE_PATCH, str(run)
    assert_outputs(run, "gave_up")
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert 1 <= len(errors) <= 10, len(errors)
    assert "test_many_cases" in run.summary
