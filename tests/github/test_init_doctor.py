"""`ci-agent init` and `ci-agent doctor` on real git repositories in temp dirs; the token check
against the loopback GitHub fake (real HTTP, GitHub's answers to `GET /user`)."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_agent import __version__
from ci_agent.cli import doctor, init, stacks
from ci_agent.cli.main import main
from ci_agent.config.load import parse_settings
from tests.conftest import REPO_ROOT
from tests.fakes.github_fake import GitHubFake

PIPELINES = REPO_ROOT / "pipelines" / "github"
WORKFLOWS = Path(".github") / "workflows"

# A repository's own CI, as users write it (no ci-agent in it).
OWN_CI = """name: Build and test
on:
  push:
    branches: [main]
  pull_request:
{dispatch}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: dotnet test
"""


def _git(repo: Path, *argv: str) -> None:
    subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A .NET repository like most users': a solution at the root, projects under src/ and tests/,
    origin on GitHub."""
    root = tmp_path / "app"
    (root / "src" / "App").mkdir(parents=True)
    (root / "tests" / "App.Tests").mkdir(parents=True)
    (root / "App.sln").write_text("\n")
    (root / "src" / "App" / "App.csproj").write_text("<Project Sdk=\"Microsoft.NET.Sdk\" />\n")
    (root / "tests" / "App.Tests" / "App.Tests.csproj").write_text("<Project Sdk=\"Microsoft.NET.Sdk\" />\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "remote", "add", "origin", "https://github.com/octo/app.git")
    return root


def _own_ci(repo: Path, *, dispatch: bool) -> None:
    (repo / WORKFLOWS).mkdir(parents=True, exist_ok=True)
    text = OWN_CI.format(dispatch="  workflow_dispatch:\n" if dispatch else "")
    (repo / WORKFLOWS / "build.yml").write_text(text)


# --------------------------------------------------------------------------- init


def test_init_writes_the_templates_and_a_config_for_dotnet(repo: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    for name in (init.INLINE_FILE, init.ON_FAILURE_FILE, init.COMMAND_FILE):
        assert (repo / WORKFLOWS / name).read_text() == (PIPELINES / name).read_text()
        assert f"wrote {WORKFLOWS / name}" in out
    assert "wrote .ci-agent.yml" in out
    assert ".NET repository" in out
    settings = parse_settings((repo / ".ci-agent.yml").read_text())
    assert settings.commands.build == ("dotnet", "build", "--nologo")
    assert settings.commands.test == ("dotnet", "test", "--nologo", "--logger", "trx")
    assert settings.commands.verify == ("dotnet", "test", "--nologo")
    assert settings.results.globs == ("**/*.trx",)
    # in CI the starter config's verify never runs: it says so, and where CI reads it from
    assert "verify is for `ci-agent fix --local` only" in (repo / ".ci-agent.yml").read_text()
    assert "commit .ci-agent.yml to the default branch: CI reads it from there" in out


def test_init_never_overwrites_without_force(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".ci-agent.yml").write_text("budget: {max_attempts: 2}\n")
    assert main(["init", "--repo", str(repo)]) == 2
    assert ".ci-agent.yml already exist" in capsys.readouterr().err
    assert (repo / ".ci-agent.yml").read_text() == "budget: {max_attempts: 2}\n"
    assert not (repo / WORKFLOWS).exists(), "a refused run writes nothing at all"
    assert main(["init", "--repo", str(repo), "--force"]) == 0
    assert "overwrote .ci-agent.yml" in capsys.readouterr().out
    assert parse_settings((repo / ".ci-agent.yml").read_text()).budget.max_attempts == 3


def test_init_points_the_on_failure_workflow_at_the_existing_ci(repo: Path) -> None:
    _own_ci(repo, dispatch=True)
    assert main(["init", "--repo", str(repo)]) == 0
    data = yaml.safe_load((repo / WORKFLOWS / init.ON_FAILURE_FILE).read_text())
    assert data[True]["workflow_run"]["workflows"] == ["Build and test"]
    (step,) = [s for s in data["jobs"]["fix"]["steps"] if "ci-agent/actions/fix@" in s.get("uses", "")]
    assert step["with"]["ci_workflow"] == "build.yml"
    # The inline CI is its own workflow, not the watched one: one fixer per failure.
    inline = yaml.safe_load((repo / WORKFLOWS / init.INLINE_FILE).read_text())
    assert inline["name"] not in data[True]["workflow_run"]["workflows"]
    # Commands dispatch the same CI on the fix branch and read the same results.
    command = yaml.safe_load((repo / WORKFLOWS / init.COMMAND_FILE).read_text())
    (run,) = _command_steps(command)
    assert run["with"]["ci_workflow"] == "build.yml"
    assert run["with"]["test_results"] == step["with"]["test_results"]


def _command_steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    steps = workflow["jobs"]["command"]["steps"]
    return [s for s in steps if "ci-agent/actions/command@" in s.get("uses", "")]


def test_init_writes_the_command_workflow_with_the_stack_results(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text("\n")
    assert main(["init", "--repo", str(tmp_path)]) == 0
    command = yaml.safe_load((tmp_path / WORKFLOWS / init.COMMAND_FILE).read_text())
    (run,) = _command_steps(command)
    assert run["with"]["test_results"] == "**/target/surefire-reports/TEST-*.xml"
    assert run["with"]["ci_workflow"] == "ci.yml"  # no CI found: the template's name, as on-failure


def test_init_refuses_when_only_the_command_workflow_exists(repo: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (repo / WORKFLOWS).mkdir(parents=True)
    (repo / WORKFLOWS / init.COMMAND_FILE).write_text("# mine\n")
    assert main(["init", "--repo", str(repo)]) == 2
    assert init.COMMAND_FILE in capsys.readouterr().err
    assert (repo / WORKFLOWS / init.COMMAND_FILE).read_text() == "# mine\n"
    assert not (repo / WORKFLOWS / init.INLINE_FILE).exists()


_MARKERS = {"dotnet": "Lib.fsproj", "node": "package.json", "python": "pyproject.toml", "rust": "Cargo.toml",
            "go": "go.mod", "maven": "pom.xml", "gradle": "build.gradle.kts"}


@pytest.mark.parametrize("stack", stacks.STACKS, ids=lambda s: s.name)
def test_init_detects_each_stack_and_writes_its_commands(tmp_path: Path, stack: stacks.Stack) -> None:
    (tmp_path / _MARKERS[stack.name]).write_text("\n")
    assert [s.name for s in stacks.detect_stacks(tmp_path)] == [stack.name]
    assert main(["init", "--repo", str(tmp_path)]) == 0
    settings = parse_settings((tmp_path / ".ci-agent.yml").read_text())
    assert " ".join(settings.commands.build) == stack.build
    assert " ".join(settings.commands.test) == stack.test
    assert settings.results.globs == stack.results
    workflow = yaml.safe_load((tmp_path / WORKFLOWS / init.INLINE_FILE).read_text())
    runs = [s.get("run") for s in workflow["jobs"]["build"]["steps"] if "run" in s]
    assert runs == [f"{stack.ci_build} 2>&1 | tee build.log", f"{stack.ci_test} 2>&1 | tee test.log"]


def test_detection_ignores_dependencies_and_prefers_the_shallowest(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "package.json").write_text("{}")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "pyproject.toml").write_text("\n")
    (tmp_path / "go.mod").write_text("module x\n")
    assert [s.name for s in stacks.detect_stacks(tmp_path)] == ["go", "python"]


def test_init_without_a_build_file_says_what_it_looked_for(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--repo", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no build file found" in err and "*.csproj" in err and "--stack" in err
    assert main(["init", "--repo", str(tmp_path), "--stack", "python"]) == 0
    assert "python -m pytest" in (tmp_path / ".ci-agent.yml").read_text()


# --------------------------------------------------------------------------- doctor


def _statuses(checks: list[doctor.Check]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for check in checks:
        found.setdefault(check.status, []).append(f"{check.topic}: {check.message}")
    return found


def test_doctor_on_a_complete_setup_finds_no_problem(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _own_ci(repo, dispatch=True)
    assert main(["init", "--repo", str(repo)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "0 problem(s)" in out
    assert "origin is GitHub repository octo/app" in out
    assert "build.yml accepts workflow_dispatch" in out
    assert "ANTHROPIC_API_KEY, CI_AGENT_TOKEN" in out


def test_doctor_says_when_the_ci_cannot_be_dispatched(repo: Path) -> None:
    _own_ci(repo, dispatch=False)
    assert main(["init", "--repo", str(repo)]) == 0
    fails = _statuses(doctor.diagnose(repo, {})).get(doctor.FAIL, [])
    assert len(fails) == 1 and "build.yml has no workflow_dispatch trigger" in fails[0]


def test_doctor_without_workflows_or_origin(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    fails = _statuses(doctor.diagnose(tmp_path, {}))[doctor.FAIL]
    assert any(f.startswith("remote: no remote `origin`") for f in fails)
    assert any(f.startswith("workflows: no workflow") for f in fails)


def test_doctor_outside_a_git_repository(tmp_path: Path) -> None:
    fails = _statuses(doctor.diagnose(tmp_path, {}))[doctor.FAIL]
    assert any("is not a git work tree" in f for f in fails)


def test_doctor_names_the_bad_config_key(repo: Path) -> None:
    (repo / ".ci-agent.yml").write_text("budget: {max_attempt: 2}\n")
    check = doctor.check_config(repo)
    assert check.status == doctor.FAIL and "max_attempt" in check.message and "max_attempts" in check.message


def test_doctor_flags_a_workflow_run_watching_a_missing_workflow(repo: Path) -> None:
    assert main(["init", "--repo", str(repo)]) == 0  # no CI of its own: the template watches "CI"
    fails = _statuses(doctor.diagnose(repo, {}))[doctor.FAIL]
    assert any("watches workflow 'CI', but no workflow has that name" in f for f in fails)


def test_doctor_warns_about_an_older_action_version(repo: Path) -> None:
    _own_ci(repo, dispatch=True)
    assert main(["init", "--repo", str(repo)]) == 0
    path = repo / WORKFLOWS / init.INLINE_FILE
    path.write_text(path.read_text().replace(f"actions/fix@v{__version__}", "actions/fix@v0.0.9"))
    warns = _statuses(doctor.diagnose(repo, {}))[doctor.WARN]
    assert any("uses ci-agent v0.0.9" in w for w in warns)


@pytest.mark.parametrize(("check_remote", "url", "status"), [
    (doctor.check_remote, "https://github.com/octo/app.git", doctor.OK),
    (doctor.check_remote, "git@github.com:octo/app.git", doctor.OK),
    (doctor.check_remote, "https://x-access-token:ghs_secret@github.com/octo/app", doctor.OK),
    (doctor.check_remote, "https://gitlab.com/octo/app.git", doctor.WARN),
    (doctor.check_remote, "/srv/git/app.git", doctor.WARN),
    (doctor.check_gitlab_remote, "https://gitlab.com/acme/shop.git", doctor.OK),
    (doctor.check_gitlab_remote, "git@gitlab.example.com:acme/platform/shop.git", doctor.OK),
    (doctor.check_gitlab_remote, "https://oauth2:glpat-secret@gitlab.example.com/acme/shop.git", doctor.OK),
    (doctor.check_gitlab_remote, "https://github.com/acme/shop.git", doctor.WARN),
])
def test_remote_check(check_remote: Callable[[str], doctor.Check], url: str, status: str) -> None:
    """Each platform's check of the `origin` remote (GitLab's too): its host, never its token."""
    check = check_remote(url)
    assert check.status == status
    assert "ghs_secret" not in check.message and "glpat-secret" not in check.message


# --------------------------------------------------------------------------- the token


def test_no_token_no_token_check() -> None:
    assert doctor.check_token({}) is None


@pytest.mark.parametrize(("token", "kind"), [
    ("ghp_abc", "user"), ("github_pat_11AB", "user"), ("gho_x", "user"), ("ghu_x", "user"),
    ("ghs_x", "installation"), ("0123456789abcdef0123456789abcdef01234567", "unknown")])
def test_token_kind_from_its_documented_prefix(token: str, kind: str) -> None:
    assert doctor.token_kind(token) == kind


def test_offline_the_actions_token_is_named_and_its_consequence_said() -> None:
    check = doctor.check_token({"GITHUB_TOKEN": "ghs_abc", "GITHUB_ACTIONS": "true"})
    assert check is not None and check.status == doctor.INFO
    assert "Actions token" in check.message and "start no workflow run" in check.message


def test_the_api_confirms_the_actions_token() -> None:
    with GitHubFake() as fake:
        check = doctor.check_token({"GITHUB_TOKEN": "ghs_fake_actions", "GITHUB_ACTIONS": "true",
                                    "GITHUB_API_URL": fake.base_url})
        assert [r.path for r in fake.requests] == ["/user"]
    assert check is not None and check.status == doctor.OK
    assert "start no workflow run" in check.message and "confirmed" in check.message


def test_the_api_names_the_user_behind_a_pat() -> None:
    with GitHubFake() as fake:
        check = doctor.check_token({"GH_TOKEN": "ghp_fake_user", "GITHUB_API_URL": fake.base_url})
    assert check is not None and check.status == doctor.OK
    assert "acts as user octocat" in check.message and "start CI" in check.message


def test_a_rejected_token_is_a_problem() -> None:
    with GitHubFake() as fake:
        check = doctor.check_token({"GH_TOKEN": "ghp_revoked", "GITHUB_API_URL": fake.base_url})
    assert check is not None and check.status == doctor.FAIL and "401" in check.message


def test_an_unreachable_api_is_a_warning_not_a_crash() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    check = doctor.check_token({"GH_TOKEN": "ghp_x", "GITHUB_API_URL": f"http://127.0.0.1:{port}"})
    assert check is not None and check.status == doctor.WARN and "did not answer" in check.message
