"""`Forge.latest_completed_run` (issue 16: is a failure also red on the default branch?), one set of
assertions for the local forge, GitHub and GitLab (conftest.py's `subject`)."""

from __future__ import annotations

from tests.forge.forges import Subject


def test_no_run_is_none(subject: Subject) -> None:
    assert subject.forge.latest_completed_run("main") is None


def test_the_newest_completed_run_of_the_branch(subject: Subject) -> None:
    red = subject.run_of("main", subject.sha, "failed")
    green = subject.run_of("main", subject.sha, "passed")
    subject.run_of("main", subject.sha, "running")  # not done: decides nothing yet
    subject.run_of("feature/x", subject.sha, "failed")  # another branch's
    latest = subject.forge.latest_completed_run("main")
    assert latest is not None
    assert (latest.run_id, latest.sha, latest.green, latest.red) == (green, subject.sha, True, False)
    assert red != green


def test_a_red_run_says_so(subject: Subject) -> None:
    subject.run_of("main", subject.sha, "passed")
    red = subject.run_of("main", subject.sha, "failed")
    latest = subject.forge.latest_completed_run("main", "ci.yml")
    assert latest is not None and (latest.run_id, latest.red, latest.green) == (red, True, False)


def test_a_cancelled_run_is_neither_red_nor_green(subject: Subject) -> None:
    cancelled = subject.run_of("main", subject.sha, "cancelled")
    latest = subject.forge.latest_completed_run("main")
    assert latest is not None and (latest.run_id, latest.red, latest.green) == (cancelled, False, False)


def test_the_failing_runs_workflow_is_preferred(subject: Subject) -> None:
    tests = subject.run_of("main", subject.sha, "failed", workflow="ci.yml")
    lint = subject.run_of("main", subject.sha, "passed", workflow="lint.yml")
    of_ci = subject.forge.latest_completed_run("main", "ci.yml")
    anything = subject.forge.latest_completed_run("main")
    elsewhere = subject.forge.latest_completed_run("main", "gone.yml")  # no run of it: the newest
    assert anything is not None and anything.run_id == lint
    assert elsewhere is not None and elsewhere.run_id == lint
    assert of_ci is not None
    # A GitLab project has one pipeline definition: there is no other workflow to prefer.
    assert of_ci.run_id == (lint if subject.name == "gitlab" else tests)
