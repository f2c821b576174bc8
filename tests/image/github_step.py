"""How the GitHub runner starts a Docker container action, reproduced for `buildah run`.

The runner (actions/runner, ContainerActionHandler) mounts four host directories at fixed paths,
makes /github/workspace the working directory, passes every GITHUB_* / RUNNER_* variable with
host paths rewritten to those mounts, HOME=/github/home, and one INPUT_<NAME> per action input
(name upper-cased, spaces to underscores, hyphens kept). Then it runs the image's ENTRYPOINT
with the action's `args` (or the image's CMD when there are none).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKSPACE = "/github/workspace"
HOME = "/github/home"
WORKFLOW = "/github/workflow"
FILE_COMMANDS = "/github/file_commands"


def input_variable(name: str) -> str:
    """The runner's rule: `INPUT_` + name with spaces replaced by `_`, upper-cased."""
    return "INPUT_" + name.replace(" ", "_").upper()


@dataclass(frozen=True)
class GithubStep:
    """The host side of one container step: the four mounted directories and the file commands."""

    workspace: Path
    home: Path
    workflow: Path
    file_commands: Path
    step_id: str

    @classmethod
    def create(cls, root: Path, workspace: Path, event: Mapping[str, Any]) -> GithubStep:
        step = cls(workspace=workspace, home=root / "_github_home", workflow=root / "_github_workflow",
                   file_commands=root / "_runner_file_commands", step_id=str(uuid.uuid4()))
        for directory in (step.home, step.workflow, step.file_commands):
            directory.mkdir(parents=True, exist_ok=True)
        (step.workflow / "event.json").write_text(json.dumps(event))
        for name in ("set_output", "step_summary", "set_env", "add_path", "save_state"):
            (step.file_commands / f"{name}_{step.step_id}").touch()
        return step

    def volumes(self) -> dict[Path, str]:
        return {self.home: HOME, self.workflow: WORKFLOW, self.file_commands: FILE_COMMANDS,
                self.workspace: WORKSPACE}

    def file_command(self, name: str) -> Path:
        """The host file behind e.g. GITHUB_OUTPUT (`set_output`) or GITHUB_STEP_SUMMARY."""
        return self.file_commands / f"{name}_{self.step_id}"

    def env(self, inputs: Mapping[str, str], *, repository: str, sha: str, ref: str,
            event_name: str) -> dict[str, str]:
        def command_file(name: str) -> str:
            return f"{FILE_COMMANDS}/{name}_{self.step_id}"

        env = {
            "HOME": HOME,
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": WORKSPACE,
            "GITHUB_EVENT_PATH": f"{WORKFLOW}/event.json",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_REPOSITORY": repository,
            "GITHUB_REPOSITORY_OWNER": repository.split("/", 1)[0],
            "GITHUB_SHA": sha,
            "GITHUB_REF": ref,
            "GITHUB_REF_NAME": ref.removeprefix("refs/heads/"),
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_API_URL": "https://api.github.com",
            "GITHUB_RUN_ID": "1",
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_JOB": "build",
            "GITHUB_ACTION": "fix",
            "GITHUB_ACTOR": "octocat",
            "GITHUB_OUTPUT": command_file("set_output"),
            "GITHUB_STEP_SUMMARY": command_file("step_summary"),
            "GITHUB_ENV": command_file("set_env"),
            "GITHUB_PATH": command_file("add_path"),
            "GITHUB_STATE": command_file("save_state"),
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
            "RUNNER_TEMP": "/home/runner/work/_temp",
        }
        env.update({input_variable(name): value for name, value in inputs.items()})
        return env


def entrypoint_command(entrypoint: Sequence[str], cmd: Sequence[str], args: Sequence[str]) -> list[str]:
    """`docker run IMAGE ARGS`: the entrypoint, then the args, or the image's CMD without args."""
    return [*entrypoint, *(args if args else cmd)]
