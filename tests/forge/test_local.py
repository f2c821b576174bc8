"""The `local` forge: the same contract as GitHub's, kept in a JSON file (dry run, test double)."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from ci_agent.engine.forge import Limits
from ci_agent.errors import ForgeError
from ci_agent.platforms.local.forge import LOCAL_BOT, STATE_FILE, LocalForge

FIX = "ci-agent/fix/main"


def test_change_request_idempotent_across_instances(tmp_path: Path) -> None:
    first = LocalForge(tmp_path).open_change_request(FIX, "main", "Fix", "body")
    second = LocalForge(tmp_path).open_change_request(FIX, "main", "Other", "other")
    assert first == second and first.draft is True
    assert LocalForge(tmp_path).find_change_request(FIX) == first
    assert LocalForge(tmp_path).find_change_request("nope") is None
    assert LocalForge(tmp_path).change_request_text(first.number) == ("Fix", "body")
    state = json.loads((tmp_path / STATE_FILE).read_text())
    assert list(state["change_requests"]) == [str(first.number)]


def test_reactions_are_checked_as_a_forge_would(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    comment = forge.add_comment(number, "/ci-agent fix", "dev")
    forge.add_reaction(number, comment)
    assert forge.read()["reactions"] == [[comment, "eyes", LOCAL_BOT]]
    with pytest.raises(ForgeError):
        forge.add_reaction(number, comment, "thumbs")
    with pytest.raises(ForgeError):
        forge.add_reaction(number + 1, comment)  # a comment of another change request


def test_starting_ci_is_recorded(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    forge.configure(workflows={"ci.yml": True})
    assert forge.start_ci(FIX, "a" * 40, "ci.yml").kind == "started"
    assert forge.start_ci(FIX, "b" * 40).kind == "started"  # no workflow named: the one CI there is
    assert forge.read()["dispatches"] == [{"workflow": "ci.yml", "ref": FIX, "inputs": {}},
                                          {"workflow": "", "ref": FIX, "inputs": {}}]
    with pytest.raises(ForgeError, match="no workflow 'missing"):
        forge.start_ci(FIX, "a" * 40, "missing.yml")


def test_logs_are_capped_and_a_missing_run_is_an_error(tmp_path: Path) -> None:
    jobs = tmp_path / "forge" / "runs" / "7" / "jobs"
    jobs.mkdir(parents=True)
    (jobs / "11-build.log").write_text("error CS1002: ; expected\n" * 10)
    forge = LocalForge(tmp_path / "forge", limits=Limits(max_log_bytes=50))
    log = forge.download_job_log(11, tmp_path / "out")
    assert log.truncated and log.text_path.read_text() == ("error CS1002: ; expected\n" * 10)[:50]
    with pytest.raises(ForgeError, match="no run 8"):
        forge.failed_jobs(8)
    with pytest.raises(ForgeError, match="no log for job 12"):
        forge.download_job_log(12, tmp_path / "out")


def test_corrupt_state_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{not json")
    with pytest.raises(ForgeError, match="not valid JSON"):
        LocalForge(tmp_path).find_change_request(FIX)


def _open_many(directory: str, source: str) -> None:
    forge = LocalForge(Path(directory))
    for _ in range(10):
        forge.open_change_request(source, "main", "t", "b")


def test_two_processes_do_not_lose_updates(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_open_many, args=(str(tmp_path), f"ci-agent/fix/b{i}")) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    numbers = sorted(int(n) for n in LocalForge(tmp_path).read()["change_requests"])
    assert len(numbers) == 4 and len(set(numbers)) == 4


def test_a_rerun_nothing_says_the_end_of_is_refused_and_not_recorded(tmp_path: Path) -> None:
    """Nothing runs jobs locally: without `attempts/2/` the re-run would never end (issue 16)."""
    jobs = tmp_path / "runs" / "7" / "jobs"
    jobs.mkdir(parents=True)
    (jobs / "11-build.log").write_text("error\n")
    forge = LocalForge(tmp_path)

    with pytest.raises(ForgeError, match=r"cannot re-run the failed jobs of run 7: .*attempts/2"):
        forge.rerun_failed_jobs(7)
    assert forge.read()["reruns"] == []
    assert forge.run_state(7).attempt == 1


def test_a_rerun_is_recorded_and_its_attempt_folder_read(tmp_path: Path) -> None:
    jobs = tmp_path / "runs" / "7" / "jobs"
    jobs.mkdir(parents=True)
    (jobs / "11-build.log").write_text("error\n")
    (tmp_path / "runs" / "7" / "attempts" / "2").mkdir(parents=True)  # nothing failed
    forge = LocalForge(tmp_path)

    rerun = forge.rerun_failed_jobs(7)

    assert rerun.attempt == 2
    assert LocalForge(tmp_path).read()["reruns"] == [{"run": 7, "attempt": 2}]
    assert forge.run_state(7).passed and forge.failed_jobs(7) == []
