"""`ci_agent.verify_check`: whether a verify program can start (asked before any model call) and
whether a finished run was a verdict at all (timeouts, 126/127 and kills are not), on real
programs and a real git tree; plus the durable record of a verify that could not run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_agent import proc
from ci_agent.engine.marker import ChainLink, ForgeState, observe_run, retry
from ci_agent.engine.marker_entries import Unverifiable
from ci_agent.verify_check import could_not_run, missing_program, tree_mode_at


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e.x", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository whose HEAD has an executable script, a plain file and a link to the script."""
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "tools").mkdir()
    script = tmp_path / "tools" / "verify.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    (tmp_path / "tools" / "notes.txt").write_text("not a program\n")
    (tmp_path / "gradlew").symlink_to("tools/verify.sh")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "tools")
    return tmp_path


def test_a_bare_name_is_looked_up_on_the_jobs_path(tree: Path) -> None:
    modes = tree_mode_at(tree, "HEAD")
    assert missing_program(["sh", "-c", "true"], os.environ.get("PATH"), modes) is None
    said = missing_program(["dotnet-ci-agent-missing", "test"], os.environ.get("PATH"), modes)
    assert said == "dotnet-ci-agent-missing is not installed in this job (not found on its PATH)"
    # the same name on an empty PATH: nothing is found
    assert missing_program(["sh"], "", modes) is not None


def test_an_absolute_program_must_be_an_executable_file(tree: Path) -> None:
    modes = tree_mode_at(tree, "HEAD")
    assert missing_program([sys.executable, "-V"], None, modes) is None
    assert missing_program(["/no/such/dotnet"], None, modes) == (
        "/no/such/dotnet is not an executable file in this job")
    assert missing_program([str(tree / "tools" / "notes.txt")], None, modes) is not None


def test_a_relative_program_is_read_from_the_tree_being_fixed(tree: Path) -> None:
    modes = tree_mode_at(tree, "HEAD")
    assert missing_program(["./tools/verify.sh"], "", modes) is None
    assert missing_program(["tools/../tools/verify.sh"], "", modes) is None
    assert missing_program(["./gradlew", "test"], "", modes) is None, "a symbolic link in the tree"
    assert missing_program(["./tools/missing.sh"], "", modes) == (
        "./tools/missing.sh is not a file in the repository")
    assert missing_program(["tools/notes.txt"], "", modes) == (
        "tools/notes.txt is not executable in the repository (git mode 100644)")
    assert missing_program(["../outside.sh"], "", modes) == "../outside.sh points outside the repository"
    # a file only in the working tree is not in the revision being fixed
    extra = tree / "local.sh"
    extra.write_text("#!/bin/sh\n")
    extra.chmod(0o755)
    assert missing_program(["./local.sh"], "", modes) is not None


def test_hostile_program_names_are_quoted_in_the_sentence(tree: Path) -> None:
    said = missing_program(["ev il`$(x)`\n"], "", tree_mode_at(tree, "HEAD"))
    assert said is not None and said.startswith("'ev il`$(x)`\n'")


def test_results_that_are_no_verdict(tmp_path: Path) -> None:
    """Real runs: exit 127 and 126 from a shell, a kill, a timeout; a test failure is a verdict."""
    def sh(script: str, timeout: float = 20) -> proc.Result:
        return proc.run(["sh", "-c", script], cwd=tmp_path, timeout=timeout)

    assert "exit 127" in could_not_run(sh("no-such-tool-ci-agent --run"), 20)
    (tmp_path / "plain").write_text("echo hi\n")
    assert "exit 126" in could_not_run(sh("./plain"), 20)
    assert "SIGKILL" in could_not_run(sh("kill -9 $$"), 20)
    assert "SIGKILL" in could_not_run(sh("sh -c 'kill -9 $$'; exit $?"), 20), "137 from a shell"
    assert "timed out after 0.5 s" in could_not_run(sh("sleep 5", timeout=0.5), 0.5)
    assert could_not_run(sh("exit 1"), 20) == ""
    assert could_not_run(sh("exit 0"), 20) == ""


def _record(run: str, fp: str = "f1", verify: str = "make check") -> Unverifiable:
    return Unverifiable(fp, verify, "`make check` could not find a program it runs (exit 127)", 2, run)


def test_the_record_holds_back_only_its_failure_and_command() -> None:
    state = ForgeState().with_unverifiable(_record("9-1"))
    round_trip = ForgeState.from_json(state.to_json())
    assert round_trip.standing_unverifiable("f1", "make check") == _record("9-1")
    assert round_trip.standing_unverifiable("f2", "make check") is None, "another failure"
    assert round_trip.standing_unverifiable("f1", "make test") is None, "another command"


def test_a_retry_or_a_green_run_lifts_it_and_merging_never_revives_it() -> None:
    held = ForgeState().with_unverifiable(_record("9-1"))
    retried = retry(held, [])
    assert retried.standing_unverifiable("f1", "make check") is None
    # another job wrote the marker from the old state: the lift survives the merge, both ways
    assert retried.merged_with(held).standing_unverifiable("f1", "make check") is None
    assert held.merged_with(retried).standing_unverifiable("f1", "make check") is None
    # a new record after the retry stands again
    again = retried.with_unverifiable(_record("10-1"))
    assert again.merged_with(held).standing_unverifiable("f1", "make check") == _record("10-1")
    stale = observe_run(held, [], "77", "", True)  # no chain: stale, nothing changes
    assert stale.state.standing_unverifiable("f1", "make check") is not None
    green = observe_run(held, [ChainLink("a" * 40, None)], "78", "a" * 40, True)
    assert green.verdict == "green" and green.state.standing_unverifiable("f1", "make check") is None


def test_hostile_marker_entries_are_dropped() -> None:
    data = ForgeState().with_unverifiable(_record("9-1")).to_json()
    data["unverifiable"] += [{"fp": 1}, "x", {"fp": "a", "verify": "b", "reason": "c", "run": "d",
                                               "code": True}, None]
    assert ForgeState.from_json(data).unverifiable == (_record("9-1"),)
