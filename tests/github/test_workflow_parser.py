"""GitHub's own parser, `@actions/workflow-parser` from npm (the library behind the Actions language
service), over every workflow template, what `ci-agent init` writes, and both action.yml files,
besides check-jsonschema and zizmor (test_action_files.py, test_command_files.py). Since 0.3.61
the package parses action.yml metadata too (`parseAction`), so both kinds go through it.

It is pinned in tests/github/node/package.json + package-lock.json and installed by
`tests/install-tools`, part of the README's test command (`npm ci` in that folder).
Missing outside CI: the tests skip, saying how to install it. Missing in CI (`CI=true`):
they fail, since a skipped parser would prove nothing while looking green."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_agent.cli import init, stacks
from ci_agent.cli.workflows import WorkflowFile
from tests.conftest import REPO_ROOT

NODE_DIR = REPO_ROOT / "tests" / "github" / "node"
SCRIPT = NODE_DIR / "parse.mjs"
PARSER = NODE_DIR / "node_modules" / "@actions" / "workflow-parser" / "package.json"
WORKFLOWS = sorted((REPO_ROOT / "pipelines" / "github").glob("*.yml"))
PACKAGED = sorted(p for p in (REPO_ROOT / "ci_agent" / "templates").glob("*.yml"))
ACTIONS = sorted((REPO_ROOT / "actions").glob("*/action.yml"))


def _node() -> str:
    node = shutil.which("node")
    install = f"npm ci --prefix {NODE_DIR.relative_to(REPO_ROOT)}"
    problem = ("node is not installed" if node is None else
               f"@actions/workflow-parser is not installed (run `{install}`)" if not PARSER.is_file() else "")
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(problem + "; in CI this must not be skipped")
        pytest.skip(problem)
    assert node is not None
    return node


def _parse(paths: list[Path]) -> list[dict[str, Any]]:
    done = subprocess.run([_node(), str(SCRIPT), *map(str, paths)], cwd=NODE_DIR, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert isinstance(found, list) and [r["file"] for r in found] == list(map(str, paths))
    return found


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """What `ci-agent init` writes for every stack, watching CI workflows whose names need quoting."""
    out = tmp_path_factory.mktemp("rendered-parser")
    watched = [WorkflowFile(Path(".github/workflows/build: all.yml"), "Build: all"),
               WorkflowFile(Path(".github/workflows/test.yml"), "Test")]
    paths = []
    for stack in stacks.STACKS:
        for name, text in (("inline", init.render_inline(stack)),
                           ("on-failure", init.render_on_failure(stack, watched)),
                           ("command", init.render_command(stack, watched))):
            path = out / f"{stack.name}-{name}.yml"
            path.write_text(text, encoding="utf-8")
            paths.append(path)
    return paths


def test_the_pinned_parser_is_the_one_installed() -> None:
    _node()
    wanted = json.loads((NODE_DIR / "package.json").read_text())["dependencies"]["@actions/workflow-parser"]
    assert json.loads(PARSER.read_text())["version"] == wanted


def test_every_workflow_template_parses_without_an_error(rendered: list[Path]) -> None:
    assert len(WORKFLOWS) >= 3 and len(PACKAGED) >= 3
    results = _parse([*WORKFLOWS, *PACKAGED, *rendered])
    assert {r["kind"] for r in results} == {"workflow"}
    assert [(r["file"], r["errors"]) for r in results if r["errors"]] == []


def test_every_action_yml_parses_without_an_error() -> None:
    assert {p.parent.name for p in ACTIONS} >= {"fix", "command"}
    results = _parse(ACTIONS)
    assert {r["kind"] for r in results} == {"action"}
    assert [(r["file"], r["errors"]) for r in results if r["errors"]] == []


def test_the_parser_really_finds_errors(tmp_path: Path) -> None:
    """The control: a step with both `uses` and `run`, an action with a misspelt key and a docker
    `runs` without an image are reported, so an empty error list above means something."""
    workflow = tmp_path / "broken.yml"
    workflow.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                        "      - uses: actions/checkout@v4\n        run: echo hi\n")
    action = tmp_path / "broken" / "action.yml"
    action.parent.mkdir()
    action.write_text("name: x\ndescription: y\noutputz: {}\nruns:\n  using: docker\n")

    found = {r["kind"]: r["errors"] for r in _parse([workflow, action])}

    assert any("Unexpected value 'run'" in e["message"] and e["line"] == 7 for e in found["workflow"])
    assert any("Unexpected value 'outputz'" in e["message"] for e in found["action"])
    assert any("image" in e["message"] for e in found["action"]), found["action"]
