"""Where `ci-agent fix --gitlab` reads the failure from: the failed jobs' traces, and the
`build_logs` / `test_results` files in the failed jobs' own artifacts (fetched through the API).
Never the checkout (a committed sample `.trx`, a tracked `logging.xml` under `**/*.xml`), never a
passing job's artifacts. The rule is in ci_agent/engine/sources.py.
"""

from __future__ import annotations

from tests.gitlab_scenarios.harness import World
from tests.gitlab_scenarios.steps import answer, model_calls
from tests.platform_scenarios.steps import SAMPLE_TRX
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git


def failure_report(world: World) -> str:
    """The failure report of the first model request (its context shows the commit's diff)."""
    text = model.first_user_text(world.api.message_requests[0])
    return text.split("## Failure report", 1)[1].split("\n## Context", 1)[0]

# What `dotnet build 2>&1 | tee build.log` leaves in a failed job's artifacts.
BUILD_LOG = ("  Determining projects to restore...\n"
             "/builds/acme/shop/src/App/Program.cs(12,5): error CS0246: The type or namespace name "
             "'Widgetz' could not be found [/builds/acme/shop/src/App/App.csproj]\nBuild FAILED.\n")
# A passing job's log with an error line it recovered from: not this pipeline's failure.
PASSING_LOG = ("/builds/acme/shop/src/Lint/Rules.cs(3,1): error CS0103: The name 'Retried' does not "
               "exist in the current context\nretry succeeded\n")
LOGGING_XML = '<?xml version="1.0"?>\n<configuration><logger name="root" level="INFO"/></configuration>\n'


def commit_files(world: World, files: dict[str, str]) -> None:
    """A developer commits `files` on main and pushes (before the pipeline runs)."""
    person = world.clone("main", "person")
    git(person, "checkout", "-q", "-B", "main", "origin/main")
    for name, text in files.items():
        (person / name).parent.mkdir(parents=True, exist_ok=True)
        (person / name).write_text(text)
    git(person, "add", "-A")
    git(person, "commit", "-q", "-m", "add files")
    git(person, "push", "-q", "origin", "main")


def test_build_logs_are_read_from_the_failed_jobs_artifacts(world: World) -> None:
    world.include = {**world.include, "build_logs": "build.log"}
    red = world.pipeline("main", test_files={"build.log": BUILD_LOG}, lint_files={"build.log": PASSING_LOG})
    answer(world, "broken", "fix")

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    report = model.first_user_text(world.api.message_requests[0])
    assert "CS0246" in report and "Widgetz" in report, "the build log kept as the failed job's artifact"
    assert "test_no_ratings_yet" in report, "the trace and the JUnit file are still read"
    assert "CS0103" not in report and "Retried" not in report, "a passing job's artifacts are not the failure"


def test_a_build_logs_glob_that_matches_nothing_is_named_in_the_summary(world: World) -> None:
    world.include = {**world.include, "build_logs": "logs/**/*.binlog.txt"}
    red = world.pipeline("main")
    answer(world, "broken", "fix")

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    assert "logs/**/*.binlog.txt" in run.summary and "matched no file" in run.summary, run.summary


def test_a_committed_sample_trx_neither_counts_nor_stops_the_artifact_download(world: World) -> None:
    commit_files(world, {"samples/TestResults/sample.trx": SAMPLE_TRX})
    red = world.pipeline("main")
    assert red.status == "failed"
    answer(world, "broken", "fix")

    run = world.job(red)

    assert run.exit_code == 0 and run.outcome == "committed", str(run)
    assert model_calls(world) == 1
    report = failure_report(world)
    assert "junit.xml" in report, "the failed job's artifacts were fetched and read"
    assert "NeverRunHere" not in report and "sample.trx" not in report, "the commit's file is no result"


def test_a_tracked_xml_file_is_not_taken_for_a_result_file(world: World) -> None:
    world.include = {**world.include, "test_results": "**/*.xml"}
    commit_files(world, {"config/logging.xml": LOGGING_XML})
    red = world.pipeline("main")
    answer(world, "broken", "fix")

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    report = failure_report(world)
    assert "junit.xml" in report and "test_no_ratings_yet" in report
    assert "logging.xml" not in report and "configuration" not in report, report[:2000]
