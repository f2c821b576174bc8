"""`engine.triage_preexisting.judge_pre_existing`: the cycle's pre-existing check (issue 16) on the
local platform: a real repository, the local forge's described runs (`runs/<id>/run.json` and the
failed jobs' logs), the real `Platform.sources` and `collect` the cycle reads its failure with."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from ci_agent.config import Settings, TriageSettings
from ci_agent.engine.collect import Collected, collect
from ci_agent.engine.cycle import Cycle, Run
from ci_agent.engine.forge import RunInfo
from ci_agent.engine.marker import ForgeState
from ci_agent.engine.triage_preexisting import judge_pre_existing, their_trigger
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.platforms.local.cycle import LocalPlatform
from ci_agent.platforms.local.forge import LocalForge
from ci_agent.platforms.local.forge_latest import record_run
from ci_agent.triage import Verdict
from ci_agent.triage.preexisting import PartialOverlap

OLD = "FAILED tests/test_cart.py::test_total - assert 3 == 4\n"
NEW = "FAILED tests/test_cart.py::test_discount - assert 0 == 1\n"
SHA = "d" * 40


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "feature", str(work)], check=True)
    return work


def ours(repo: Path, tmp_path: Path, text: str) -> Collected:
    log = tmp_path / "ours.log"
    log.write_text(text)
    return collect(repo, logs=[str(log)], root=repo, quiet=True)


def main_run(forge_dir: Path, run_id: int, conclusion: str, log: str = "") -> None:
    record_run(forge_dir / "runs", run_id, branch="main", sha=SHA, conclusion=conclusion, workflow="ci.yml")
    if log:
        jobs = forge_dir / "runs" / str(run_id) / "jobs"
        jobs.mkdir()
        (jobs / f"{run_id}0-test.log").write_text(log)


def cycle_on(repo: Path, tmp_path: Path, branch: str = "feature", settings: Settings | None = None,
             **trig: object) -> tuple[Run, Cycle]:
    inputs = ActionInputs(build_logs=("build.log",))
    trigger = replace(Trigger("inline", branch, "e" * 40, "5", "1", "failure", workflow="ci.yml"), **trig)
    forge = LocalForge(tmp_path / "forge")
    run = Run({}, inputs, trigger, LocalPlatform(repo, tmp_path / "forge", inputs), None)
    cycle = Cycle(repo, settings or Settings(), forge, "", branch, "ci-agent/fix/" + branch, None,
                  ForgeState(), None, [])
    return run, cycle


def test_a_failure_red_on_main_too_is_pre_existing(repo: Path, tmp_path: Path) -> None:
    main_run(tmp_path / "forge", 41, "failure", "==== short test summary info ====\n" + OLD)
    run, cycle = cycle_on(repo, tmp_path)
    found = judge_pre_existing(run, cycle, ours(repo, tmp_path, OLD), tmp_path / "tmp")
    assert isinstance(found, Verdict) and found.kind == "pre_existing"
    assert found.tests == ("tests/test_cart.py::test_total",)
    assert "also fails on main (its latest run, local/runs/41)" in found.reason
    assert run.notes == ()


def test_a_new_failure_beside_an_old_one_is_a_partial_overlap(repo: Path, tmp_path: Path) -> None:
    main_run(tmp_path / "forge", 41, "failure", OLD)
    run, cycle = cycle_on(repo, tmp_path)
    found = judge_pre_existing(run, cycle, ours(repo, tmp_path, OLD + NEW), tmp_path / "tmp")
    assert isinstance(found, PartialOverlap)
    assert (found.tests, found.new_count) == (("tests/test_cart.py::test_total",), 1)


def test_a_green_main_or_none_at_all_says_nothing_and_fetches_nothing(repo: Path, tmp_path: Path) -> None:
    run, cycle = cycle_on(repo, tmp_path)
    assert judge_pre_existing(run, cycle, ours(repo, tmp_path, OLD), tmp_path / "tmp") is None
    main_run(tmp_path / "forge", 41, "failure", OLD)
    main_run(tmp_path / "forge", 42, "success")
    assert judge_pre_existing(run, cycle, ours(repo, tmp_path, OLD), tmp_path / "tmp") is None
    assert not (tmp_path / "tmp").exists()


@pytest.mark.parametrize("case", ["on main", "disabled", "fix branch", "attempt"])
def test_where_the_check_does_not_apply(repo: Path, tmp_path: Path, case: str) -> None:
    main_run(tmp_path / "forge", 41, "failure", OLD)
    off = Settings(triage=TriageSettings(pre_existing=False))
    run, cycle = {"on main": lambda: cycle_on(repo, tmp_path, branch="main"),
                  "disabled": lambda: cycle_on(repo, tmp_path, settings=off),
                  "fix branch": lambda: cycle_on(repo, tmp_path, branch="ci-agent/fix/feature"),
                  "attempt": lambda: cycle_on(repo, tmp_path, attempt_commit=True)}[case]()
    assert judge_pre_existing(run, cycle, ours(repo, tmp_path, OLD), tmp_path / "tmp") is None


def test_an_unreadable_main_run_is_a_note_never_a_block(repo: Path, tmp_path: Path) -> None:
    main_run(tmp_path / "forge", 41, "failure")  # described, but the forge has no job of it
    run, cycle = cycle_on(repo, tmp_path)
    assert judge_pre_existing(run, cycle, ours(repo, tmp_path, OLD), tmp_path / "tmp") is None
    (note,) = run.notes
    assert note.startswith("whether this failure is also red on the default branch was not checked: ")
    assert "no run 41" in note


def test_the_other_run_is_fetched_from_the_forge_even_for_an_inline_step() -> None:
    inline = Trigger("inline", "feature", "e" * 40, "5", "1", "failure", pr_number=3, workflow="ci.yml")
    theirs = their_trigger(inline, "main", RunInfo(41, SHA, "failure"))
    assert (theirs.kind, theirs.branch, theirs.sha, theirs.run_id, theirs.pr_number) == (
        "workflow_run", "main", SHA, "41", None)
    pipeline = replace(inline, kind="pipeline")
    assert their_trigger(pipeline, "main", RunInfo(41, SHA, "failed")).kind == "pipeline"
