"""The local forge's described runs (`runs/<id>/run.json`, issue 16)."""

from __future__ import annotations

from pathlib import Path

from ci_agent.platforms.local.forge import LocalForge
from ci_agent.platforms.local.forge_latest import RUN_FILE, record_run


def test_runs_without_a_description_or_with_a_broken_one_are_unknown(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    runs = tmp_path / "runs"
    (runs / "7" / "jobs").mkdir(parents=True)  # a failed run of the workflow_run path: no branch
    for name, text in (("8", "{not json"), ("9", "[1, 2]"), ("x", '{"branch": "main"}')):
        (runs / name).mkdir()
        (runs / name / RUN_FILE).write_text(text)
    assert forge.latest_completed_run("main") is None
    record_run(runs, 3, branch="main", sha="b" * 40, conclusion="failure")
    latest = forge.latest_completed_run("main")
    assert latest is not None and (latest.run_id, latest.sha, latest.red) == (3, "b" * 40, True)


def test_ids_order_runs_not_names(tmp_path: Path) -> None:
    forge = LocalForge(tmp_path)
    record_run(tmp_path / "runs", 9, branch="main", sha="a" * 40, conclusion="failure")
    record_run(tmp_path / "runs", 10, branch="main", sha="b" * 40, conclusion="success")
    latest = forge.latest_completed_run("main")
    assert latest is not None and (latest.run_id, latest.green) == (10, True)
