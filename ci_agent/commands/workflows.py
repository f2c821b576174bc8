"""What a repository's GitHub workflow files say, as far as `init` and `doctor` need to know:
names, triggers, ci-agent steps and their inputs, the secrets they name. Read-only, no network."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

WORKFLOWS_DIR = Path(".github") / "workflows"
# `uses:` of our action (any ref), a local checkout of it, or the image run directly.
_CI_AGENT_USES_RE = re.compile(r"(?:^|/)ci-agent/actions/fix(?:@|$)|^\./actions/fix$|^docker://ghcr\.io/ci-agent/ci-agent[:@]")
_SECRET_RE = re.compile(r"\bsecrets\.([A-Za-z_][A-Za-z0-9_]*)")
_CI_TRIGGERS = frozenset({"push", "pull_request", "pull_request_target", "merge_group"})


@dataclass(frozen=True)
class WorkflowFile:
    path: Path  # relative to the repository root
    name: str  # `name:`, else the path, as GitHub shows (and `workflow_run` matches) it
    triggers: Mapping[str, Any] = field(default_factory=dict)
    jobs: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""
    error: str = ""  # why the file could not be read as a workflow

    def ci_agent_steps(self) -> list[Mapping[str, Any]]:
        """The `with:` inputs of every step that runs ci-agent's action."""
        found: list[Mapping[str, Any]] = []
        for job in self.jobs.values():
            steps = job.get("steps") if isinstance(job, Mapping) else None
            for step in steps if isinstance(steps, list) else []:
                if isinstance(step, Mapping) and _CI_AGENT_USES_RE.search(str(step.get("uses", ""))):
                    inputs = step.get("with")
                    found.append(inputs if isinstance(inputs, Mapping) else {})
        return found

    def uses_ci_agent(self) -> bool:
        return bool(self.ci_agent_steps())

    def ci_agent_refs(self) -> list[str]:
        """The refs (`@v0.1.0`) of every `uses:` of ci-agent in the file."""
        return re.findall(r"ci-agent/actions/fix@([^\s#\"']+)", self.text)

    def watched(self) -> list[str]:
        """The workflow names a `workflow_run` trigger reacts to."""
        run = self.triggers.get("workflow_run")
        names = run.get("workflows") if isinstance(run, Mapping) else None
        return [str(n) for n in names] if isinstance(names, list) else []

    def secrets(self) -> list[str]:
        return sorted(set(_SECRET_RE.findall(self.text)))


def _triggers(on: object) -> dict[str, Any]:
    """`on:` as a mapping whatever its shape (a string, a list, or a mapping)."""
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {str(e): None for e in on}
    if isinstance(on, Mapping):
        return {str(k): v for k, v in on.items()}
    return {}


def parse_workflow(path: Path, text: str) -> WorkflowFile:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return WorkflowFile(path, str(path), text=text, error=f"not valid YAML: {exc}".splitlines()[0])
    if not isinstance(data, Mapping):
        return WorkflowFile(path, str(path), text=text, error="not a mapping")
    # YAML 1.1 (PyYAML) reads the key `on` as the boolean true.
    on = data.get("on", data.get(True))
    jobs = data.get("jobs")
    name = data.get("name")
    return WorkflowFile(path, str(name) if isinstance(name, str) and name.strip() else str(path),
                        _triggers(on), jobs if isinstance(jobs, Mapping) else {}, text)


def read_workflows(root: Path) -> list[WorkflowFile]:
    directory = root / WORKFLOWS_DIR
    if not directory.is_dir():
        return []
    found: list[WorkflowFile] = []
    for path in sorted(directory.iterdir()):
        if path.suffix in (".yml", ".yaml") and path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                found.append(WorkflowFile(path.relative_to(root), str(path.relative_to(root)),
                                          error=f"cannot read: {exc}"))
                continue
            found.append(parse_workflow(path.relative_to(root), text))
    return found


def ci_workflows(workflows: Sequence[WorkflowFile]) -> list[WorkflowFile]:
    """The repository's own CI: run on pushes or pull requests, and not running ci-agent itself."""
    return [w for w in workflows if not w.error and not w.uses_ci_agent() and _CI_TRIGGERS & set(w.triggers)]


def by_file_name(workflows: Sequence[WorkflowFile], file_name: str) -> WorkflowFile | None:
    return next((w for w in workflows if w.path.name == file_name), None)
