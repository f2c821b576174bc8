"""The failing run's workflow, as the trigger carries it (issue 16: the default branch's latest
run of the same workflow is the one a failure is compared with)."""

from __future__ import annotations

import json
from pathlib import Path

from ci_agent.platforms.github.env import github_context, trigger, workflow_file


def _env(tmp_path: Path, event_name: str, payload: dict[str, object], **extra: str) -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return {"GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(path), "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_RUN_ID": "77", "GITHUB_SHA": "a" * 40, "GITHUB_ACTOR": "alice", **extra}


def test_a_workflow_run_names_its_workflow_by_id(tmp_path: Path) -> None:
    payload = {"repository": {"full_name": "octo/app"},
               "workflow_run": {"id": 9001, "workflow_id": 161335, "head_branch": "feature/y",
                                "head_sha": "b" * 40, "conclusion": "failure",
                                "head_repository": {"full_name": "octo/app"}}}
    assert trigger(github_context(_env(tmp_path, "workflow_run", payload))).workflow == "161335"


def test_an_inline_step_names_its_workflow_file(tmp_path: Path) -> None:
    ref = "octo/app/.github/workflows/build-and-test.yml@refs/heads/feature/y"
    env = _env(tmp_path, "push", {}, GITHUB_REF_NAME="feature/y", GITHUB_WORKFLOW_REF=ref)
    assert trigger(github_context(env)).workflow == "build-and-test.yml"
    assert trigger(github_context(_env(tmp_path, "push", {}, GITHUB_REF_NAME="x"))).workflow == ""


def test_workflow_file_of_odd_refs() -> None:
    assert workflow_file("") == ""
    assert workflow_file("ci.yml") == ""  # not a ref GitHub writes
    assert workflow_file("o/r/.github/workflows/ci.yml") == "ci.yml"
