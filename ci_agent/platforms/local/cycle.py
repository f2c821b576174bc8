"""The local platform: a repository on this machine and the local forge (a JSON file under a
directory, `platforms/local/forge.py`) in place of GitHub or GitLab.

`LocalPlatform` is a whole `Platform`: the CI cycle (`engine.runner.run_cycle`) and the slash
commands run on it as on a forge, with every change request, status comment, label and workflow
dispatch written to the local forge's file instead of sent anywhere, and pushes going to the
repository's own `origin` (a local bare repository, or any remote git can reach unaided).
`ci-agent fix --local` (the registry's `local`) runs the attempt engine directly on the working
copy, in a git worktree, with no forge at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_agent.engine.forge import Forge
from ci_agent.engine.sources import Sources, fetched_sources, inline_sources
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.errors import ForgeError
from ci_agent.platforms.local.forge import LocalForge
from ci_agent.platforms.local.words import LOCAL_WORDS

API_KEY_MISSING = "ANTHROPIC_API_KEY is not set; it is needed to ask Claude (a dry run needs no key)"


@dataclass
class LocalPlatform:
    """`workspace`: the checkout; `forge_dir`: where the local forge keeps its file and runs."""

    workspace: Path
    forge_dir: Path
    inputs: ActionInputs
    words = LOCAL_WORDS
    protected_fix_branch_ok = True  # nothing on this machine protects a branch for a reason

    def missing_key(self, fix_branch: str) -> str:
        return API_KEY_MISSING

    def token(self) -> str:
        return self.inputs.token  # the local forge asks for none; a remote git reaches may

    def forge(self, token: str) -> Forge:
        return LocalForge(self.forge_dir)

    def push_auth(self, repo: Path, token: str) -> list[str]:
        return []  # origin is reached with git's own credentials, if it needs any

    def sources(self, forge: Forge, trig: Trigger, inputs: ActionInputs, dest: Path) -> Sources:
        """A run recorded in the local forge (`runs/<id>/`) is read as a forge's; otherwise the
        logs and results the inputs name in the checkout."""
        if trig.kind in ("workflow_run", "command"):
            return fetched_sources(forge, trig, inputs, dest)
        return inline_sources(inputs, self.workspace)

    def start_ci(self, forge: Forge, token: str, fix_branch: str, commit: str) -> str:
        """No CI starts by itself here: the dispatch of `ci_workflow` is recorded in the forge."""
        workflow = self.inputs.ci_workflow
        try:
            dispatched = bool(workflow) and forge.start_ci(fix_branch, commit, workflow).kind == "started"
        except ForgeError as error:
            return f"**CI must be started by hand on `{fix_branch}`**: {error}"
        if dispatched:
            return f"`{workflow}` was dispatched on `{fix_branch}` (recorded by the local forge)."
        return f"**CI must be started by hand on `{fix_branch}`**: nothing runs CI on this machine."
