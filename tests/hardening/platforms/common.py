"""What both forge sides share: a finished job as the checks read it, the sample's scripted
answers and the race checks' reads (tests/hardening/concurrency/checks.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_agent.engine.forge import parse_marker
from ci_agent.engine.texts import ESCALATION_TAG
from tests.github_scenarios import harness as github
from tests.gitlab_scenarios import harness as gitlab
from tests.hardening.concurrency.checks import Forge
from tests.platform_scenarios import steps
from tests.platform_scenarios.base import SUMMARY

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


class SideBase:
    """What a side does the same way on every forge: the sample's scripted answers
    (tests/platform_scenarios/steps.py) and the race checks' reads. A side gives `world`,
    `open_fix` and `bodies`."""

    world: Any

    def open_fix(self, branch: str = FIX_BRANCH) -> list[int]:
        raise NotImplementedError

    def bodies(self, number: int) -> list[str]:
        raise NotImplementedError

    def version(self, name: str) -> str:
        """shop/ratings.py after the sample's edit `name` ("broken", "fix", or a wrong one)."""
        return steps.version(self.world, name)

    def version_diff(self, current: str, target: str) -> str:
        return steps.diff(self.version(current), self.version(target))

    def answer(self, current: str, target: str, summary: str = SUMMARY) -> None:
        """Queue the model's answer: a patch from the branch's `current` version to `target`."""
        steps.answer(self.world, current, target, summary)

    def forge(self, branch: str = FIX_BRANCH) -> Forge:
        """The reads of the race checks on the fix request from `branch`."""
        def status(number: int) -> list[str]:
            return [b for b in self.bodies(number) if parse_marker(b) is not None]

        def escalations(number: int) -> list[str]:
            return [b for b in self.bodies(number) if b.startswith(ESCALATION_TAG)]

        return Forge(self.world.repo.origin, lambda: self.open_fix(branch), status, escalations,
                     self.world.trailers, branch)


