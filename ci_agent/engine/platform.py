"""What the fix cycle needs from the CI it runs in (GitHub Actions or GitLab CI), and nothing else.

The cycle itself (`runner`) is forge-neutral: it reads durable state, counts the budget, runs the
attempt engine, pushes fast-forward only and writes the change request and status comment
through the `Forge` protocol. A `Platform` supplies the forge client, the token, how a push is
authenticated, where the failure is read from, and how CI is started on the fix branch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ci_agent.engine.forge import Forge
from ci_agent.engine.sources import Sources
from ci_agent.engine.types import ActionInputs, Trigger


@dataclass(frozen=True)
class Words:
    """How a forge names things, for every sentence a person reads."""

    forge: str  # "GitHub"
    change_request: str  # "pull request"
    prefix: str  # "#" on GitHub, "!" for GitLab merge requests
    run: str  # "run" (GitHub) / "pipeline" (GitLab)
    verify_input: str = "the `verify` input"  # where a job's in-job verify command is set

    def ref(self, number: int) -> str:
        return f"{self.prefix}{number}"


class Platform(Protocol):
    @property
    def words(self) -> Words: ...

    @property
    def workspace(self) -> Path:
        """The checkout the job runs in."""
        ...

    @property
    def protected_fix_branch_ok(self) -> bool:
        """Whether a protected `ci-agent/fix/*` branch may be pushed to: on GitLab, protecting
        that wildcard is how protected CI/CD variables reach the fix branch's pipelines."""
        ...

    def missing_key(self, fix_branch: str) -> str:
        """The sentence for a job without the model's API key: where it should come from."""
        ...

    def token(self) -> str:
        """The token for the forge API and the push; a `UsageError` naming the setting when none."""
        ...

    def forge(self, token: str) -> Forge: ...

    def push_auth(self, repo: Path, token: str) -> list[str]:
        """`git -c` options so fetches and pushes to origin use `token` (nothing for local remotes)."""
        ...

    def sources(self, forge: Forge, trig: Trigger, inputs: ActionInputs, dest: Path) -> Sources: ...

    def start_ci(self, forge: Forge, token: str, fix_branch: str, commit: str) -> str:
        """Make sure CI runs on the pushed commit; the sentence for the status comment."""
        ...
