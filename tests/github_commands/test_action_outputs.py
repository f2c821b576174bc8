"""The outputs both GitHub actions declare are exactly the outputs their steps write to
`$GITHUB_OUTPUT` (issue 13 point 14: actions/command declared none), on success and on error, and
every `outcome` value the code can write is documented in each action.yml and in the README."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_agent.engine.runner import OUTCOMES
from ci_agent.platforms.github.cycle import finish_github, run_github, run_github_command
from tests.conftest import REPO_ROOT
from tests.github_commands.harness import CommandWorld
from tests.github_scenarios.harness import parse_github_output

COMMAND_ACTION = REPO_ROOT / "actions" / "command" / "action.yml"
FIX_ACTION = REPO_ROOT / "actions" / "fix" / "action.yml"
README = REPO_ROOT / "README.md"


def _outputs(action: Path) -> dict[str, Any]:
    data = yaml.safe_load(action.read_text(encoding="utf-8"))
    outputs = data.get("outputs") or {}
    assert isinstance(outputs, dict)
    return outputs


def test_the_command_step_writes_exactly_the_declared_outputs(world: CommandWorld) -> None:
    number = world.open_pr()

    run = world.command(number, world.say(number, "/ci-agent status"))

    assert run.exit_code == 0, str(run)
    assert set(run.outputs) == set(_outputs(COMMAND_ACTION)), str(run)
    assert run.outputs["outcome"] in OUTCOMES


def test_the_fix_step_writes_exactly_the_declared_outputs(world: CommandWorld) -> None:
    run = world.after_ci(world.ci("main"))  # the model's scripted answer: give_up

    assert run.exit_code == 4, str(run)
    assert set(run.outputs) == set(_outputs(FIX_ACTION)), str(run)
    assert run.outputs["outcome"] == "gave_up"


@pytest.mark.parametrize(("action", "run"), [(FIX_ACTION, run_github), (COMMAND_ACTION, run_github_command)],
                         ids=["fix", "command"])
def test_a_failed_step_writes_the_declared_outputs_too(action: Path, run: Any, tmp_path: Path) -> None:
    output = tmp_path / "output"
    output.touch()
    env = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}

    with pytest.raises(Exception, match="GITHUB_REPOSITORY"):
        finish_github(env, run)

    written = parse_github_output(output.read_text())
    assert set(written) == set(_outputs(action)) and written["outcome"] == "error"


@pytest.mark.parametrize("action", [FIX_ACTION, COMMAND_ACTION], ids=["fix", "command"])
def test_every_outcome_is_documented_in_the_action(action: Path) -> None:
    described = str(_outputs(action)["outcome"]["description"])
    assert set(re.findall(r"\b[a-z_]+\b", described)) >= set(OUTCOMES), described


def test_every_outcome_is_documented_in_the_readme() -> None:
    rows = [line for line in README.read_text(encoding="utf-8").splitlines()
            if line.startswith(("| `outcome` |", "| `CI_AGENT_OUTCOME` |"))]
    assert rows, "the README's output tables"
    for row in rows:
        assert set(re.findall(r"`([a-z_]+)`", row)) >= set(OUTCOMES), row
