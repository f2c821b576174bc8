"""The platform registry behind `fix --ci` and `command --ci`: every name, `auto` detection, and
the old flags (`--github`, `--gitlab`, `--local`) giving exactly what `--ci` gives.

Each run goes through `main` with a job environment that ends early on purpose (a run on a tag
is skipped, a comment on an issue is ignored, a local dry run stops before the model), so the
whole output can be compared between the spellings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ci_agent import platforms
from ci_agent.cli.main import main
from ci_agent.errors import UsageError

CI_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITLAB_CI")


@pytest.fixture(autouse=True)
def outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite may itself run in GitHub Actions or GitLab CI: start from neither."""
    for name in CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- detection ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("env", "name"), [
    ({"GITHUB_ACTIONS": "true"}, "github"),
    ({"GITHUB_EVENT_NAME": "workflow_run"}, "github"),
    ({"GITLAB_CI": "true"}, "gitlab"),
    ({"GITLAB_CI": "false"}, "local"),
    ({}, "local"),
    ({"GITHUB_ACTIONS": "true", "GITLAB_CI": "true"}, "github"),  # the first in CI_PLATFORMS wins
])
def test_auto_names_the_ci_the_environment_says(env: dict[str, str], name: str) -> None:
    assert platforms.detect(env) == name
    chosen = platforms.platform_named("auto", env)
    assert (chosen.name if chosen else platforms.LOCAL) == name


def test_every_name_is_a_platform_and_an_unknown_one_is_a_usage_error() -> None:
    assert platforms.NAMES == ("github", "gitlab", "local")
    assert [platforms.platform_named(n, {}) for n in platforms.NAMES] == [platforms.GITHUB,
                                                                          platforms.GITLAB, None]
    with pytest.raises(UsageError, match="github, gitlab, local or auto, not 'jenkins'"):
        platforms.platform_named("jenkins", {})


def test_ci_and_an_alias_naming_different_platforms_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["fix", "--ci", "gitlab", "--github"], capsys)
    assert code == 2
    assert "--ci gitlab and --github name different platforms" in err


def test_no_platform_at_all_still_says_which_flags_exist(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["fix"], capsys)
    assert code == 2
    assert err == ("ci-agent: error: give --local (this repository), --github (inside GitHub Actions) "
                   "or --gitlab (inside GitLab CI)\n")


# -- fix: each platform, by every spelling ------------------------------------------------------

def github_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A push run on a tag: no branch to fix, so the step is skipped and writes its outputs."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/shop")
    monkeypatch.setenv("GITHUB_REF_NAME", "")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)
    output = tmp_path / "output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return output


@pytest.mark.parametrize("argv", [["--github"], ["--ci", "github"], ["--ci", "auto"],
                                  ["--ci", "github", "--github"]])
def test_github_by_any_spelling(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    output = github_job(tmp_path, monkeypatch)
    code, out, _ = run(["fix", *argv], capsys)
    assert code == 0
    assert out.endswith("ci-agent: skipped: no branch is named for this run (a tag or a detached "
                        "checkout?); there is nothing to open a fix against\n")
    assert "outcome<<" in output.read_text() and "\nskipped\n" in output.read_text()


def gitlab_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pipeline on a tag: skipped, with the dotenv report left in the project directory."""
    for name, value in {"GITLAB_CI": "true", "CI_SERVER_URL": "https://gitlab.example.com",
                        "CI_PROJECT_PATH": "acme/shop", "CI_PROJECT_ID": "7", "CI_COMMIT_TAG": "v1",
                        "CI_COMMIT_REF_NAME": "v1", "CI_PROJECT_DIR": str(tmp_path)}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CI_COMMIT_BRANCH", raising=False)
    return tmp_path / "ci-agent.env"


@pytest.mark.parametrize("argv", [["--gitlab"], ["--ci", "gitlab"], ["--ci", "auto"]])
def test_gitlab_by_any_spelling(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    dotenv = gitlab_job(tmp_path, monkeypatch)
    code, out, _ = run(["fix", *argv], capsys)
    assert code == 0
    assert out.startswith("ci-agent: skipped: no branch is named for this run")
    assert dotenv.read_text().startswith("CI_AGENT_OUTCOME=skipped\n")


def local_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@e.x"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "calc"], check=True)
    log = tmp_path / "build.log"
    log.write_text("FAILED test_calc.py::test_add - assert -1 == 5\n")
    return repo, log


@pytest.mark.parametrize("argv", [["--local"], ["--ci", "local"], ["--ci", "auto"]])
def test_local_by_any_spelling_is_the_same_dry_run(argv: list[str], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo, log = local_repo(tmp_path)
    code, out, err = run(["fix", *argv, "--repo", str(repo), "--build-log", str(log), "--dry-run"], capsys)
    assert code == 0
    request = json.loads(out)
    assert request["messages"][0]["role"] == "user"
    assert "nothing was sent" in err


# -- command ------------------------------------------------------------------------------------

def comment_on_an_issue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    github_job(tmp_path, monkeypatch)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "created", "issue": {"number": 3},
                                 "comment": {"id": 9, "body": "/ci-agent fix", "user": {"login": "ann"}}}))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))


@pytest.mark.parametrize("argv", [["--github"], ["--ci", "github"], ["--ci", "auto"]])
def test_command_on_github_by_any_spelling(argv: list[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    comment_on_an_issue(tmp_path, monkeypatch)
    code, out, _ = run(["command", *argv], capsys)
    assert code == 0
    assert out.endswith("ci-agent: skipped: the comment is on an issue, not a pull request\n")


@pytest.mark.parametrize("argv", [["--gitlab"], ["--ci", "gitlab"], ["--ci", "auto"]])
def test_command_on_gitlab_by_any_spelling(argv: list[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    gitlab_job(tmp_path, monkeypatch)
    monkeypatch.setenv("CI_AGENT_COMMAND_MR_IID", "x")
    code, _, err = run(["command", *argv], capsys)
    assert code == 2
    assert "CI_AGENT_COMMAND_MR_IID and CI_AGENT_COMMAND_NOTE_ID must be numbers" in err


def test_command_has_no_local_platform(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["command", "--ci", "local"], capsys)
    assert code == 2
    assert "the local platform has no comments to answer" in err


def test_command_still_needs_one_platform_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["command", "--github", "--ci", "gitlab"])
    assert exit_.value.code == 2
