"""Scripted model answers for the Python sample as it stands on the fix branch, and the checks
every GitHub scenario repeats (the fix PR, its status comment, the outputs)."""

from __future__ import annotations

import difflib
from typing import Any

from ci_agent.engine.forge import parse_marker
from tests.github_scenarios.harness import FIX_BRANCH, ROOT_CAUSE, SUMMARY, ActionRun, World
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, apply_edit

RATINGS = PYTHON.fix.path
OUTCOMES = {"fixed", "committed", "escalated", "gave_up", "nothing_to_do", "skipped", "refused"}
# Versions of `average_rating`'s last line, in the order the failing attempts try them: each
# fails on the fix branch's CI ("floor" and "floor_float" leave the same tests failing).
WRONG_ORDER = ("floor", "floor_float", "none")
WRONG_SUMMARIES = {"floor": "Divide with // and at least 1 in the denominator.",
                   "floor_float": "Convert the floored mean to float.",
                   "none": "Return None when a product has no ratings."}


def version(world: World, name: str) -> str:
    """shop/ratings.py as it is after the sample's edit `name` ("broken", "fix", or a wrong one)."""
    broken = world.repo.files[RATINGS]
    if name == "broken":
        return broken
    edit = PYTHON.fix if name == "fix" else PYTHON.wrong[name]
    return apply_edit(broken, edit)


def diff(before: str, after: str) -> str:
    """A model's unified diff of shop/ratings.py between two versions (3 lines of context)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{RATINGS}", f"b/{RATINGS}", n=3))


def answer(world: World, current: str, target: str, summary: str = SUMMARY) -> None:
    """Queue the model's answer: a patch from the branch's `current` version to `target`."""
    world.api.reply(model.submit_patch(diff(version(world, current), version(world, target)),
                                       summary=summary, root_cause=ROOT_CAUSE))


def status_comments(world: World, number: int) -> list[dict[str, Any]]:
    return [c for c in world.comments_on(number) if parse_marker(c["body"]) is not None]


def the_status_comment(world: World, number: int) -> dict[str, Any]:
    found = status_comments(world, number)
    assert len(found) == 1, f"exactly one status comment on #{number}: {found}"
    return found[0]


def assert_outputs(run: ActionRun, outcome: str, **expected: str) -> None:
    assert run.outputs.get("outcome") == outcome, str(run)
    assert outcome in OUTCOMES
    for name, value in expected.items():
        assert run.outputs.get(name) == value, (name, str(run))


def assert_fix_pr_outputs(world: World, run: ActionRun, outcome: str, attempt: int) -> dict[str, Any]:
    pull = world.fix_pull()
    assert_outputs(run, outcome, attempt=str(attempt), branch=FIX_BRANCH, pr_number=str(pull["number"]),
                   pr_url=f"https://github.com/octo/app/pull/{pull['number']}")
    assert int(run.outputs.get("tokens", "0")) > 0, str(run)
    return pull


def model_calls(world: World) -> int:
    return len(world.api.message_requests)


def fail_attempts(world: World, count: int) -> list[str]:
    """Attempts 1..count, each a wrong patch on top of the last, each failing the branch's CI.
    Returns the status comment's text after each attempt was pushed."""
    ci = world.ci("main")
    current = "broken"
    said: list[str] = []
    for name in WRONG_ORDER[:count]:
        answer(world, current, name, summary=WRONG_SUMMARIES[name])
        done = world.after_ci(ci)
        assert done.exit_code == 0 and done.outputs.get("outcome") == "committed", str(done)
        said.append(the_status_comment(world, world.fix_pull()["number"])["body"])
        current = name
        ci = world.ci(FIX_BRANCH)
        assert ci.conclusion == "failure"
    return said
