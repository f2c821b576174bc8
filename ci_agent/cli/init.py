"""`ci-agent init`: detect the repository's stack, write the GitHub workflows (fix inline, fix on
failure, slash commands) or the GitLab CI setup, and a starter `.ci-agent.yml`.

The workflows are the ready-to-copy files of `pipelines/github/` (shipped in the wheel as
`ci_agent/templates/ci-agent-*.yml`, kept identical by the tests), with the .NET build and test
steps swapped for the detected stack's, the on-failure workflow pointed at the repository's
existing CI workflows, and the command workflow dispatching the same CI workflow. Nothing is
overwritten without `--force`; nothing is written when any target exists, so a refused run
leaves the repository as it was.

GitLab (`--forge gitlab`, the default when `.gitlab-ci.yml` exists): a project's existing
`.gitlab-ci.yml` is never rewritten, even with `--force`; init prints the `include:` lines to add
to it. Without one, it writes a starter `.gitlab-ci.yml` (build and test for the stack, logs and
results kept as artifacts) that includes `pipelines/gitlab/ci-agent.yml` and `ci-agent-distill.yml`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from ci_agent import __version__
from ci_agent.cli.stacks import DOTNET, STACK_NAMES, STACKS, Stack, detect_stacks
from ci_agent.cli.workflows import (
    GITLAB_CI_FILE,
    WORKFLOWS_DIR,
    WorkflowFile,
    ci_workflows,
    read_gitlab_ci,
    read_workflows,
)
from ci_agent.errors import UsageError

INLINE_FILE = "ci-agent-inline.yml"
ON_FAILURE_FILE = "ci-agent-on-failure.yml"
COMMAND_FILE = "ci-agent-command.yml"
CONFIG_FILE = ".ci-agent.yml"
FORGES = ("github", "gitlab")
# The image of the starter GitLab job per stack: the toolchain's official image (GitLab runners
# have no setup actions). All are Debian/Ubuntu based, so bash and `set -o pipefail` are there.
GITLAB_IMAGES = {"dotnet": "mcr.microsoft.com/dotnet/sdk:8.0", "node": "node:lts", "python": "python:3.12",
                 "rust": "rust:1", "go": "golang:1", "maven": "maven:3-eclipse-temurin-21",
                 "gradle": "gradle:jdk21"}
GITLAB_RAW_BASE = f"https://raw.githubusercontent.com/ci-agent/ci-agent/v{__version__}/pipelines/gitlab"


# --------------------------------------------------------------------------- rendering


def template(name: str) -> str:
    return resources.files("ci_agent").joinpath("templates", name).read_text(encoding="utf-8")


def _steps(stack: Stack) -> str:
    setup = stack.setup + "\n" if stack.setup else ""
    return (f"{setup}"
            "      # `shell: bash` runs with -o pipefail, so `| tee` keeps the build's exit status.\n"
            "      - name: Build\n"
            "        shell: bash\n"
            f"        run: {stack.ci_build} 2>&1 | tee build.log\n"
            "\n"
            "      - name: Test\n"
            "        shell: bash\n"
            f"        run: {stack.ci_test} 2>&1 | tee test.log\n")


def _results_block(globs: Sequence[str], indent: str) -> str:
    if not globs:
        return ""
    if len(globs) == 1:
        return f'{indent}test_results: "{globs[0]}"\n'
    return f"{indent}test_results: |\n" + "".join(f"{indent}  {g}\n" for g in globs)


def _replace_once(text: str, old: str, new: str, what: str) -> str:
    if text.count(old) != 1:  # the template changed under this code: a test catches it
        raise RuntimeError(f"workflow template: expected exactly one {what}")
    return text.replace(old, new)


def _flow_list(names: Sequence[str]) -> str:
    return "[" + ", ".join(_yaml_scalar(n) for n in names) + "]"


def _yaml_scalar(text: str) -> str:
    plain = text and all(c.isalnum() or c in " -_./()" for c in text) and not text[0].isspace()
    return text if plain and text[-1] != " " else '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_INDENT = "          "
_ON_FAILURE_RESULTS = (f"{_INDENT}test_results: |\n{_INDENT}  **/*.trx\n{_INDENT}  **/junit*.xml\n")


def render_inline(stack: Stack) -> str:
    text = template(INLINE_FILE)
    text = _replace_once(text, _steps(DOTNET), _steps(stack), "block of .NET build and test steps")
    return _replace_once(text, _results_block(DOTNET.results, _INDENT),
                         _results_block(stack.results, _INDENT), "test_results input")


def render_on_failure(stack: Stack, watched: Sequence[WorkflowFile]) -> str:
    """The on-failure workflow watching `watched` (the repository's CI workflows), dispatching the
    first of them on the fix branch; the template's `CI` / `ci.yml` when there are none."""
    text = _api_inputs(template(ON_FAILURE_FILE), stack, watched)
    if watched:
        names = _flow_list([w.name for w in watched])
        text = _replace_once(text, "    workflows: [CI]\n", f"    workflows: {names}\n", "workflow list")
    return text


def render_command(stack: Stack, watched: Sequence[WorkflowFile]) -> str:
    """The slash-command workflow: it reads the failed run's artifacts as the on-failure one does
    and dispatches the same CI workflow on the fix branch."""
    return _api_inputs(template(COMMAND_FILE), stack, watched)


def _api_inputs(text: str, stack: Stack, watched: Sequence[WorkflowFile]) -> str:
    """test_results and ci_workflow of a workflow that reads a finished run through the API."""
    globs = (*stack.results, "**/junit*.xml") if stack.name == "dotnet" else stack.results
    text = _replace_once(text, _ON_FAILURE_RESULTS, _results_block(globs, _INDENT), "test_results input")
    if watched:
        dispatched = _yaml_scalar(watched[0].path.name)
        text = _replace_once(text, f"{_INDENT}ci_workflow: ci.yml\n", f"{_INDENT}ci_workflow: {dispatched}\n",
                             "ci_workflow input")
    return text


def render_config(stack: Stack) -> str:
    results = "[" + ", ".join(f'"{g}"' for g in stack.results) + "]"
    return (f"# ci-agent configuration, written by `ci-agent init` for a {stack.label} repository.\n"
            "# Every key is in README.md (Configuration); unknown keys are errors.\n"
            "commands:\n"
            f'  build: "{stack.build}"\n'
            f'  test: "{stack.test}"\n'
            "  # verify is for `ci-agent fix --local` only: in CI the fix branch's own pipeline\n"
            "  # verifies, and only the job's `verify` input (GitLab: CI_AGENT_INPUT_VERIFY) runs a\n"
            "  # command inside ci-agent's job, whose image must then have the toolchain.\n"
            f'  verify: "{stack.verify}"\n'
            f"results:\n  globs: {results}\n"
            "budget:\n  max_attempts: 3\n"
            "patch:\n  max_files: 10\n  max_changed_lines: 200\n"
            "# notes:\n#   - \"What the model should know about this code base.\"\n")


# --------------------------------------------------------------------------- GitLab


def _yaml_list_item(text: str) -> str:
    return _yaml_scalar(text) if text and not text.startswith("*") else '"' + text + '"'


def render_gitlab_includes(stack: Stack) -> str:
    """The `include:` block adding ci-agent's fix job and its distill job, with this stack's inputs.
    The fix job reads the failed jobs' traces through the API, so it gets no build_logs; the
    distill job reads the files the build job kept (build.log)."""
    # The fix job finds the results in the artifacts it downloads, one folder per job: `**/` first.
    anywhere = ", ".join(g if g.startswith("**/") else "**/" + g for g in stack.results)
    fix_inputs = f'      test_results: "{anywhere}"\n' if anywhere and anywhere != "**/*.trx" else ""
    distill_inputs = "      build_logs: build.log\n" + (
        f'      test_results: "{", ".join(stack.results)}"\n' if fix_inputs else "")
    return ("include:\n"
            f"  - remote: {GITLAB_RAW_BASE}/ci-agent.yml\n"
            + (f"    inputs:\n{fix_inputs}" if fix_inputs else "")
            + f"  - remote: {GITLAB_RAW_BASE}/ci-agent-distill.yml\n"
            f"    inputs:\n{distill_inputs}")


def render_gitlab_ci(stack: Stack) -> str:
    """A starter `.gitlab-ci.yml`: one job building and testing, then ci-agent's includes."""
    artifacts = ["build.log", "test.log", *stack.results]
    paths = ", ".join(_yaml_list_item(a) for a in artifacts)
    return (f"# CI for this {stack.label} repository, written by `ci-agent init`. The includes at the end\n"
            "# add ci-agent: a job that proposes a fix when the pipeline fails, and a job that turns the\n"
            "# logs and test results into the merge request's test report and code quality widgets.\n"
            "# Add the CI/CD variables ANTHROPIC_API_KEY and CI_AGENT_GITLAB_TOKEN (masked; not protected,\n"
            "# or protect the branches ci-agent/fix/*), then run `ci-agent doctor --gitlab`.\n"
            "stages: [build]\n"
            "\n"
            "build:\n"
            "  stage: build\n"
            f"  image: {GITLAB_IMAGES[stack.name]}\n"
            "  script:\n"
            "    - set -o pipefail  # `| tee` keeps the command's exit status\n"
            f"    - {stack.ci_build} 2>&1 | tee build.log\n"
            f"    - {stack.ci_test} 2>&1 | tee test.log\n"
            "  artifacts:\n"
            "    when: always  # the logs and results of a failed build are what ci-agent reads\n"
            f"    paths: [{paths}]\n"
            "\n"
            + render_gitlab_includes(stack))


def detect_forge(root: Path) -> str:
    """gitlab when the repository has a `.gitlab-ci.yml`, else github (`.github/` or nothing)."""
    if (root / GITLAB_CI_FILE).is_file():
        return "gitlab"
    return "github"


# --------------------------------------------------------------------------- command


HELP = "write the GitHub workflows and a starter .ci-agent.yml for this repository"
DESCRIPTION = ("Detect the repository's stack (.sln/.csproj/.fsproj, package.json, pyproject.toml/"
    "setup.py, Cargo.toml, go.mod, pom.xml/build.gradle) and write .github/workflows/"
    f"{INLINE_FILE}, .github/workflows/{ON_FAILURE_FILE}, .github/workflows/{COMMAND_FILE} "
    f"and {CONFIG_FILE}.")


def add_arguments(init: argparse.ArgumentParser) -> None:
    init.add_argument("--repo", metavar="DIR", default=".", help="the repository root (default: .)")
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")
    init.add_argument("--stack", choices=STACK_NAMES, help="use this stack instead of detecting it")
    init.add_argument("--forge", choices=FORGES, help="github (workflows) or gitlab (.gitlab-ci.yml "
                      "include); default: gitlab when .gitlab-ci.yml exists, else github")


def run_init(args: argparse.Namespace) -> int:
    root = Path(args.repo)
    if not root.is_dir():
        raise UsageError(f"--repo {args.repo}: no such directory")
    detected = detect_stacks(root)
    if args.stack:
        stack = next(s for s in STACKS if s.name == args.stack)
    elif detected:
        stack = detected[0]
    else:
        markers = ", ".join(m for s in STACKS for m in s.markers)
        raise UsageError(f"no build file found in {root} (looked for {markers}); "
                         f"name one with --stack {{{','.join(STACK_NAMES)}}}")
    forge = args.forge or detect_forge(root)
    watched = ci_workflows(read_workflows(root)) if forge == "github" else []
    if forge == "gitlab":
        files = {Path(CONFIG_FILE): render_config(stack)}
        if not (root / GITLAB_CI_FILE).exists():  # an existing one is never rewritten
            files = {GITLAB_CI_FILE: render_gitlab_ci(stack), **files}
    else:
        files = {
            WORKFLOWS_DIR / INLINE_FILE: render_inline(stack),
            WORKFLOWS_DIR / ON_FAILURE_FILE: render_on_failure(stack, watched),
            WORKFLOWS_DIR / COMMAND_FILE: render_command(stack, watched),
            Path(CONFIG_FILE): render_config(stack),
        }
    existing = [str(p) for p in files if (root / p).exists()]
    if existing and not args.force:
        raise UsageError(f"{', '.join(existing)} already exist(s); nothing written "
                         "(use --force to overwrite)")
    others = [s.label for s in detected if s != stack]
    also = f" (also found: {', '.join(others)})" if others else ""
    print(f"ci-agent init: {stack.label} repository{also}")
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        verb = "overwrote" if target.exists() else "wrote"
        target.write_text(text, encoding="utf-8")
        print(f"  {verb} {relative}")
    print(_gitlab_next_steps(root, stack, wrote_ci=GITLAB_CI_FILE in files) if forge == "gitlab"
          else _next_steps(watched), end="")
    sys.stdout.flush()
    return 0


def _next_steps(watched: Sequence[WorkflowFile]) -> str:
    if watched:
        watching = (f"  {ON_FAILURE_FILE} fixes failed runs of: {', '.join(w.name for w in watched)}; "
                    f"it dispatches {watched[0].path.name} on the fix branch (give it a workflow_dispatch "
                    "trigger).\n")
    else:
        watching = (f"  no CI workflow found: put your CI's name under `workflows:` in {ON_FAILURE_FILE}\n"
                    f"  (it watches \"CI\"), or delete that file: {INLINE_FILE} is a CI with the fix step;\n")
    return ("Next:\n"
            "  add the repository secret ANTHROPIC_API_KEY (and optionally CI_AGENT_TOKEN, a GitHub App\n"
            "  token or fine-grained PAT, so the fix branch's push starts CI by itself);\n"
            f"{watching}"
            f"  keep {INLINE_FILE} only if you want a second CI with the fix step built in;\n"
            f"  {COMMAND_FILE} answers `/ci-agent <command>` comments on pull requests (write access\n"
            "  needed; `/ci-agent help` lists the commands);\n"
            f"  commit {CONFIG_FILE} to the default branch: CI reads it from there (a branch's own\n"
            "  change takes effect after merge), and its commands are for `ci-agent fix --local`;\n"
            "  then run `ci-agent doctor`.\n")


def _gitlab_next_steps(root: Path, stack: Stack, *, wrote_ci: bool) -> str:
    steps = ("  add the CI/CD variables (Settings > CI/CD > Variables) ANTHROPIC_API_KEY and\n"
             "  CI_AGENT_GITLAB_TOKEN (a project access token: scopes api and write_repository, role\n"
             "  Developer), both masked. Protected variables do not reach unprotected branches: leave\n"
             "  them unprotected, or protect the wildcard ci-agent/fix/* (Settings > Repository >\n"
             "  Protected branches); then run `ci-agent doctor --gitlab` (inside a job it also checks\n"
             "  the variables). Commit .ci-agent.yml to the default branch: CI reads it from there\n"
             "  (a branch's own change takes effect after merge), and its commands are for\n"
             "  `ci-agent fix --local`.\n")
    if wrote_ci:
        return "Next:\n" + steps
    existing = read_gitlab_ci(root)
    if existing.includes_fix():
        return f"{GITLAB_CI_FILE} already includes ci-agent; left as it is.\nNext:\n" + steps
    block = "".join("  " + line + "\n" for line in render_gitlab_includes(stack).splitlines())
    return (f"{GITLAB_CI_FILE} exists and was left as it is. Add to it (into its `include:` list if it has\n"
            "one; the jobs run in the last stage, .post):\n\n"
            f"{block}\n"
            "Next:\n" + steps)
