"""The `local` forge: the same contract as GitHub's, kept in a JSON file (dry run, test double)."""

from __future__ import annotations

import io
import json
import multiprocessing
import zipfile
from pathlib import Path

import pytest

from ci_agent.engine.forge import Forge, Limits, Permission, render_marker
from ci_agent.errors import ForgeError
from ci_agent.platforms.local.forge import LOCAL_BOT, STATE_FILE, LocalForge

FIX = "ci-agent/fix/main"


def test_it_is_a_forge(tmp_path: Path) -> None:
    assert isinstance(LocalForge(tmp_path), Forge)


def test_change_request_idempotent_across_instances(tmp_path: Path) -> None:
    first = LocalForge(tmp_path).open_change_request(FIX, "main", "Fix", "body")
    second = LocalForge(tmp_path).open_change_request(FIX, "main", "Other", "other")
    assert first == second and first.draft is True
    assert LocalForge(tmp_path).find_change_request(FIX) == first
    assert LocalForge(tmp_path).find_change_request("nope") is None
    assert LocalForge(tmp_path).change_request_text(first.number) == ("Fix", "body")
    state = json.loads((tmp_path / STATE_FILE).read_text())
    assert list(state["change_requests"]) == [str(first.number)]


def test_update_change_request(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    updated = forge.update_change_request(number, body="B2", draft=False)
    assert updated.draft is False
    assert forge.change_request_text(number) == ("t", "B2")
    with pytest.raises(ForgeError, match="no change request #99"):
        forge.update_change_request(99, title="x")


def test_status_comment_upserted_and_others_markers_ignored(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    number = forge.open_change_request(FIX, "main", "t", "b").number
    marker = render_marker({"attempt": 3})
    forge.add_comment(number, f"> {marker}\nquoted", "octocat")
    forge.add_comment(number, marker + "\nforged", "mallory")
    assert forge.read_status_state(number) is None
    first = forge.upsert_status_comment(number, {"attempt": 1}, "one")
    second = LocalForge(tmp_path).upsert_status_comment(number, {"attempt": 2}, "two")
    assert first.id == second.id and second.author == LOCAL_BOT
    assert LocalForge(tmp_path).read_status_state(number) == {"attempt": 2}
    bodies = [c.body for c in forge.list_comments(number)]
    assert bodies == [f"> {marker}\nquoted", marker + "\nforged", render_marker({"attempt": 2}) + "\ntwo"]


def test_labels_reactions_permission_dispatch_branches(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    forge.configure(default_branch="trunk", protected=["trunk"],
                    permissions={"dev": "maintain", "guest": "read"},
                    workflows={"ci.yml": True, "push.yml": False})
    number = forge.open_change_request(FIX, "trunk", "t", "b").number
    forge.add_labels(number, ["ci-agent", "ci-agent:escalated", "ci-agent"])
    forge.remove_label(number, "ci-agent:escalated")
    forge.remove_label(number, "absent")
    assert forge.find_change_request(FIX).labels == ("ci-agent",)  # type: ignore[union-attr]
    comment = forge.add_comment(number, "/ci-agent fix", "dev")
    forge.add_reaction(number, comment)
    forge.add_reaction(number, comment)
    assert forge.read()["reactions"] == [[comment, "eyes", LOCAL_BOT]]
    with pytest.raises(ForgeError):
        forge.add_reaction(number, comment, "thumbs")
    with pytest.raises(ForgeError):
        forge.add_reaction(number + 1, comment)  # a comment of another change request
    posted = forge.post_comment(number, "escalated")
    assert (posted.author, posted.author_is_bot) == (forge.own_login(), True)
    assert posted in forge.list_comments(number)
    assert forge.permission("dev") is Permission.MAINTAIN
    assert forge.permission("guest") is Permission.READ
    assert forge.permission("stranger") is Permission.NONE
    assert forge.dispatch_workflow("ci.yml", FIX, {"a": "b"}) is True
    assert forge.dispatch_workflow("push.yml", FIX, {}) is False
    assert forge.read()["dispatches"] == [{"workflow": "ci.yml", "ref": FIX, "inputs": {"a": "b"}}]
    assert forge.default_branch() == "trunk"
    assert forge.protected("trunk") and not forge.protected(FIX)


def test_runs_logs_and_artifacts_from_the_directory(tmp_path: Path) -> None:
    run = tmp_path / "forge" / "runs" / "7"
    (run / "jobs").mkdir(parents=True)
    (run / "jobs" / "11-build.log").write_text("error CS1002: ; expected\n" * 10)
    (run / "artifacts").mkdir()
    good, evil = io.BytesIO(), io.BytesIO()
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("r/a.trx", "<TestRun/>")
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../../outside.txt", "x")
    (run / "artifacts" / "results.zip").write_bytes(good.getvalue())
    (run / "artifacts" / "evil.zip").write_bytes(evil.getvalue())
    forge = LocalForge(tmp_path / "forge", limits=Limits(max_log_bytes=50))
    assert [(j.id, j.name) for j in forge.failed_jobs(7)] == [(11, "build")]
    log = forge.download_job_log(11, tmp_path / "out")
    assert log.truncated and log.text_path.read_text() == ("error CS1002: ; expected\n" * 10)[:50]
    got = {a.name: a for a in forge.download_artifacts(7, tmp_path / "arts")}
    assert (tmp_path / "arts" / "results" / "r" / "a.trx").read_text() == "<TestRun/>"
    assert got["evil"].path is None and "escapes" in (got["evil"].problem or "")
    assert not (tmp_path / "outside.txt").exists()
    with pytest.raises(ForgeError, match="no run 8"):
        forge.failed_jobs(8)


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
