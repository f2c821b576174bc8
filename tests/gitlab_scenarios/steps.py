"""The checks every GitLab scenario repeats (the fix merge request, its status note, the dotenv
outputs); the scripted model answers are every platform's (tests/platform_scenarios/steps.py)."""

from __future__ import annotations

from typing import Any

from tests.gitlab_scenarios.harness import FIX_BRANCH, JobRun, World
from tests.platform_scenarios import platforms
from tests.platform_scenarios.base import OUTCOMES, with_marker
from tests.platform_scenarios.steps import RATINGS, WRONG_ORDER, WRONG_SUMMARIES, answer, model_calls, version

__all__ = ["RATINGS", "WRONG_ORDER", "WRONG_SUMMARIES", "answer", "assert_dotenv", "assert_fix_mr_outputs",
           "fail_attempts", "model_calls", "status_notes", "the_status_note", "version"]


def status_notes(world: World, iid: int) -> list[dict[str, Any]]:
    return with_marker(world.notes_on(iid))


def the_status_note(world: World, iid: int) -> dict[str, Any]:
    found = status_notes(world, iid)
    assert len(found) == 1, f"exactly one status note on !{iid}: {found}"
    return dict(found[0])  # a copy: the fake edits its own


def assert_dotenv(run: JobRun, outcome: str, **expected: str) -> None:
    assert outcome in OUTCOMES | {"error"}
    assert run.outcome == outcome, str(run)
    for name, value in expected.items():
        assert run.dotenv.get(f"CI_AGENT_{name.upper()}") == value, (name, str(run))


def assert_fix_mr_outputs(world: World, run: JobRun, outcome: str, attempt: int) -> dict[str, Any]:
    mr = world.fix_mr()
    assert_dotenv(run, outcome, attempt=str(attempt), branch=FIX_BRANCH, mr_iid=str(mr["iid"]),
                  mr_url=mr["web_url"])
    assert int(run.dotenv.get("CI_AGENT_TOKENS", "0") or "0") > 0, str(run)
    return mr


def fail_attempts(world: World, count: int) -> list[str]:
    """Attempts 1..count, each a wrong patch on top of the last, each failing the fix branch's
    pipeline. Returns the status note's text after each attempt was pushed."""
    said, _ = platforms.fail_attempts(platforms.GitLabPlatform(world), count)
    return said
