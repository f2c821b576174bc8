"""The re-run part of the `Forge` contract (issue 16): `rerun_failed_jobs` and `run_state`, one
set of assertions for the local forge, GitHub and GitLab (see conftest.py's `subject`).

A re-run's failed jobs are new jobs: GitHub's new attempt and GitLab's retry give them new ids,
and `failed_jobs` / `download_job_log` serve the newest attempt's, so a failure that comes back
is collected from the re-run. The local forge runs nothing: its subject writes the attempt's
folder that says how the re-run ends (platforms/local/forge.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.errors import ForgeError
from tests.forge.forges import Subject


def test_a_failed_run_is_completed_failed_at_its_first_attempt(subject: Subject) -> None:
    run, job, _log = subject.failed_run("build", "lint")

    state = subject.forge.run_state(run)

    assert (state.status, state.conclusion, state.attempt) == ("completed", "failure", 1)
    assert state.failed_job_ids == (job,)
    assert not state.passed


def test_a_rerun_that_fails_again_has_new_failed_jobs_with_the_same_log(subject: Subject,
                                                                       tmp_path: Path) -> None:
    run, job, log = subject.failed_run("build", "lint")
    subject.rerun_ends(run, "failure")

    rerun = subject.forge.rerun_failed_jobs(run)
    state = subject.forge.run_state(run)

    assert (rerun.run_id, rerun.attempt) == (run, 2)
    assert (state.status, state.conclusion, state.attempt) == ("completed", "failure", 2)
    [again] = state.failed_job_ids
    assert again != job
    assert [j.id for j in subject.forge.failed_jobs(run)] == [again]
    assert subject.forge.download_job_log(again, tmp_path / "logs").text_path.read_bytes() == log


def test_a_rerun_that_passes_leaves_no_failed_job(subject: Subject) -> None:
    run, _job, _log = subject.failed_run("build", "lint")
    subject.rerun_ends(run, "success")

    subject.forge.rerun_failed_jobs(run)
    state = subject.forge.run_state(run)

    assert state.passed
    assert (state.attempt, state.failed_job_ids) == (2, ())
    assert subject.forge.failed_jobs(run) == []


def test_a_second_rerun_is_the_third_attempt(subject: Subject) -> None:
    run, _job, _log = subject.failed_run("build", "lint")
    subject.rerun_ends(run, "failure")
    subject.forge.rerun_failed_jobs(run)
    subject.rerun_ends(run, "success")

    assert subject.forge.rerun_failed_jobs(run).attempt == 3
    assert subject.forge.run_state(run).passed


def test_an_unknown_run_is_a_forge_error(subject: Subject) -> None:
    with pytest.raises(ForgeError):
        subject.forge.rerun_failed_jobs(404_404)
    with pytest.raises(ForgeError):
        subject.forge.run_state(404_404)
