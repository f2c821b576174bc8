"""The GitLab include files: valid against GitLab's own CI schema (header and configuration, as
written and as rendered with default and overridden inputs), the component copies identical,
consistent with the code (image = package version, every CI_AGENT_INPUT_* one the code reads),
rules that start a fix only where one belongs, and a distill job whose script really produces
the JUnit and code quality reports GitLab reads."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_agent import __version__
from ci_agent.platforms.gitlab import env as cienv_gitlab
from ci_agent.platforms.gitlab.env import GITLAB_INPUT_NAMES
from tests.conftest import REPO_ROOT
from tests.gitlab import gitlab_ci
from tests.gitlab.gitlab_ci import CiConfigError

PIPELINES = REPO_ROOT / "pipelines" / "gitlab"
FIX_FILE = PIPELINES / "ci-agent.yml"
DISTILL_FILE = PIPELINES / "ci-agent-distill.yml"
FILES = (FIX_FILE, DISTILL_FILE)
EXAMPLES = REPO_ROOT / "examples" / "dotnet"
# Inputs that differ from every default, to render the files the way a project might include them.
OVERRIDES: dict[Path, dict[str, Any]] = {
    FIX_FILE: {"stage": "fix", "job_prefix": "bot",
               "image": "registry.example.com/ci-agent:dev",
               "max_attempts": 5, "build_logs": "build.log, test.log", "test_results": "out/**/*.xml",
               "verify": "dotnet test --no-build", "mode": "propose", "draft": False, "model": "claude-x",
               "config": "ci/agent.yml", "dry_run": True},
    DISTILL_FILE: {"stage": "report", "job_name": "reports", "image": "registry.example.com/ci-agent:dev",
                   "build_logs": "build.log", "test_results": "**/TEST-*.xml", "when": "on_failure"},
}
SEVERITIES = {"info", "minor", "major", "critical", "blocker"}  # GitLab's code quality severities


def _check_jsonschema(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.gitlab-ci",
                           *map(str, paths)], capture_output=True, text=True, timeout=300, check=False)


def _dump(data: Any, path: Path) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _jobs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in config.items() if isinstance(v, dict) and "script" in v}


# --------------------------------------------------------------------------- schema


def test_a_file_with_a_header_is_two_documents_for_check_jsonschema() -> None:
    """check-jsonschema reads one YAML document per file and refuses the `---` of a `spec:`
    header, so the tests below validate the header and the configuration separately, as GitLab
    does (it reads the header, interpolates, then validates the configuration)."""
    result = _check_jsonschema(FIX_FILE)
    assert result.returncode != 0 and "expected a single document" in result.stdout + result.stderr


def test_headers_validate_against_gitlabs_schema(tmp_path: Path) -> None:
    headers = [_dump(gitlab_ci.split(p.read_text())[0], tmp_path / f"{p.stem}-header.yml") for p in FILES]
    result = _check_jsonschema(*headers)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("inputs", ["defaults", "overrides"])
def test_rendered_configurations_validate_against_gitlabs_schema(tmp_path: Path, inputs: str) -> None:
    rendered = []
    for path in FILES:
        given = OVERRIDES[path] if inputs == "overrides" else {}
        rendered.append(_dump(gitlab_ci.render(path.read_text(), given), tmp_path / path.name))
    result = _check_jsonschema(*rendered)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_job(tmp_path: Path) -> None:
    """The control: the schema is really applied (an unknown `when` fails)."""
    config = gitlab_ci.render(DISTILL_FILE.read_text())
    config["ci-agent-distill"]["when"] = "sometimes"
    assert _check_jsonschema(_dump(config, tmp_path / "broken.yml")).returncode != 0


# --------------------------------------------------------------------------- the renderer


def test_defaults_render_the_documented_jobs() -> None:
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text()))
    assert list(jobs) == ["ci-agent-fix", "ci-agent-success", "ci-agent-command", "ci-agent-poll"]
    fix = jobs["ci-agent-fix"]
    assert fix["stage"] == ".post"
    # .pre exists in every pipeline, and with `needs: []` nothing waits for the user's jobs.
    for name in ("ci-agent-command", "ci-agent-poll"):
        assert (jobs[name]["stage"], jobs[name]["needs"]) == (".pre", [])
    assert fix["image"] == {"name": f"ghcr.io/ci-agent/ci-agent:{__version__}", "entrypoint": [""]}
    assert fix["variables"]["CI_AGENT_INPUT_MAX_ATTEMPTS"] == 3  # a number input stays a number
    assert fix["variables"]["CI_AGENT_INPUT_DRAFT"] is True
    assert fix["variables"]["CI_AGENT_INPUT_TEST_RESULTS"] == "**/*.trx"
    assert list(_jobs(gitlab_ci.render(DISTILL_FILE.read_text()))) == ["ci-agent-distill"]


def test_overrides_reach_every_place_they_are_used() -> None:
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text(), OVERRIDES[FIX_FILE]))
    assert list(jobs) == ["bot-fix", "bot-success", "bot-command", "bot-poll"]
    assert jobs["bot-command"]["stage"] == jobs["bot-poll"]["stage"] == ".pre"  # the fix jobs' only
    assert jobs["bot-command"]["image"]["name"] == jobs["bot-poll"]["image"]["name"] == \
        "registry.example.com/ci-agent:dev"
    for name in ("bot-fix", "bot-success", "bot-command"):
        job = jobs[name]
        if name != "bot-command":
            assert job["stage"] == "fix"
        assert job["image"]["name"] == "registry.example.com/ci-agent:dev"
        variables = job["variables"]
        assert variables["CI_AGENT_INPUT_MODE"] == "propose"
        assert variables["CI_AGENT_INPUT_MAX_ATTEMPTS"] == 5
        assert variables["CI_AGENT_INPUT_DRAFT"] is False and variables["CI_AGENT_INPUT_DRY_RUN"] is True
        assert variables["CI_AGENT_INPUT_BUILD_LOGS"] == "build.log, test.log"
    distill = _jobs(gitlab_ci.render(DISTILL_FILE.read_text(), OVERRIDES[DISTILL_FILE]))["reports"]
    assert distill["stage"] == "report" and "when" not in distill, "`when` lives in the rules"
    assert gitlab_ci.job_when(distill, _branch("main")) == "on_failure"


@pytest.mark.parametrize(("given", "message"), [
    ({"job-prefix": "x"}, "unknown input arguments: job-prefix"),
    ({"mode": "merge"}, "not in the list of allowed options"),
    ({"max_attempts": "3"}, "not a number"),
    ({"draft": "yes"}, "not a boolean"),
])
def test_bad_inputs_are_refused_as_gitlab_refuses_them(given: dict[str, Any], message: str) -> None:
    with pytest.raises(CiConfigError, match=message):
        gitlab_ci.render(FIX_FILE.read_text(), given)


def test_a_reference_to_an_undeclared_input_is_an_error() -> None:
    text = FIX_FILE.read_text().replace("$[[ inputs.mode ]]", "$[[ inputs.modus ]]")
    with pytest.raises(CiConfigError, match="unknown interpolation key"):
        gitlab_ci.render(text)


def test_every_input_is_used_and_every_use_is_declared() -> None:
    for path in FILES:
        header, _ = gitlab_ci.split(path.read_text())
        body = path.read_text().split("\n---\n", 1)[1]
        used = set(gitlab_ci._INPUT_REF.findall(" ".join(gitlab_ci._BLOCK.findall(body))))
        assert used == set(header["spec"]["inputs"]), path.name
        for name, spec in header["spec"]["inputs"].items():
            assert len(str(spec.get("description", "")).split()) >= 3, f"{path.name}: {name}"


# --------------------------------------------------------------------------- consistency


def test_the_default_image_is_this_version() -> None:
    for path in FILES:
        header, _ = gitlab_ci.split(path.read_text())
        assert header["spec"]["inputs"]["image"]["default"] == f"ghcr.io/ci-agent/ci-agent:{__version__}"
        assert f"/v{__version__}/pipelines/gitlab/{path.name}" in path.read_text(), "the include example"


def test_the_fix_jobs_pass_every_input_the_code_reads() -> None:
    header, _ = gitlab_ci.split(FIX_FILE.read_text())
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text()))
    for name in ("ci-agent-fix", "ci-agent-success", "ci-agent-command"):
        job = jobs[name]
        names = {k.removeprefix("CI_AGENT_INPUT_").lower() for k in job["variables"]
                 if k.startswith("CI_AGENT_INPUT_")}
        assert names == set(GITLAB_INPUT_NAMES)
        assert names <= set(header["spec"]["inputs"])
        assert job["variables"]["GIT_DEPTH"] == 0
        assert job["artifacts"] == {"when": "always", "paths": ["ci-agent-summary.md"],
                                    "reports": {"dotenv": "ci-agent.env"}}
        if name == "ci-agent-command":
            assert job["script"] == ["ci-agent command --gitlab"]
            assert "CI_AGENT_TRIGGER" not in job["variables"]  # on_failure/on_success mean fix jobs
            continue
        assert job["script"] == ["ci-agent fix --gitlab"]
        assert job["resource_group"] == "ci-agent-$CI_COMMIT_REF_SLUG"
        assert job["dependencies"] == []
        assert job["artifacts"] == {"when": "always", "paths": ["ci-agent-summary.md"],
                                    "reports": {"dotenv": "ci-agent.env"}}


def test_defaults_mean_what_the_code_defaults_to() -> None:
    """The job passes every default as CI_AGENT_INPUT_*; read by the code they give its own
    defaults, and every overridden input changes what the code reads."""
    module = cienv_gitlab
    fix = _jobs(gitlab_ci.render(FIX_FILE.read_text()))["ci-agent-fix"]
    env = {k: gitlab_ci.variable_text(v) for k, v in fix["variables"].items()}
    assert module.gitlab_inputs(env) == module.gitlab_inputs({})
    bot = _jobs(gitlab_ci.render(FIX_FILE.read_text(), OVERRIDES[FIX_FILE]))["bot-fix"]
    changed = module.gitlab_inputs({k: gitlab_ci.variable_text(v) for k, v in bot["variables"].items()})
    defaults = module.gitlab_inputs({})
    differing = {f.name for f in dataclasses.fields(changed)
                 if getattr(changed, f.name) != getattr(defaults, f.name)}
    assert differing == set(GITLAB_INPUT_NAMES)


def test_the_resource_group_is_a_name_gitlab_accepts() -> None:
    """GitLab's validation of resource group keys (gitlab-org/gitlab!29694, app/models/ci/
    resource_group.rb): letters, digits, - _ / $ { } . and spaces, not starting or ending with /.
    `$CI_COMMIT_REF_SLUG` is already a slug, so any branch name fits."""
    for job in _jobs(gitlab_ci.render(FIX_FILE.read_text())).values():
        key = job["resource_group"]
        assert re.fullmatch(r"[A-Za-z0-9_\-/${}. ]+", key)
        assert not key.startswith("/") and not key.endswith("/")


def test_the_triggers_of_the_two_jobs() -> None:
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text()))
    fix, success = jobs["ci-agent-fix"], jobs["ci-agent-success"]
    assert fix["variables"]["CI_AGENT_TRIGGER"] == "on_failure"
    assert success["variables"]["CI_AGENT_TRIGGER"] == "on_success"
    assert {r["when"] for r in fix["rules"]} == {"never", "on_failure"}
    assert {r["when"] for r in success["rules"]} == {"never", "on_success"}


def test_secrets_are_never_inputs() -> None:
    for path in FILES:
        header, _ = gitlab_ci.split(path.read_text())
        assert not {n for n in header["spec"]["inputs"] if "key" in n or "token" in n}
    text = FIX_FILE.read_text()
    assert "ANTHROPIC_API_KEY" in text and "CI_AGENT_GITLAB_TOKEN" in text  # documented at the top


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_component_copy_is_the_pipelines_file(path: Path) -> None:
    """GitLab's CI/CD catalog reads components from templates/<name>.yml at the project root."""
    assert (REPO_ROOT / "templates" / path.name).read_text() == path.read_text()


# --------------------------------------------------------------------------- rules

BRANCH = {"CI_PIPELINE_SOURCE": "push", "CI_PROJECT_ID": "42", "CI_COMMIT_REF_SLUG": "x"}


def _branch(name: str) -> dict[str, str]:
    return {**BRANCH, "CI_COMMIT_BRANCH": name, "CI_COMMIT_REF_NAME": name}


def _mr(source: str, source_project: str = "42") -> dict[str, str]:
    return {**BRANCH, "CI_PIPELINE_SOURCE": "merge_request_event", "CI_COMMIT_REF_NAME": source,
            "CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": source,
            "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": source_project}


COMMAND = {**_branch("main"), "CI_PIPELINE_SOURCE": "api", "CI_AGENT_COMMAND_MR_IID": "7",
           "CI_AGENT_COMMAND_NOTE_ID": "1244"}
POLL = {**_branch("main"), "CI_PIPELINE_SOURCE": "schedule", "CI_AGENT_POLL": "true"}


@pytest.mark.parametrize(("env", "fix", "success"), [
    (_branch("main"), "on_failure", "never"),
    (_branch("feature/login"), "on_failure", "never"),
    ({**BRANCH, "CI_COMMIT_TAG": "v1.0", "CI_COMMIT_REF_NAME": "v1.0"}, "never", "never"),
    (_branch("ci-agent/fix/main"), "on_failure", "on_success"),  # a failed fix counts its attempt
    (_branch("ci-agent/propose"), "never", "never"),  # no fix of a fix
    (_mr("feature/login"), "on_failure", "never"),
    (_mr("ci-agent/fix/feature/login"), "on_failure", "on_success"),
    (_mr("ci-agent/other"), "never", "never"),
    (_mr("feature/login", source_project="99"), "never", "never"),  # a fork's MR pipeline
    (_mr("ci-agent/fix/main", source_project="99"), "never", "never"),
    ({**_branch("main"), "CI_PIPELINE_SOURCE": "api"}, "on_failure", "never"),  # the pipeline ci-agent starts
], ids=["main", "feature", "tag", "fix-branch", "other-ci-agent-branch", "mr", "mr-fix-branch",
        "mr-other-ci-agent-branch", "fork-mr", "fork-mr-named-like-a-fix", "api-pipeline"])
def test_rules(env: dict[str, str], fix: str, success: str) -> None:
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text()))
    assert gitlab_ci.job_when(jobs["ci-agent-fix"], env) == fix
    assert gitlab_ci.job_when(jobs["ci-agent-success"], env) == success
    assert gitlab_ci.job_when(jobs["ci-agent-command"], env) == "never"  # only in a command's pipeline
    assert gitlab_ci.job_when(jobs["ci-agent-poll"], env) == "never"


@pytest.mark.parametrize(("env", "command", "poll"), [
    (COMMAND, "on_success", "never"),
    ({**COMMAND, "CI_COMMIT_BRANCH": "ci-agent/fix/main"}, "on_success", "never"),
    ({**COMMAND, "CI_PIPELINE_SOURCE": "push"}, "never", "never"),  # a variable set by hand on a push
    ({**COMMAND, "CI_PIPELINE_SOURCE": "schedule"}, "never", "never"),
    (POLL, "never", "on_success"),
    ({**POLL, "CI_AGENT_POLL": "false"}, "never", "never"),
    ({**POLL, "CI_PIPELINE_SOURCE": "api"}, "never", "never"),
    ({**POLL, "CI_PIPELINE_SOURCE": "web"}, "never", "never"),
], ids=["command", "command-on-a-fix-branch", "push-with-the-variable", "schedule-with-the-variable", "poll",
        "schedule-without-poll", "api-with-poll", "manual-run-with-poll"])
def test_the_command_and_poll_jobs_run_only_in_their_pipelines(env: dict[str, str], command: str,
                                                              poll: str) -> None:
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text()))
    assert gitlab_ci.job_when(jobs["ci-agent-command"], env) == command
    assert gitlab_ci.job_when(jobs["ci-agent-poll"], env) == poll


@pytest.mark.parametrize("env", [COMMAND, {**COMMAND, "CI_PIPELINE_SOURCE": "push"}, POLL],
                         ids=["command", "push-with-the-variable", "poll"])
def test_the_fix_jobs_never_run_in_command_or_poll_pipelines(env: dict[str, str]) -> None:
    """Else a failed job of the user's in such a pipeline would start a fix cycle of its own."""
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text()))
    for branch in ("main", "ci-agent/fix/main"):
        here = {**env, "CI_COMMIT_BRANCH": branch, "CI_COMMIT_REF_NAME": branch}
        assert gitlab_ci.job_when(jobs["ci-agent-fix"], here) == "never"
        assert gitlab_ci.job_when(jobs["ci-agent-success"], here) == "never"


@pytest.mark.parametrize(("env", "when"), [
    (_branch("main"), "always"), (_mr("feature/login"), "always"),
    ({**BRANCH, "CI_COMMIT_TAG": "v1.0", "CI_COMMIT_REF_NAME": "v1.0"}, "always"),
    (_branch("ci-agent/fix/main"), "always"), (_mr("feature/login", source_project="99"), "always"),
    (COMMAND, "never"), ({**COMMAND, "CI_PIPELINE_SOURCE": "push"}, "never"), (POLL, "never"),
], ids=["main", "mr", "tag", "fix-branch", "fork-mr", "command", "push-with-the-variable", "poll"])
def test_the_distill_job_never_runs_in_command_or_poll_pipelines(env: dict[str, str], when: str) -> None:
    """Those pipelines build nothing; everywhere else the reports help (no secret is read)."""
    for given, expected in (({}, when), ({"when": "on_failure"}, "on_failure" if when != "never" else when)):
        job = _jobs(gitlab_ci.render(DISTILL_FILE.read_text(), given))["ci-agent-distill"]
        assert gitlab_ci.job_when(job, env) == expected


def test_one_command_per_merge_request_and_one_poll_at_a_time() -> None:
    jobs = _jobs(gitlab_ci.render(FIX_FILE.read_text()))
    assert jobs["ci-agent-command"]["resource_group"] == "ci-agent-command-$CI_AGENT_COMMAND_MR_IID"
    assert jobs["ci-agent-poll"]["resource_group"] == "ci-agent-poll"
    assert jobs["ci-agent-poll"]["script"] == ["ci-agent poll"]
    # The variables the relay and the poller set are the ones the command job's rule reads.
    from ci_agent.relay import MR_VARIABLE, NOTE_VARIABLE

    assert NOTE_VARIABLE in str(jobs["ci-agent-command"]["rules"])
    assert MR_VARIABLE in jobs["ci-agent-command"]["resource_group"]


@pytest.mark.parametrize(("expression", "env", "expected"), [
    ("$A", {"A": "x"}, True), ("$A", {"A": ""}, False), ("$A", {}, False),
    ("$A == \"x\"", {"A": "x"}, True), ("$A != $B", {"A": "1"}, True), ("$A != $B", {}, False),
    ("$A =~ /^ci-agent\\/fix\\//", {"A": "ci-agent/fix/x"}, True), ("$A =~ /^a/", {}, False),
    ("$A !~ /^a/", {}, True), ("$A || $B && $C", {"A": "1"}, True), ("($A || $B) && $C", {"A": "1"}, False),
])
def test_the_rules_evaluator(expression: str, env: dict[str, str], expected: bool) -> None:
    assert gitlab_ci.holds(expression, env) is expected


# --------------------------------------------------------------------------- the distill job runs


def _run_script(job: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The job's script as the runner runs it: one shell, stop at the first failing line, the
    job's variables in the environment, ci-agent on PATH."""
    env = {**os.environ, **{k: gitlab_ci.variable_text(v) for k, v in job["variables"].items()}}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    shell = shutil.which("sh")
    assert shell is not None
    return subprocess.run([shell, "-e", "-c", "\n".join(job["script"])], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def distilled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout after the build and test jobs' artifacts were unpacked into it: the build log
    at the root, the TRX deep under a test project (so only a recursive `**` finds it)."""
    work = tmp_path_factory.mktemp("checkout")
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    shutil.copy(EXAMPLES / "build.log", work / "build.log")
    results = work / "tests" / "App.Tests" / "TestResults"
    results.mkdir(parents=True)
    shutil.copy(EXAMPLES / "results.trx", results / "results.trx")
    job = _jobs(gitlab_ci.render(DISTILL_FILE.read_text(), {"build_logs": "build.log"}))["ci-agent-distill"]
    result = _run_script(job, work)
    assert result.returncode == 0, result.stderr
    assert job["artifacts"]["reports"] == {"junit": "ci-agent-junit.xml",
                                           "codequality": "gl-code-quality-report.json"}
    return work


def test_the_junit_report_has_the_trx_results(distilled: Path) -> None:
    root = ET.parse(distilled / "ci-agent-junit.xml").getroot()
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    # The TRX's own <Counters>: total 11, failed 5, executed 10 (one skipped).
    assert len(cases) == 11
    assert sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None) == 5
    assert sum(1 for c in cases if c.find("skipped") is not None) == 1
    assert all(c.get("name") and c.get("classname") for c in cases)


def test_the_code_quality_report_has_the_fields_gitlab_requires(distilled: Path) -> None:
    issues = json.loads((distilled / "gl-code-quality-report.json").read_text(encoding="utf-8"))
    assert isinstance(issues, list) and issues
    for issue in issues:
        begin = issue["location"]["lines"]["begin"]
        assert isinstance(issue["description"], str) and issue["description"]
        assert isinstance(issue["check_name"], str) and issue["check_name"]
        assert isinstance(issue["fingerprint"], str) and issue["fingerprint"]
        assert issue["severity"] in SEVERITIES
        assert isinstance(issue["location"]["path"], str) and not issue["location"]["path"].startswith("/")
        assert "\\" not in issue["location"]["path"] and ":" not in issue["location"]["path"]
        assert isinstance(begin, int) and begin >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues), "GitLab shows one issue per fingerprint"
    # The log prints each diagnostic twice (inline and in the summary): one issue each.
    lines = (EXAMPLES / "build.log").read_text(encoding="utf-8-sig").splitlines()
    unique = {line.split("): ", 1)[0] + line.split("): ", 1)[1].split(" [")[0] for line in lines
              if "): error CS" in line or "): warning CS" in line}
    assert len(issues) == len(unique)


def test_the_distill_job_fails_softly_when_nothing_matches(tmp_path: Path) -> None:
    job = _jobs(gitlab_ci.render(DISTILL_FILE.read_text()))["ci-agent-distill"]
    result = _run_script(job, tmp_path)
    assert result.returncode != 0 and "no input could be read" in result.stderr
    assert job["allow_failure"] is True, "a report job never turns the pipeline red"
