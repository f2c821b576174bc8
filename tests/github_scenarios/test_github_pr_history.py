"""The history section of a pull request's request (issue 15, defect 2): the change under test is
the pull request's diff against the merge base with its target, not the target's tip that moved
on since, and its commit messages are shown; a push run keeps the commit against its parent."""

from __future__ import annotations

import re

from tests.github_scenarios.harness import USER_TOKEN, World, open_person_pr


def _history(stdout: str) -> str:
    found = re.search(r"### The change under test: (.*?)\nFind the root cause", stdout, re.S)
    assert found, stdout
    return found.group(1)


def test_a_pull_request_is_shown_against_its_merge_base(world: World) -> None:
    world.inputs.update(github_token=USER_TOKEN, dry_run="true")
    open_person_pr(world)
    world.human_commit("feature/stars", "NOTES.md", "stars are rounded to halves\n", "notes: how stars round")
    world.human_commit("main", "CHANGELOG.md", "moved on\n", "changelog: main moves on")

    dry = world.inline("feature/stars", event="pull_request", pr=1)

    assert dry.exit_code == 0, str(dry)
    history = _history(dry.stdout)
    assert "against the merge base with refs/remotes/origin/main" in history
    assert "notes: how stars round" in history and "+stars are rounded to halves" in history
    assert "main moves on" not in history and "CHANGELOG.md" not in history


def test_a_push_run_shows_the_commit_against_its_parent(world: World) -> None:
    world.inputs.update(github_token=USER_TOKEN, dry_run="true")

    dry = world.inline("main")

    assert dry.exit_code == 0, str(dry)
    assert "against its parent" in _history(dry.stdout).split("\n", 1)[0]
