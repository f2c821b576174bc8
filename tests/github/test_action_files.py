"""The GitHub action and the ready-to-copy workflows: valid against the published schemas, clean
under zizmor (every suppression carries its reason, and the reasons hold), least privilege, and
consistent with the code (every input read by `cienv.action_inputs`, documented in the README,
the image and the action pinned to the package version)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ci_agent import __version__
from ci_agent.cli import init, stacks
from ci_agent.cli.workflows import WorkflowFile
from ci_agent.platforms.github import env as cienv
from tests.conftest import REPO_ROOT
from tests.github.workflow_checks import (
    assert_defaults_mean_the_code_defaults,
    assert_every_suppression_says_why,
    assert_least_privilege,
    assert_runs_the_versioned_image,
    bare,
    fields_changed_by,
    load,
    on,
    schema_check,
    where,
    zizmor,
)

ACTION = REPO_ROOT / "actions" / "fix" / "action.yml"
PIPELINES = REPO_ROOT / "pipelines" / "github"
INLINE = PIPELINES / init.INLINE_FILE
ON_FAILURE = PIPELINES / init.ON_FAILURE_FILE
WORKFLOWS = (INLINE, ON_FAILURE)
README = REPO_ROOT / "README.md"
# The outputs of the contract between the helpers of issue 5 (no code constant lists them yet).
CONTRACT_OUTPUTS = ("outcome", "attempt", "branch", "pr_number", "pr_url", "tokens", "verdict", "cost_usd")


def _steps(workflow: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for job_id, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_id, step


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """What `ci-agent init` writes for every stack (the on-failure one watching two CI workflows
    with names that need quoting), so the generated files get the same checks as the templates."""
    out = tmp_path_factory.mktemp("rendered")
    watched = [WorkflowFile(Path(".github/workflows/build.yml"), "Build: all"),
               WorkflowFile(Path(".github/workflows/test.yml"), "Test")]
    paths = []
    for stack in stacks.STACKS:
        inline = out / f"{stack.name}-inline.yml"
        inline.write_text(init.render_inline(stack))
        on_failure = out / f"{stack.name}-on-failure.yml"
        on_failure.write_text(init.render_on_failure(stack, watched))
        paths += [inline, on_failure]
    return paths


# --------------------------------------------------------------------------- schemas and zizmor


def test_action_validates_against_the_published_action_schema() -> None:
    result = schema_check("vendor.github-actions", [ACTION])
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_validate_against_the_published_workflow_schema(rendered: list[Path]) -> None:
    result = schema_check("vendor.github-workflows", [*WORKFLOWS, *rendered])
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_action(tmp_path: Path) -> None:
    """The control: the built-in schema really is applied (an unknown `runs.using` fails)."""
    broken = tmp_path / "action.yml"
    broken.write_text(ACTION.read_text().replace("using: docker", "using: dockerish"))
    assert schema_check("vendor.github-actions", [broken]).returncode != 0


def test_zizmor_finds_nothing_in_the_action_and_the_workflows(rendered: list[Path]) -> None:
    assert where(zizmor([ACTION, *WORKFLOWS, *rendered])) == []


def test_zizmor_really_audits_them(tmp_path: Path) -> None:
    """The control: without our inline suppressions zizmor does flag the workflow_run trigger,
    so the clean result above comes from reasoned suppressions, not from an audit that never ran."""
    idents = {f["ident"] for f in zizmor([bare(ON_FAILURE, tmp_path / "on-failure.yml")])}
    assert "dangerous-triggers" in idents


def test_every_zizmor_suppression_says_why() -> None:
    assert_every_suppression_says_why((ACTION, *WORKFLOWS))


def test_the_workflow_run_reason_holds_no_fork_code_is_checked_out_or_run() -> None:
    """The suppression of dangerous-triggers says: no fork code is checked out or run with
    secrets. That is true when the only checkout is conditioned on the head repository being
    this one, the job runs only on failures and green fix-branch runs, and no step runs a command at all."""
    workflow = load(ON_FAILURE)
    assert on(workflow)["workflow_run"]["types"] == ["completed"]
    (job,) = workflow["jobs"].values()
    # Failed runs, and green runs of our own fix branches or attempt commits (to close the
    # cycle). A fork can name a branch `ci-agent/fix/x` or write our trailer too: the checkout
    # condition below and ci-agent's own fork refusal (from the payload, before anything else)
    # are what keep its code out.
    assert " ".join(job["if"].split()) == (
        "github.event.workflow_run.conclusion == 'failure' || "
        "(github.event.workflow_run.conclusion == 'success' && "
        "(startsWith(github.event.workflow_run.head_branch, 'ci-agent/fix/') || "
        "contains(github.event.workflow_run.head_commit.message, 'CI-Agent-Attempt:')))"
    )
    checkouts = [s for _, s in _steps(workflow) if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert checkouts
    for step in checkouts:
        assert step["if"] == "github.event.workflow_run.head_repository.full_name == github.repository"
    assert [s for _, s in _steps(workflow) if "run" in s] == []


def test_inline_fix_step_runs_on_failure_and_never_for_fork_pull_requests() -> None:
    workflow = load(INLINE)
    (fix,) = [s for _, s in _steps(workflow) if "ci-agent/actions/fix@" in str(s.get("uses", ""))]
    condition = " ".join(fix["if"].split())
    assert condition.startswith("(failure() || (success() && startsWith(github.head_ref || github.ref_name, "
                                "'ci-agent/fix/'))) &&"), "after a failed step, or a fix branch's green job"
    assert "github.event.pull_request.head.repo.full_name == github.repository" in condition
    assert fix["with"]["job_status"] == "${{ job.status }}", "the step tells which of the two it is"
    assert "workflow_dispatch" in on(workflow)  # GITHUB_TOKEN pushes are re-run by dispatch
    assert fix["with"]["ci_workflow"] == INLINE.name


# --------------------------------------------------------------------------- least privilege, no injection


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_permissions_are_least_privilege(path: Path) -> None:
    assert_least_privilege(load(path))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_one_fix_at_a_time_per_source_branch(path: Path) -> None:
    workflow = load(path)
    for job in workflow["jobs"].values():
        concurrency = job.get("concurrency", workflow.get("concurrency"))
        assert concurrency is not None
        assert concurrency["cancel-in-progress"] is False
        assert re.fullmatch(r"ci-agent-\$\{\{ github\.(head_ref \|\| github\.ref_name|"
                            r"event\.workflow_run\.head_branch) \}\}", concurrency["group"])


def test_no_expression_inside_a_run_script(rendered: list[Path]) -> None:
    """Untrusted values (branch names, titles) reach commands through `env:` only; our templates
    need no expression in `run:` at all."""
    for path in (*WORKFLOWS, *rendered):
        for job_id, step in _steps(load(path)):
            assert "${{" not in str(step.get("run", "")), f"{path.name}: {job_id}: {step.get('name')}"


def test_pipes_keep_the_exit_status() -> None:
    """`| tee` would hide a failed build unless bash runs with pipefail (`shell: bash` does)."""
    for _, step in _steps(load(INLINE)):
        if "|" in str(step.get("run", "")):
            assert step.get("shell") == "bash"


# --------------------------------------------------------------------------- consistency with the code


def _action() -> dict[str, Any]:
    return load(ACTION)


def test_the_action_runs_the_versioned_image_with_fix_github() -> None:
    assert_runs_the_versioned_image(ACTION, ["fix", "--github"])


def test_the_workflows_use_the_action_of_this_version(rendered: list[Path]) -> None:
    for path in (*WORKFLOWS, *rendered):
        refs = re.findall(r"uses: ci-agent/ci-agent/actions/fix@(\S+)", path.read_text())
        assert refs and set(refs) == {f"v{__version__}"}, path.name


def test_action_inputs_are_the_ones_the_code_reads() -> None:
    assert list(_action()["inputs"]) == list(cienv.INPUT_NAMES)


# A value for each input that differs from its default: action_inputs must pick every one up.
_NON_DEFAULT = {"anthropic_api_key": "sk-test", "github_token": "ghs_test", "build_logs": "a.log",
                "test_results": "out/*.xml", "verify": "make check", "mode": "push", "max_attempts": "5",
                "model": "claude-test", "config": "ci/agent.yml", "ci_workflow": "ci.yml", "draft": "false",
                "dry_run": "true", "job_status": "success"}


@pytest.mark.parametrize("name", cienv.INPUT_NAMES)
def test_every_input_is_read_by_action_inputs(name: str) -> None:
    assert fields_changed_by(name, _NON_DEFAULT[name]) == [_FIELDS.get(name, name)]


_FIELDS = {"github_token": "token"}  # the field is forge-neutral: GitLab's token lands there too


def test_action_defaults_mean_what_the_code_defaults_to() -> None:
    assert_defaults_mean_the_code_defaults(_action())


def test_every_input_and_output_has_a_description() -> None:
    action = _action()
    assert list(action["outputs"]) == list(CONTRACT_OUTPUTS)
    for section in ("inputs", "outputs"):
        for name, spec in action[section].items():
            assert len(str(spec.get("description", "")).split()) >= 3, f"{section}.{name}"


def _readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## GitHub Action\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert match is not None, "README.md has no `## GitHub Action` section"
    return match.group(1)


def test_readme_documents_every_input_and_output() -> None:
    section = _readme_section()
    for name in (*_action()["inputs"], *_action()["outputs"]):
        assert re.search(rf"^\| `{name}` \|", section, re.MULTILINE), f"README: no table row for `{name}`"
    for path in WORKFLOWS:
        assert f"pipelines/github/{path.name}" in section


def test_the_packaged_templates_are_the_pipelines_files() -> None:
    """`ci-agent init` writes the copies inside the wheel; they must be these files."""
    for path in WORKFLOWS:
        assert init.template(path.name) == path.read_text(encoding="utf-8"), path.name
    assert init.render_inline(stacks.DOTNET) == INLINE.read_text(encoding="utf-8")
