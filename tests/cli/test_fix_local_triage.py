"""`ci-agent fix --local`: the verdicts before the model (issue 16), on real git repositories.

A real pytest project with a test that fails once and then passes (its counter file lives in a
folder the sandboxed command can write): the failed test is re-run alone, passes, and the run
ends `flaky` with no model call, a record on `refs/ci-agent/flaky` and, the second time, a
quarantine candidate. A command whose output is an infrastructure failure ends `infrastructure`,
exit 1, no model call. A test that always fails is re-run once and the attempt goes on as before.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_agent.engine import state
from ci_agent.engine.ledger import FLAKY_REF, GitFlakyLog, flaky_message, flaky_tests_of
from ci_agent.git import Identity
from tests.cli.test_fix_local import FIXING, ScriptedClient, fix, no_model, repo, sh, submit
from tests.fakes.anthropic_fake import message, tool_use
from tests.toolchain import PYTEST as TOOLCHAIN_PYTEST
from tests.toolchain import PYTHON

__all__ = ["repo"]  # the fixture, shared with test_fix_local.py

PYTEST = f"{TOOLCHAIN_PYTEST} test_calc.py test_flaky.py"
FLAKY_TEST = """import pathlib
SEEN = pathlib.Path("SEEN_PATH")


def test_sometimes():
    first = not SEEN.exists()
    SEEN.write_text("1")
    assert not first, "fails the first time only"


def test_steady():
    pass
"""


GIVE_UP = message(tool_use("give_up", {"reason": "not today"}), stop_reason="tool_use")


@pytest.fixture(autouse=True)
def quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def commit_files(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).write_text(text)
    sh(repo, "add", ".")
    sh(repo, "commit", "-q", "-m", "files")


@pytest.fixture
def flaky_repo(repo: Path, reachable_tmp: Path) -> tuple[Path, Path]:
    """`repo` with calc fixed (test_calc passes) and test_flaky.py, whose test fails once."""
    seen = reachable_tmp / "seen"
    commit_files(repo, {"calc.py": "def add(a, b):\n    return a + b\n",
                        "test_flaky.py": FLAKY_TEST.replace("SEEN_PATH", str(seen))})
    return repo, seen


def events_of(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_a_test_passing_on_its_rerun_is_flaky_no_model_call_and_recorded(
        flaky_repo: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    repo, seen = flaky_repo
    assert fix(repo, "--command", PYTEST, "--json", client=no_model) == 0
    events = events_of(capsys.readouterr().out)
    assert [e["event"] for e in events] == ["distilled", "verdict", "done"]
    verdict, done = events[1], events[2]
    assert verdict["kind"] == "flaky" and verdict["tests"] == ["test_flaky.py::test_sometimes"]
    assert verdict["quarantine"] == []
    assert "test_flaky.py::test_sometimes" in verdict["evidence"][0]  # the re-run command
    assert "test_calc.py" not in verdict["evidence"][0]  # only the failed test re-ran
    assert done["status"] == "flaky" and done["exit_code"] == 0
    assert done["verdict"]["kind"] == "flaky"
    assert "## Verdict: Flaky" in done["summary"] and "`test_flaky.py::test_sometimes`" in done["summary"]
    assert "the model was not asked" in done["summary"]
    assert state.rev(repo, "refs/heads/ci-agent/fix/main") == state.rev(repo, "main")  # no commit
    log = GitFlakyLog(repo, Identity("x", "x@e.x"))
    assert log.counts() == {"test_flaky.py::test_sometimes": 1}

    # The second flaky verdict on the same test (quarantine_after: 2) names it a candidate.
    seen.unlink()
    assert fix(repo, "--command", PYTEST, "--json", client=no_model) == 0
    done = events_of(capsys.readouterr().out)[-1]
    assert done["quarantine"] == ["test_flaky.py::test_sometimes"]
    assert "Quarantine candidates" in done["summary"]
    assert "Quarantine candidate(s), flaky 2 times or more: test_flaky.py::test_sometimes" in done["message"]


def test_human_output_says_flaky_and_names_the_test(flaky_repo: tuple[Path, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = flaky_repo
    assert fix(repo, "--command", PYTEST, client=no_model) == 0
    captured = capsys.readouterr()
    assert "ci-agent: verdict kind=flaky" in captured.err
    assert "flaky: test_flaky.py::test_sometimes failed, then passed when re-run alone" in captured.err
    assert captured.out.startswith("# ci-agent fix: flaky: no patch")


def test_a_dry_run_judges_but_records_nothing(flaky_repo: tuple[Path, Path],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = flaky_repo
    assert fix(repo, "--command", PYTEST, "--dry-run", "--json", client=no_model) == 0
    assert events_of(capsys.readouterr().out)[-1]["status"] == "flaky"
    assert state.rev(repo, FLAKY_REF) is None


def test_flaky_false_in_the_config_reruns_nothing_and_asks_the_model(
        flaky_repo: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = flaky_repo
    commit_files(repo, {".ci-agent.yml": "triage:\n  flaky: false\n"})
    client = ScriptedClient(GIVE_UP)
    assert fix(repo, "--command", PYTEST, "--json", client=lambda: client) == 4
    events = events_of(capsys.readouterr().out)
    assert "triage" not in [e["event"] for e in events] and len(client.requests) == 1


def test_a_test_failing_again_goes_on_to_the_attempt(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = ScriptedClient(submit(FIXING))
    command = f"{TOOLCHAIN_PYTEST} test_calc.py"
    assert fix(repo, "--command", command, "--verify", command, "--json", client=lambda: client) == 0
    events = events_of(capsys.readouterr().out)
    triage = next(e for e in events if e["event"] == "triage")
    assert triage["flaky"] is False and triage["unconfirmed"] == ["test_calc.py::test_add"]
    assert events[-1]["status"] == "fixed" and len(client.conversations) == 1
    # the model saw the first run's report, not the re-run's
    assert "assert -1 == 5" in json.dumps(client.conversations[0])
    assert "not a flaky failure and the attempt goes on" in events[-1]["summary"]


def test_an_unknown_runner_gets_no_rerun_and_the_summary_says_why(
        repo: Path, reachable_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = reachable_tmp / "run_tests.py"
    script.write_text("import subprocess, sys\nsys.exit(subprocess.call([sys.executable, '-m', 'pytest', "
                      "'-q', '-p', 'no:cacheprovider', 'test_calc.py']))\n")
    script.chmod(0o755)
    client = ScriptedClient(GIVE_UP)
    assert fix(repo, "--command", f"{PYTHON} {script}", "--json", client=lambda: client) == 4
    events = events_of(capsys.readouterr().out)
    triage = next(e for e in events if e["event"] == "triage")
    assert triage["ran"] is False and "runner" in triage["reason"]
    assert "No flaky check: the test command's runner" in events[-1]["summary"]
    assert len(client.conversations) == 1


def test_an_infrastructure_failure_exits_1_without_a_model_call(
        repo: Path, reachable_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = reachable_tmp / "restore.py"
    script.write_text(
        "import sys\n"
        "print('  Determining projects to restore...')\n"
        "print('/src/Shop/Shop.csproj : error NU1301: Unable to load the service index for source "
        "https://api.nuget.org/v3/index.json.')\n"
        "sys.exit(1)\n")
    assert fix(repo, "--command", f"{PYTHON} {script}", "--json", client=no_model) == 1
    events = events_of(capsys.readouterr().out)
    verdict = next(e for e in events if e["event"] == "verdict")
    assert verdict["kind"] == "infrastructure"
    done = events[-1]
    assert done["status"] == "infrastructure" and done["exit_code"] == 1
    assert "## Verdict: Infrastructure" in done["summary"] and "NU1301" in done["summary"]
    assert "triage" not in [e["event"] for e in events]  # no flaky re-run after a verdict


def test_flaky_records_quote_each_name_on_one_line() -> None:
    hostile = ["a\nCI-Agent-Flaky-Test: \"forged\"", "b\u2028c", "ok"]
    message = flaky_message(hostile, "0" * 40)
    assert flaky_tests_of(message) == hostile
    assert flaky_tests_of("CI-Agent-Flaky-Test: not json\nCI-Agent-Flaky-Test: 3\n") == []


def test_flaky_log_counts_each_verdict_once_per_test(repo: Path) -> None:
    log = GitFlakyLog(repo, Identity("x", "x@e.x"))
    head = state.rev(repo, "main") or ""
    log.add(["t1", "t1", "t2"], head)
    assert log.add(["t1"], head) == {"t1": 2, "t2": 1}
    out = subprocess.run(["git", "cat-file", "-p", FLAKY_REF], cwd=repo, capture_output=True,
                         text=True).stdout
    assert "CI-Agent-Flaky-Test: \"t1\"" in out
