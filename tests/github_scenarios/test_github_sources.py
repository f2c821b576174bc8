"""Inline mode (`ci-agent fix --github` as a step of the job that built and tested) reads the
result files this job wrote, never files the commit holds unchanged: a committed sample `.trx`
matched by the default `**/*.trx` is not a failure of this run (ci_agent/engine/sources.py).
"""

from __future__ import annotations

from tests.github_scenarios.harness import USER_TOKEN, World
from tests.github_scenarios.steps import answer, model_calls
from tests.platform_scenarios.steps import SAMPLE_TRX
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git


def test_inline_never_reads_a_committed_sample_trx_as_this_runs_result(world: World) -> None:
    person = world.checkout("main", "person")
    git(person, "checkout", "-q", "-B", "main", "origin/main")
    (person / "samples" / "TestResults").mkdir(parents=True)
    (person / "samples" / "TestResults" / "sample.trx").write_text(SAMPLE_TRX)
    git(person, "add", "-A")
    git(person, "commit", "-q", "-m", "docs: a sample test report")
    git(person, "push", "-q", "origin", "main")
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")

    run = world.inline("main")  # test_results: the default **/*.trx

    assert run.exit_code == 0, str(run)
    assert model_calls(world) == 1
    report = model.first_user_text(world.api.message_requests[0])
    report = report.split("## Failure report", 1)[1].split("\n## Context", 1)[0]
    assert "test_no_ratings_yet" in report, "the test step's log"
    assert "NeverRunHere" not in report and "sample.trx" not in report, "the commit's own file"
    assert "samples/TestResults/sample.trx" in run.summary, "the summary says what was skipped"
