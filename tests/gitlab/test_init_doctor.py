"""`ci-agent init --forge gitlab` and `ci-agent doctor --gitlab` on real git repositories in temp
dirs. What init writes is checked the way GitLab would take it: the starter `.gitlab-ci.yml`
plus the include files it names, rendered with the inputs it passes, validate against GitLab's
CI schema as one configuration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_agent import __version__
from ci_agent.cli import doctor, init, stacks
from ci_agent.cli.main import main
from ci_agent.cli.workflows import GITLAB_DISTILL_INPUTS, GITLAB_FIX_INPUTS, read_gitlab_ci
from ci_agent.config.load import parse_settings
from tests.conftest import REPO_ROOT
from tests.gitlab import gitlab_ci

PIPELINES = REPO_ROOT / "pipelines" / "gitlab"
GITLAB_CI = ".gitlab-ci.yml"
# A project's own CI, as users write it (no ci-agent in it).
OWN_CI = "stages: [build]\n\nbuild:\n  stage: build\n  script: [dotnet build]\n"


def _git(repo: Path, *argv: str) -> None:
    subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A .NET repository on a self-managed GitLab."""
    root = tmp_path / "shop"
    (root / "src" / "Shop").mkdir(parents=True)
    (root / "Shop.sln").write_text("\n")
    (root / "src" / "Shop" / "Shop.csproj").write_text("<Project Sdk=\"Microsoft.NET.Sdk\" />\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "remote", "add", "origin", "https://gitlab.example.com/acme/shop.git")
    return root


def _statuses(checks: list[doctor.Check]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for check in checks:
        found.setdefault(check.status, []).append(f"{check.topic}: {check.message}")
    return found


def _resolved(ci_text: str) -> dict[str, Any]:
    """The configuration GitLab builds: the file's own jobs plus each included file of ours,
    found by its URL (the release URL of this version) and rendered with the inputs given."""
    config = yaml.safe_load(ci_text)
    merged = {k: v for k, v in config.items() if k != "include"}
    for entry in config["include"]:
        base, name = entry["remote"].rsplit("/", 1)
        assert base == init.GITLAB_RAW_BASE
        assert f"/v{__version__}/" in base
        merged.update(gitlab_ci.render((PIPELINES / name).read_text(), entry.get("inputs", {})))
    return merged


# --------------------------------------------------------------------------- init


def test_init_writes_a_starter_gitlab_ci_that_gitlab_accepts(repo: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--repo", str(repo), "--forge", "gitlab"]) == 0
    out = capsys.readouterr().out
    assert "wrote .gitlab-ci.yml" in out and "wrote .ci-agent.yml" in out
    assert "ANTHROPIC_API_KEY" in out and "CI_AGENT_GITLAB_TOKEN" in out and "ci-agent/fix/*" in out
    assert not (repo / ".github").exists()
    config = _resolved((repo / GITLAB_CI).read_text())
    assert set(config) == {"stages", "build", "ci-agent-fix", "ci-agent-success", "ci-agent-distill",
                           "ci-agent-command", "ci-agent-poll", ".ci-agent-variables"}
    build = config["build"]
    assert "dotnet build --nologo 2>&1 | tee build.log" in build["script"]
    assert build["artifacts"] == {"when": "always", "paths": ["build.log", "test.log", "**/*.trx"]}
    assert config["ci-agent-distill"]["variables"]["CI_AGENT_BUILD_LOGS"] == "build.log"
    merged = tmp_path / "merged.yml"
    merged.write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.gitlab-ci",
                             str(repo / GITLAB_CI), str(merged)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert parse_settings((repo / ".ci-agent.yml").read_text()).results.globs == ("**/*.trx",)


@pytest.mark.parametrize("stack", stacks.STACKS, ids=lambda s: s.name)
def test_every_stack_gets_a_job_and_inputs_the_include_files_accept(stack: stacks.Stack) -> None:
    config = _resolved(init.render_gitlab_ci(stack))
    build = config["build"]
    assert build["image"] == init.GITLAB_IMAGES[stack.name]
    assert build["script"][1:] == [f"{stack.ci_build} 2>&1 | tee build.log",
                                   f"{stack.ci_test} 2>&1 | tee test.log"]
    assert build["artifacts"]["paths"] == ["build.log", "test.log", *stack.results]
    fix = config["ci-agent-fix"]["variables"]["CI_AGENT_INPUT_TEST_RESULTS"]
    if stack.results:  # the fix job searches the downloaded artifacts, one folder per job
        assert all(g.startswith("**/") for g in fix.split(", "))
        assert config["ci-agent-distill"]["variables"]["CI_AGENT_TEST_RESULTS"] == ", ".join(stack.results)


def test_an_existing_gitlab_ci_is_never_rewritten(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / GITLAB_CI).write_text(OWN_CI)
    assert main(["init", "--repo", str(repo), "--force"]) == 0  # detected: gitlab
    out = capsys.readouterr().out
    assert (repo / GITLAB_CI).read_text() == OWN_CI
    assert "wrote .gitlab-ci.yml" not in out and "left as it is" in out
    assert not (repo / ".github").exists()
    # The printed lines, added to the file, make a configuration GitLab accepts.
    block = out.split("):\n\n", 1)[1].split("\n\n", 1)[0]
    (repo / GITLAB_CI).write_text(OWN_CI + "\n" + "\n".join(line[2:] for line in block.splitlines()) + "\n")
    assert set(_resolved((repo / GITLAB_CI).read_text())) >= {"build", "ci-agent-fix", "ci-agent-distill"}
    assert read_gitlab_ci(repo).includes_fix()
    assert main(["init", "--repo", str(repo), "--force"]) == 0
    assert "already includes ci-agent" in capsys.readouterr().out


def test_init_gitlab_refuses_to_overwrite_the_config(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".ci-agent.yml").write_text("budget: {max_attempts: 2}\n")
    assert main(["init", "--repo", str(repo), "--forge", "gitlab"]) == 2
    assert ".ci-agent.yml already exist" in capsys.readouterr().err
    assert not (repo / GITLAB_CI).exists(), "a refused run writes nothing at all"


def test_forge_detection(tmp_path: Path) -> None:
    assert init.detect_forge(tmp_path) == "github"
    (tmp_path / ".github").mkdir()
    assert init.detect_forge(tmp_path) == "github"
    (tmp_path / GITLAB_CI).write_text(OWN_CI)
    assert init.detect_forge(tmp_path) == "gitlab"


def test_the_input_lists_in_the_code_are_the_files_headers() -> None:
    for name, inputs in (("ci-agent.yml", GITLAB_FIX_INPUTS),
                         ("ci-agent-distill.yml", GITLAB_DISTILL_INPUTS)):
        header, _ = gitlab_ci.split((PIPELINES / name).read_text())
        assert tuple(header["spec"]["inputs"]) == inputs


# --------------------------------------------------------------------------- doctor: the files


def test_doctor_on_a_fresh_setup_finds_no_problem(repo: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITLAB_CI", raising=False)  # this test suite may itself run in a GitLab job
    assert main(["init", "--repo", str(repo), "--forge", "gitlab"]) == 0
    capsys.readouterr()
    assert main(["doctor", "--repo", str(repo), "--gitlab"]) == 0
    out = capsys.readouterr().out
    assert "0 problem(s), 0 warning(s)" in out
    assert "origin is gitlab.example.com/acme/shop" in out
    assert ".gitlab-ci.yml includes ci-agent.yml" in out and "includes ci-agent-distill.yml" in out
    assert "not inside a GitLab job" in out


def test_doctor_checks_gitlab_by_itself_where_it_is_gitlab(repo: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert not doctor.is_gitlab_setup(repo)
    (repo / GITLAB_CI).write_text(OWN_CI)
    assert doctor.is_gitlab_setup(repo)
    assert main(["doctor", "--repo", str(repo)]) == 1
    assert "does not include ci-agent" in capsys.readouterr().out
    (repo / ".github" / "workflows").mkdir(parents=True)
    assert not doctor.is_gitlab_setup(repo)


def test_doctor_without_gitlab_ci_or_without_ci_agent_in_it(repo: Path) -> None:
    fails = _statuses(doctor.diagnose_gitlab(repo, {}))[doctor.FAIL]
    assert fails == ["gitlab-ci: no .gitlab-ci.yml: `ci-agent init --forge gitlab` writes one"]
    (repo / GITLAB_CI).write_text(OWN_CI)
    fails = _statuses(doctor.diagnose_gitlab(repo, {}))[doctor.FAIL]
    assert len(fails) == 1 and "does not include ci-agent" in fails[0]
    (repo / GITLAB_CI).write_text("build: [unclosed\n")
    fails = _statuses(doctor.diagnose_gitlab(repo, {}))[doctor.FAIL]
    assert len(fails) == 1 and "not valid YAML" in fails[0]


def test_doctor_follows_a_local_include_and_reads_a_component(repo: Path) -> None:
    (repo / ".gitlab").mkdir()
    (repo / ".gitlab" / "ci-agent.yml").write_text(
        "include:\n  - component: gitlab.example.com/tools/ci-agent/ci-agent@0.0.9\n"
        "    inputs: {mode: push, max_attempt: 2}\n")
    (repo / GITLAB_CI).write_text(OWN_CI + "include:\n  - local: .gitlab/ci-agent.yml\n")
    found = _statuses(doctor.diagnose_gitlab(repo, {}))
    assert any("includes ci-agent.yml (gitlab.example.com/tools/ci-agent/ci-agent@0.0.9)" in m
               for m in found[doctor.OK])
    assert any(f"ci-agent 0.0.9; this ci-agent is {__version__}" in m for m in found[doctor.WARN])
    assert any("ci-agent.yml has no input max_attempt" in m for m in found[doctor.FAIL])


def test_doctor_counts_a_hand_written_fix_job(repo: Path) -> None:
    (repo / GITLAB_CI).write_text(OWN_CI + "fix:\n  stage: .post\n  when: on_failure\n"
                                  "  script: [ci-agent fix --gitlab]\n")
    found = _statuses(doctor.diagnose_gitlab(repo, {}))
    assert doctor.FAIL not in found
    assert "gitlab-ci: job fix runs ci-agent fix --gitlab" in found[doctor.OK]


# --------------------------------------------------------------------------- doctor: inside a job


def _job(ref: str, *, protected: bool, **variables: str) -> dict[str, str]:
    return {"GITLAB_CI": "true", "CI_COMMIT_REF_NAME": ref, "CI_COMMIT_REF_PROTECTED": str(protected).lower(),
            **variables}


def test_the_protected_variable_pitfall_on_a_fix_branch() -> None:
    checks = doctor.check_gitlab_job(_job("ci-agent/fix/main", protected=False))
    found = _statuses(checks)
    (fail,) = found[doctor.FAIL]
    assert "ANTHROPIC_API_KEY is not set" in fail and "ci-agent/fix/main is an unprotected ref" in fail
    assert "Protect variable" in fail and "ci-agent/fix/*" in fail
    (warn,) = found[doctor.WARN]
    assert "CI_JOB_TOKEN" in warn and "cannot create merge requests" in warn and "starts no" in warn


def test_a_complete_job_environment() -> None:
    env = _job("main", protected=True, ANTHROPIC_API_KEY="sk-ant-secret",
               CI_AGENT_GITLAB_TOKEN="glpat-secret")
    found = _statuses(doctor.check_gitlab_job(env))
    assert doctor.FAIL not in found and doctor.WARN not in found
    assert len(found[doctor.OK]) == 2
    (info,) = found[doctor.INFO]
    assert "main is a protected ref" in info and "ci-agent/fix/*" in info
    assert not any("secret" in m for ms in found.values() for m in ms)


def test_a_missing_key_on_a_protected_ref_is_not_blamed_on_protection() -> None:
    (fail,) = _statuses(doctor.check_gitlab_job(_job("main", protected=True)))[doctor.FAIL]
    assert "Settings > CI/CD > Variables" in fail and "Protect variable" not in fail
