"""Which files are a run's build logs and test results (ci_agent/engine/sources.py): what the
failing run wrote, never what the commit holds. Real git repositories; the real GitHubForge
(PyGithub) against the loopback GitHub fake for the fetched artifacts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_agent.engine.sources import committed_files, fetched_sources, inline_sources
from ci_agent.engine.types import Trigger
from ci_agent.platforms.github.env import action_inputs
from ci_agent.platforms.github.forge import GitHubForge
from tests.fakes.github_fake import GitHubFake
from tests.forge.forges import GITHUB_ACTIONS_TOKEN as ACTIONS_TOKEN
from tests.forge.forges import zip_bytes
from tests.scenarios.sample_repos import git

TRX = "<TestRun/>"


def repo_with(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the commit under test")
    return repo





def rel(paths: tuple[str, ...], base: Path) -> set[str]:
    return {os.path.relpath(p, base) for p in paths}


def test_inline_reads_what_the_job_wrote_and_skips_what_the_commit_holds(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"samples/sample.trx": TRX, "config/logging.xml": "<configuration/>",
                                "TestResults/overwritten.trx": TRX, "build.log": "old log\n"})
    # what `dotnet test` / the build step of this job wrote: a new file, an overwritten tracked one
    (repo / "TestResults" / "run.trx").write_text(TRX)
    (repo / "TestResults" / "overwritten.trx").write_text("<TestRun><!-- this run --></TestRun>")

    found = inline_sources(action_inputs({"INPUT_BUILD_LOGS": "build.log",
                                          "INPUT_TEST_RESULTS": "**/*.trx, **/*.xml"}), repo)

    assert rel(found.result_globs, repo) == {"TestResults/run.trx", "TestResults/overwritten.trx"}
    assert found.logs == (), "the committed build.log, unchanged, is not this job's log"
    said = " ".join(found.notes)
    assert "samples/sample.trx" in said and "config/logging.xml" in said and "build.log" in said


def test_inline_passes_a_pattern_that_names_nothing_on_to_the_reader(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"README.md": "hi\n"})
    found = inline_sources(action_inputs({"INPUT_BUILD_LOGS": "/tmp/none-such.log"}), repo)
    # collect() then says "no such file" / "no file matches", as for any input
    assert found.logs == ("/tmp/none-such.log",)
    assert found.result_globs == (str(repo / "**/*.trx"),)
    assert found.notes == ()


def test_outside_a_git_work_tree_every_file_counts(tmp_path: Path) -> None:
    (tmp_path / "a.trx").write_text(TRX)
    assert committed_files(tmp_path) == frozenset()
    found = inline_sources(action_inputs({}), tmp_path)
    assert found.result_globs == (str(tmp_path / "a.trx"),)


@pytest.fixture
def github() -> Iterator[GitHubFake]:
    with GitHubFake() as server:
        yield server
    assert server.failures == []


def test_workflow_run_reads_build_logs_and_results_from_the_runs_artifacts(github: GitHubFake,
                                                                            tmp_path: Path) -> None:
    github.add_run(7, [("build", "failure")], [
        ("logs", zip_bytes(("build.log", b"error CS0246\n"), ("TestResults/a.trx", TRX.encode()))),
    ])
    forge = GitHubForge("octo/app", ACTIONS_TOKEN, base_url=github.base_url, throttle=False,
                        sleep=lambda seconds: None)
    trig = Trigger("workflow_run", "main", "0" * 40, "7", "1", "failure")
    chosen = action_inputs({"INPUT_BUILD_LOGS": "build.log, ../../*.log", "INPUT_TEST_RESULTS": "**/*.trx"})

    found = fetched_sources(forge, trig, chosen, tmp_path / "fetched")

    artifact = tmp_path / "fetched" / "artifacts" / "logs"
    (trace,) = [p for p in found.logs if "/logs/" in p and "/artifacts/" not in p]
    assert trace.endswith(".log"), "the failed job's log"
    assert rel(tuple(p for p in found.logs if p != trace), artifact) == {"build.log"}, \
        "build_logs in the artifact; `../` never leaves it"
    assert rel(found.result_globs, artifact) == {"TestResults/a.trx"}
    assert found.notes == ()


def test_workflow_run_names_a_build_logs_input_that_matched_nothing(github: GitHubFake,
                                                                    tmp_path: Path) -> None:
    github.add_run(7, [("build", "failure")], [("results", zip_bytes(("TestResults/a.trx", TRX.encode())))])
    forge = GitHubForge("octo/app", ACTIONS_TOKEN, base_url=github.base_url, throttle=False,
                        sleep=lambda seconds: None)
    trig = Trigger("workflow_run", "main", "0" * 40, "7", "1", "failure")

    found = fetched_sources(forge, trig, action_inputs({"INPUT_BUILD_LOGS": "build.log"}), tmp_path)

    assert any("build_logs (build.log) matched no file in the artifacts of results" in n for n in found.notes)
