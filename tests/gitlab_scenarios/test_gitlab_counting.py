"""Counting attempts on GitLab (DESIGN.md §4.3): a person's commit on the fix branch starts a new
count. (The three-failure escalation and the retried job that counts nothing twice, the same on
GitHub, are in tests/platform_scenarios/test_fix_cycle.py.)"""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from tests.gitlab_scenarios.harness import FIX_BRANCH, World
from tests.gitlab_scenarios.steps import answer, fail_attempts, model_calls, version
from tests.scenarios.sample_repos import PYTHON, git


def test_a_person_s_commit_on_the_fix_branch_starts_a_new_count(world: World) -> None:
    """DESIGN §4.3: a human commit on the fix branch starts a new count, so three failed
    attempts followed by a person's (still red) commit are no escalation."""
    fail_attempts(world, 3)
    person = world.clone(FIX_BRANCH, "person")
    (person / "NOTES.md").write_text("Looking into the ratings with ci-agent.\n")
    git(person, "add", "NOTES.md")
    git(person, "commit", "-q", "-m", "notes")
    git(person, "push", "-q", "origin", f"HEAD:{FIX_BRANCH}")
    red = world.pipeline(FIX_BRANCH)
    assert red.status == "failed"
    answer(world, "none", "fix")

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    assert model_calls(world) == 4
    mr = world.fix_mr()
    assert "ci-agent:escalated" not in mr["labels"]
    assert [b for b in world.created_notes(mr["iid"]) if parse_marker(b) is None] == [], "no escalation"
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")
    assert world.show(FIX_BRANCH, "NOTES.md").startswith("Looking"), "the person's commit is kept"
