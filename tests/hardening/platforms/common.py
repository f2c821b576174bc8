"""What both forge sides share: a finished job as the checks read it, and the race checks' reads
(tests/hardening/concurrency/checks.py) over a side."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ci_agent.engine.forge import parse_marker
from ci_agent.engine.texts import ESCALATION_TAG
from tests.github_scenarios import harness as github
from tests.gitlab_scenarios import harness as gitlab
from tests.hardening.concurrency.checks import Forge

FIX_BRANCH = github.FIX_BRANCH  # the same on both forges: ci-agent/fix/main
Red = github.CiRun | gitlab.Pipeline  # a failed CI run: a workflow run, a pipeline (id, sha, log)


@dataclass(frozen=True)
class Ran:
    """One ci-agent job on either forge, as the hardening checks read it; its text is the
    harness's own record of the job (the failure message)."""

    exit_code: int
    outcome: str | None
    outputs_text: str  # what it left for the CI: GitHub's step outputs, GitLab's dotenv report
    summary: str
    stdout: str
    stderr: str
    workspace: Path
    job: github.ActionRun | gitlab.JobRun

    def __str__(self) -> str:
        return str(self.job)


class Reads(Protocol):
    """The reads of a side the race checks use."""

    @property
    def world(self) -> Any: ...

    def open_fix(self, branch: str = FIX_BRANCH) -> list[int]: ...

    def bodies(self, number: int) -> list[str]: ...


def race_forge(side: Reads, branch: str) -> Forge:
    """The reads of the race checks on `side`'s fix request from `branch`."""
    def status(number: int) -> list[str]:
        return [b for b in side.bodies(number) if parse_marker(b) is not None]

    def escalations(number: int) -> list[str]:
        return [b for b in side.bodies(number) if b.startswith(ESCALATION_TAG)]

    return Forge(side.world.repo.origin, lambda: side.open_fix(branch), status, escalations,
                 side.world.trailers, branch)


