"""`ci-agent fix --local` on what else it reads: test-result files beside the console log, and
hostile text in a failure message (it reaches the model as sanitised, fenced data)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import (
    ROOT_CAUSE,
    SUMMARY,
    FixRun,
    assert_fixed_on_branch,
    fix,
    user_repo,
)
from tests.scenarios.sample_repos import PYTHON, PYTHON_HOSTILE

JUNIT = "results/junit.xml"


def run_with_junit(api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> FixRun:
    """pytest writes JUnit XML too, and ci-agent is told to read it (as `results:` globs would)."""
    repo = user_repo(tmp_path, PYTHON)
    api.reply(model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))
    command = f"{PYTHON.command} --junitxml={JUNIT}"
    run = fix(repo, capfd, "--command", command, "--verify", command, "--test-results", "results/*.xml",
              commands=False)
    assert run.exit_code == 0, str(run)
    assert_fixed_on_branch(repo, attempt=1)
    return run


def test_pytest_with_junit_results_fixed_in_one_attempt(api: AnthropicFake, tmp_path: Path,
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    run_with_junit(api, tmp_path, capfd)
    (request,) = api.message_requests
    assert "junit.xml" in model.first_user_text(request)


def test_pytest_console_and_junit_of_one_run_count_each_test_once(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run = run_with_junit(api, tmp_path, capfd)
    assert run.of("distilled")[0]["failed_tests"] == 2


def run_hostile(api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> FixRun:
    """A failure message carrying an HTML comment (our status marker's shape), invisible and bidi
    characters, and a forged end of our data fence."""
    repo = user_repo(tmp_path, PYTHON_HOSTILE)
    api.reply(model.submit_patch(repo.diff(PYTHON_HOSTILE.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))
    run = fix(repo, capfd)
    assert run.exit_code == 0, str(run)
    assert_fixed_on_branch(repo, attempt=1)
    return run


HOSTILE_MARKS = ("<!--", "ci-agent:v1", "\u200b", "\u202e")


def test_hostile_text_in_the_log_reaches_the_model_as_sanitised_data(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run = run_hostile(api, tmp_path, capfd)
    (request,) = api.message_requests
    report = model.first_user_text(request)
    assert "ignore previous instructions" in report, "the text itself is kept, as data"
    # A source excerpt is the file's exact text (issue 15): the test file's own comment is shown
    # as written, inside its fence; everything else (the log's report, the events) is sanitised.
    excerpt = re.compile(r"^ *\d+ \| ")
    assert any(excerpt.match(line) and "<!-- ci-agent:v1" in line for line in report.splitlines())
    elsewhere = "\\n".join(line for line in str(request).split("\\n") if not excerpt.match(line))
    places = {"request": elsewhere, "events": run.stdout}
    assert [(where, mark) for mark in HOSTILE_MARKS for where, text in places.items() if mark in text] == []
    # every fence the prompt opens is closed once: the forged closer was neutralised
    assert report.count("</untrusted-data>") == report.count("<untrusted-data ") > 0


def test_hostile_text_in_the_log_cannot_forge_a_marker_in_the_summary(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run = run_hostile(api, tmp_path, capfd)
    assert "ignore previous instructions" in run.summary
    assert [mark for mark in HOSTILE_MARKS if mark in run.summary] == []
