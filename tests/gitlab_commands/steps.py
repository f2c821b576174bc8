"""Checks the GitLab command scenarios repeat."""

from __future__ import annotations

from tests.gitlab_commands.harness import BOT, CommandWorld
from tests.gitlab_scenarios.harness import JobRun

FEATURE_FIX = "ci-agent/fix/feature/stars"
PAUSED = "ci-agent:paused"
ESCALATED = "ci-agent:escalated"


def assert_acted(world: CommandWorld, note_id: int) -> None:
    """Acknowledged by our account with 👀, exactly once."""
    assert world.our_eyes(note_id) == [("eyes", BOT)]


def assert_ignored(world: CommandWorld, run: JobRun, note_id: int, calls_before: int = 0) -> None:
    """Nothing done for the note: no model call, no award emoji, no note, no push."""
    assert run.exit_code == 0, str(run)
    assert run.outcome in ("skipped", "refused"), str(run)
    assert len(world.api.message_requests) == calls_before
    assert world.our_eyes(note_id) == []
    assert world.gitlab.requests_to("POST", r"/projects/(42|acme/shop)/merge_requests/\d+/notes") == []


def writes(world: CommandWorld, since: int = 0) -> list[str]:
    """The API requests that change something (everything but GET), from request `since` on."""
    return [f"{r.method} {r.path}" for r in world.gitlab.requests[since:] if r.method != "GET"]


def assert_dotenv(run: JobRun, outcome: str, **expected: str) -> None:
    """The job's dotenv report (the base helper's outcome list predates explained/proposed)."""
    assert run.outcome == outcome, str(run)
    for name, value in expected.items():
        assert run.dotenv.get(f"CI_AGENT_{name.upper()}") == value, (name, str(run))
