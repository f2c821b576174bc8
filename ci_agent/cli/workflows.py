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


# --------------------------------------------------------------------------- GitLab


GITLAB_CI_FILE = Path(".gitlab-ci.yml")
GITLAB_FILES = ("ci-agent.yml", "ci-agent-distill.yml")  # pipelines/gitlab/, templates/ (component)
# The inputs of pipelines/gitlab/ci-agent.yml (kept equal to its `spec:` header by the tests).
GITLAB_FIX_INPUTS = ("stage", "job_prefix", "image", "max_attempts", "build_logs", "test_results", "verify",
                     "mode", "draft", "model", "config", "dry_run")
GITLAB_DISTILL_INPUTS = ("stage", "job_name", "image", "build_logs", "test_results", "when")
_GITLAB_INCLUDE_KEYS = ("local", "remote", "project", "component", "template")
# `.../pipelines/gitlab/ci-agent.yml` (a remote or a project file) or a component `.../ci-agent@ref`.
_OUR_INCLUDE_RE = re.compile(r"(?:^|/)(?:pipelines/gitlab|templates)/(ci-agent(?:-distill)?)\.yml$"
                             r"|(?:^|/)ci-agent/(ci-agent(?:-distill)?)@([^\s/]+)$")
_VERSION_IN_URL_RE = re.compile(r"/v?(\d+\.\d+\.\d+[^/]*)/pipelines/gitlab/")


@dataclass(frozen=True)
class GitLabInclude:
    """One entry of `include:` naming one of our files."""

    file: str  # "ci-agent.yml" or "ci-agent-distill.yml"
    source: str  # what the entry says (URL, path or component address)
    version: str  # the version in the URL or component ref, "" when it names none
    inputs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GitLabCi:
    """What `.gitlab-ci.yml` says about ci-agent (and the local files it includes)."""

    exists: bool
    error: str = ""
    includes: tuple[GitLabInclude, ...] = ()
    inline_jobs: tuple[str, ...] = ()  # jobs running `ci-agent fix --gitlab` written out by hand

    def includes_fix(self) -> bool:
        return any(i.file == "ci-agent.yml" for i in self.includes) or bool(self.inline_jobs)

    def includes_distill(self) -> bool:
        return any(i.file == "ci-agent-distill.yml" for i in self.includes)


def _include_entries(include: object) -> list[tuple[str, Mapping[str, Any]]]:
    """(what the entry names, its inputs) for every shape `include:` takes."""
    items = include if isinstance(include, list) else [include]
    found: list[tuple[str, Mapping[str, Any]]] = []
    for item in items:
        if isinstance(item, str):
            found.append((item, {}))
        elif isinstance(item, Mapping):
            inputs = item.get("inputs")
            inputs = inputs if isinstance(inputs, Mapping) else {}
            for key in _GITLAB_INCLUDE_KEYS:
                value = item.get(key)
                files = value if isinstance(value, list) else [value]
                found += [(str(f), inputs) for f in files if isinstance(f, str)]
    return found


def _our_include(source: str, inputs: Mapping[str, Any]) -> GitLabInclude | None:
    match = _OUR_INCLUDE_RE.search(source.strip())
    if match is None:
        return None
    name = (match.group(1) or match.group(2)) + ".yml"
    version = match.group(3) or ""
    url_version = _VERSION_IN_URL_RE.search(source)
    if not version and url_version is not None:
        version = url_version.group(1)
    return GitLabInclude(name, source, version.removeprefix("v"), inputs)


def _load_documents(text: str) -> list[Any]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def read_gitlab_ci(root: Path, *, _depth: int = 0, path: Path = GITLAB_CI_FILE) -> GitLabCi:
    """`.gitlab-ci.yml`, and the local files it includes (one level: `.gitlab/ci-agent.yml`)."""
    target = root / path
    if not target.is_file():
        return GitLabCi(exists=False)
    try:
        documents = _load_documents(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return GitLabCi(exists=True, error=f"cannot read {path}: {exc}")
    except yaml.YAMLError as exc:
        return GitLabCi(exists=True, error=f"{path} is not valid YAML: {exc}".splitlines()[0])
    # A file with a `spec:` header is two documents; the configuration is the last one.
    config = documents[-1] if documents else {}
    if not isinstance(config, Mapping):
        return GitLabCi(exists=True, error=f"{path} is not a mapping")
    includes: list[GitLabInclude] = []
    inline: list[str] = []
    for source, inputs in _include_entries(config.get("include", [])):
        ours = _our_include(source, inputs)
        if ours is not None:
            includes.append(ours)
        elif _depth == 0 and not re.match(r"^[a-z]+://", source):
            nested = read_gitlab_ci(root, _depth=1, path=Path(source.lstrip("/")))
            includes += nested.includes
            inline += nested.inline_jobs
    for name, job in config.items():
        script = job.get("script") if isinstance(job, Mapping) else None
        lines = script if isinstance(script, list) else [script]
        if any(isinstance(line, str) and "ci-agent fix --gitlab" in line for line in lines):
            inline.append(str(name))
    return GitLabCi(exists=True, includes=tuple(includes), inline_jobs=tuple(inline))
