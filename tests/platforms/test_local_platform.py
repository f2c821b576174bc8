"""`LocalPlatform`: the CI cycle run on this machine, the local forge standing in for GitHub or
GitLab. A real repository with a bare origin, real git, the real engine; the model is a scripted
client that validates each request as the API does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_agent.engine.runner import run_cycle
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.platforms.local.cycle import LocalPlatform
from ci_agent.platforms.local.forge import LOCAL_BOT, LocalForge
from tests.fakes.anthropic_fake import message, tool_use, validate
from tests.fakes.anthropic_review import default_review, is_review_request

WRONG = "def add(a, b):\n    return a - b\n"
RIGHT = "def add(a, b):\n    return a + b\n"
FAILURE = "FAILED test_calc.py::test_add - assert -1 == 5\n"
DIFF = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
        "-    return a - b\n+    return a + b\n")


def git(cwd: Path, *argv: str) -> str:
    return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e.x", *argv], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout of `feature` whose build failed: the job wrote `build.log` (not committed)."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True, capture_output=True)
    git(work, "checkout", "-q", "-b", "main")
    (work / "calc.py").write_text(WRONG)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "calc")
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "-b", "feature")
    git(work, "push", "-q", "origin", "feature")
    (work / "build.log").write_text(FAILURE)
    return work


class ScriptedClient:
    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        assert validate(json.loads(json.dumps(request))) is None
        if is_review_request(request):  # the reviewer (on by default) approves
            return default_review(request)
        return self.replies.pop(0)


def trigger(workspace: Path) -> Trigger:
    return Trigger("inline", "feature", git(workspace, "rev-parse", "HEAD"), "1", "1", "failure", actor="ann")


def test_a_cycle_on_the_local_platform_pushes_the_fix_and_writes_to_the_local_forge(
        workspace: Path, tmp_path: Path) -> None:
    inputs = ActionInputs(anthropic_api_key="k", build_logs=("build.log",), ci_workflow="ci.yml")
    LocalForge(tmp_path / "forge").configure(workflows={"ci.yml": True})
    reply = message(tool_use("submit_patch", {
        "diff": DIFF, "summary": "add adds", "root_cause": "add in calc.py subtracted",
        "confidence": 0.9, "assumptions": [], "open_questions": []}), stop_reason="tool_use")

    result = run_cycle({}, inputs, trigger(workspace), LocalPlatform(workspace, tmp_path / "forge", inputs),
                       lambda: ScriptedClient(reply))

    assert (result.outcome, result.branch, result.attempt) == ("committed", "ci-agent/fix/feature", 1)
    assert git(workspace, "show", "origin/ci-agent/fix/feature:calc.py") + "\n" == RIGHT
    forge = LocalForge(tmp_path / "forge")
    change = forge.find_change_request("ci-agent/fix/feature")
    assert change is not None and change.target_branch == "feature"
    assert forge.read()["dispatches"] == [{"workflow": "ci.yml", "ref": "ci-agent/fix/feature", "inputs": {}}]
    status = [c for c in forge.list_comments(change.number) if c.author == LOCAL_BOT]
    assert len(status) == 1 and "`ci.yml` was dispatched on `ci-agent/fix/feature`" in status[0].body


def test_a_dry_run_on_the_local_platform_sends_and_writes_nothing(workspace: Path, tmp_path: Path) -> None:
    inputs = ActionInputs(build_logs=("build.log",), dry_run=True)

    result = run_cycle({}, inputs, trigger(workspace), LocalPlatform(workspace, tmp_path / "forge", inputs))

    assert result.outcome == "skipped" and result.request is not None
    assert result.message.startswith("dry run: nothing was sent, pushed or posted")
    assert LocalForge(tmp_path / "forge").read()["change_requests"] == {}
    assert "ci-agent/fix/feature" not in git(workspace, "ls-remote", "origin")
