"""One adapter per forge over the scenario harnesses (tests/github_scenarios, tests/gitlab_scenarios
and the command worlds built on them), so that a hardening test of a behaviour both forges share is
one test parametrised over the platform, and not a GitHub test and its GitLab twin.

A side says, in its forge's own terms: give ci-agent a token, a failed CI run (a workflow run, a
pipeline) on a branch, the ci-agent job after it (in-process, or prepared for a child process), a
person's push, and what the forge then holds (the fix PR / MR, our status comment / note). What a
test checks stays in the test; only the forge's vocabulary is here.

The fixtures: `side` (a fresh scenario world, one per platform) and `command_side` (the slash
command scenarios' world). A test module imports them with the fixtures they are built on."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.fixtures import anthropic_fake
from tests.github_commands.conftest import world as github_command_world
from tests.github_scenarios.conftest import forge_waits as github_forge_waits
from tests.github_scenarios.conftest import make_world as github_make_world
from tests.gitlab_commands.conftest import world as gitlab_command_world
from tests.gitlab_scenarios.conftest import forge_waits as gitlab_forge_waits
from tests.gitlab_scenarios.conftest import make_world as gitlab_make_world
from tests.hardening.platforms.common import FIX_BRANCH, Ran
from tests.hardening.platforms.github import GitHubSide
from tests.hardening.platforms.gitlab import GitLabSide

PLATFORMS = ("github", "gitlab")
Side = GitHubSide | GitLabSide


def cases(github: list[str] | tuple[str, ...] = (), gitlab: list[str] | tuple[str, ...] = ()) -> list[Any]:
    """Parameters (platform, case) for a test whose cases differ by forge, named `<platform>-<case>`;
    use with `indirect=["side"]`."""
    return [pytest.param(platform, case, id=f"{platform}-{case}")
            for platform, listed in (("github", github), ("gitlab", gitlab)) for case in listed]


@pytest.fixture
def forge_waits(request: pytest.FixtureRequest) -> list[float]:
    """The scenario suite's own `forge_waits` of the forge the test's `side` / `command_side` runs
    on (its clients' retry waits recorded, never slept): the worlds below ask for `forge_waits`,
    and each suite installs its forge's way of waiting."""
    chosen = getattr(request.node, "callspec", None)
    params = chosen.params if chosen is not None else {}
    platform = params.get("side") or params.get("command_side")
    assert platform in PLATFORMS, f"forge_waits outside a test parametrised over the platforms: {params}"
    waits: list[float] = request.getfixturevalue(f"{platform}_forge_waits")
    return waits


@pytest.fixture(params=PLATFORMS)
def side(request: pytest.FixtureRequest) -> Side:
    """A fresh scenario world of the platform (the scenario suites' `make_world`), as its side."""
    if request.param == "github":
        return GitHubSide(request.getfixturevalue("github_make_world")())
    return GitLabSide(request.getfixturevalue("gitlab_make_world")())


@pytest.fixture(params=PLATFORMS)
def command_side(request: pytest.FixtureRequest) -> Side:
    """The slash command scenarios' world of the platform, as its side."""
    if request.param == "github":
        return GitHubSide(request.getfixturevalue("github_command_world"))
    return GitLabSide(request.getfixturevalue("gitlab_command_world"))


# The fixtures a test module imports (and names in its `__all__`) to use `side` / `command_side`.
# The fixtures a test module imports (and names in its `__all__`) to use `side` / `command_side`.
__all__ = ["FIX_BRANCH", "PLATFORMS", "GitHubSide", "GitLabSide", "Ran", "Side", "anthropic_fake", "cases",
           "command_side", "forge_waits", "github_command_world", "github_forge_waits", "github_make_world",
           "gitlab_command_world", "gitlab_forge_waits", "gitlab_make_world", "side"]
