"""What the checks of our GitHub actions and workflows share (tests/github/test_action_files.py
for actions/fix and its workflows, test_command_files.py for actions/command and its workflow):
reading the YAML, the published-schema and zizmor audits, least privilege, and the action's
inputs as the code reads them."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_agent import __version__
from ci_agent.platforms.github import env as cienv
from tests.conftest import REPO_ROOT

# What a job may ask for, and nothing else (no write-all, no packages, no id-token...).
ALLOWED_PERMISSIONS = {"contents": {"write"}, "pull-requests": {"write"}, "issues": {"write"},
                       "actions": {"read", "write"}}
SUPPRESSION = re.compile(r" # zizmor: ignore\[[^\]]+\][^\n]*")


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def on(workflow: Mapping[Any, Any]) -> Any:
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as true


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("cwd", REPO_ROOT)
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, **kwargs)


def schema_check(schema: str, paths: Iterable[Path]) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with its built-in `vendor.github-actions` / `vendor.github-workflows`."""
    return run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, paths)])


def zizmor(paths: Iterable[Path], persona: str = "regular") -> list[dict[str, Any]]:
    found = shutil.which("zizmor")
    if found is None:
        pytest.fail("zizmor is not installed: it comes with the test extra")
    result = run([found, "--offline", "--persona", persona, "--no-exit-codes", "--format", "json",
                  *map(str, paths)])
    assert result.returncode == 0, result.stderr
    findings: list[dict[str, Any]] = json.loads(result.stdout)
    return findings


def where(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in findings]


def bare(path: Path, target: Path) -> Path:
    """A copy of `path` without our zizmor suppressions (the control of an audit)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(SUPPRESSION.sub("", path.read_text()))
    return target


def assert_every_suppression_says_why(paths: Iterable[Path]) -> None:
    for path in paths:
        for line in path.read_text().splitlines():
            if "zizmor: ignore" in line:
                reason = re.search(r"zizmor: ignore\[[a-z-]+\](.*)", line)
                words = reason.group(1).split() if reason else []
                assert len(words) >= 6, f"{path.name}: a suppression without its reason: {line.strip()}"


def assert_least_privilege(workflow: Mapping[str, Any]) -> None:
    assert workflow["permissions"] == {}, "nothing at the top level; each job asks for its own"
    for job_id, job in workflow["jobs"].items():
        permissions = job["permissions"]
        assert isinstance(permissions, dict), f"{job_id}: permissions must be listed, not write-all"
        for scope, level in permissions.items():
            assert level in ALLOWED_PERMISSIONS.get(scope, set()), f"{job_id}: {scope}: {level}"


def assert_runs_the_versioned_image(action_path: Path, args: list[str]) -> None:
    runs = load(action_path)["runs"]
    assert runs["using"] == "docker"
    assert runs["image"] == f"docker://ghcr.io/ci-agent/ci-agent:{__version__}"
    assert runs["args"] == args
    assert "image: ../../Dockerfile" in action_path.read_text(), "the from-source alternative is documented"


def fields_changed_by(name: str, value: str) -> list[str]:
    """The `ActionInputs` fields that input `name` set to `value` changes."""
    base = {cienv.input_env_name("anthropic_api_key"): "sk-base"}
    before = cienv.action_inputs(base)
    after = cienv.action_inputs({**base, cienv.input_env_name(name): value})
    return [f.name for f in dataclasses.fields(after) if getattr(after, f.name) != getattr(before, f.name)]


def assert_defaults_mean_the_code_defaults(action: Mapping[str, Any]) -> None:
    """The runner passes each default as INPUT_*; read by the code they give its own defaults."""
    env = {cienv.input_env_name(name): str(spec["default"]) for name, spec in action["inputs"].items()
           if "default" in spec and "${{" not in str(spec["default"])}
    assert cienv.action_inputs(env) == cienv.action_inputs({})
    assert action["inputs"]["github_token"]["default"] == "${{ github.token }}"
    assert action["inputs"]["anthropic_api_key"]["required"] is True
