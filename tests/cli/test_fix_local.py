"""`ci-agent fix --local` and its durable state, on real git repositories with a bare origin.

The model is a scripted in-process `ModelClient` (a fake that behaves: it validates every
request like the API does and answers from a script); the repositories, git, pytest and the
patch engine are real.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ci_agent.cli.main import main
from ci_agent.engine import state
from ci_agent.engine.budget import AttemptRecord, AttemptResult, Event, Reset, ResetReason, assess
from ci_agent.git import Identity
from tests.fakes.anthropic_fake import message, tool_use, validate
from tests.fakes.anthropic_review import default_review, is_review_request
from tests.toolchain import PYTEST as TOOLCHAIN_PYTEST
from tests.toolchain import PYTHON

BOT = Identity("ci-agent", "ci-agent@example.com")
PYTEST = f"{TOOLCHAIN_PYTEST} test_calc.py"
WRONG = "def add(a, b):\n    return a - b\n"
RIGHT = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def sh(cwd: Path, *argv: str) -> str:
    return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e.x", *argv], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(autouse=True)
def quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    # The sample's own pytest runs need none of the plugins installed here (1.5 s -> 0.3 s a run).
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A clone of a bare origin: `calc.add` subtracts, its pytest test fails."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True, capture_output=True)
    sh(work, "checkout", "-q", "-b", "main")
    (work / "calc.py").write_text(WRONG)
    (work / "test_calc.py").write_text(TEST)
    (work / ".gitignore").write_text("__pycache__/\n")
    sh(work, "add", ".")
    sh(work, "commit", "-q", "-m", "calc")
    sh(work, "push", "-q", "origin", "main")
    return work


def diff_for(old: str, new: str, path: str = "calc.py") -> str:
    return (f"--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n {old.splitlines()[0]}\n"
            f"-{old.splitlines()[1]}\n+{new.splitlines()[1]}\n")


FIXING = diff_for(WRONG, RIGHT)
NOT_FIXING = diff_for(WRONG, "def add(a, b):\n    return a * b\n")


def submit(diff: str, summary: str = "add adds", **extra: Any) -> dict[str, Any]:
    # calc.py is not in the pytest report (the assert is in test_calc.py): the root cause names it.
    return message(tool_use("submit_patch", {
        "diff": diff, "summary": summary, "root_cause": "add in calc.py subtracted instead of adding",
        "confidence": 0.9, "assumptions": [], "open_questions": [], **extra}), stop_reason="tool_use")


class ScriptedClient:
    """A ModelClient answering each request with the next scripted reply, validating it first."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.reviews: list[dict[str, Any]] = []  # the reviewer's scripted answers
        self.review_requests: list[dict[str, Any]] = []

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        problem = validate(json.loads(json.dumps(request)))
        assert problem is None, problem
        if is_review_request(request):  # the reviewer (on by default) approves unless scripted
            self.review_requests.append(json.loads(json.dumps(request)))
            return self.reviews.pop(0) if self.reviews else default_review(request)
        self.requests.append(json.loads(json.dumps(request)))  # the loop goes on appending to it
        assert self.replies, "the model was called more often than scripted"
        return self.replies.pop(0)

    @property
    def conversations(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if len(r["messages"]) == 1]


def no_model() -> Any:
    raise AssertionError("the model must not be called")


def fix(repo: Path, *extra: str, client: Callable[[], Any] | None = None,
        env: dict[str, str] | None = None) -> int:
    from ci_agent.cli.fix import run_fix_command
    from ci_agent.cli.main import build_parser

    args = build_parser().parse_args(["fix", "--local", "--repo", str(repo), *extra])
    return run_fix_command(args, env=env if env is not None else {}, client_factory=client)


def user_state(repo: Path) -> tuple[str, bytes, dict[str, bytes]]:
    """Status, the index file's bytes, and every file's bytes of the user's working copy."""
    status = subprocess.run(["git", "status", "--porcelain=v2", "--untracked-files=all", "--ignored"],
                            cwd=repo, check=True, capture_output=True,
                            env={"GIT_OPTIONAL_LOCKS": "0", "PATH": "/usr/bin:/bin"}).stdout.decode()
    files = {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(repo).parts}
    return status, (repo / ".git" / "index").read_bytes(), files


# --- names ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("source", "expected"), [
    ("main", "ci-agent/fix/main"),
    ("feature/login form", "ci-agent/fix/feature/login-form"),
    ("release/..//x.lock", "ci-agent/fix/release/x"),
    (".hidden/-dash-", "ci-agent/fix/hidden/dash"),
    ("héllo~^:?*[\\", "ci-agent/fix/h-llo"),
    ("@{-1}", "ci-agent/fix/1"),
    ("~^:", "ci-agent/fix/branch"),
])
def test_fix_branch_names_are_sanitised_and_valid(source: str, expected: str, tmp_path: Path) -> None:
    name = state.fix_branch_for(source)
    assert name == expected
    assert subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True).returncode == 0
    assert subprocess.run(["git", "check-ref-format", state.attempts_ref(name)]).returncode == 0


def test_long_names_are_capped() -> None:
    assert len(state.sanitise_branch("x" * 500)) == 100


# --- the fix branch and the attempt record ----------------------------------------------------

def failed_next(run: str, fp: str = "f") -> Callable[[list[Event]], Event]:
    def build(events: list[Event]) -> Event:
        return AttemptRecord(assess(events, 99).next_attempt, AttemptResult.FAILED, fp, run=run)
    return build


def test_prepare_creates_fast_forwards_and_refuses_divergence(repo: Path) -> None:
    tip = state.rev(repo, "main")
    assert state.prepare_fix_branch(repo, "main", "ci-agent/fix/main") == tip
    (repo / "new.txt").write_text("n\n")
    sh(repo, "add", "new.txt")
    sh(repo, "commit", "-q", "-m", "more")
    moved = state.rev(repo, "main")
    assert state.prepare_fix_branch(repo, "main", "ci-agent/fix/main") == moved  # fast-forward
    sh(repo, "update-ref", "refs/heads/ci-agent/fix/main", tip or "")
    sh(repo, "checkout", "-q", "ci-agent/fix/main")
    sh(repo, "commit", "-q", "--allow-empty", "-m", "human on the fix branch")
    sh(repo, "checkout", "-q", "main")
    with pytest.raises(state.StateError, match="diverged"):
        state.prepare_fix_branch(repo, "main", "ci-agent/fix/main")


def test_records_survive_and_human_commits_reset(repo: Path) -> None:
    branch = "ci-agent/fix/main"
    tip = state.prepare_fix_branch(repo, "main", branch)
    for run in ("a", "b"):
        state.record(repo, branch, tip, failed_next(run), BOT)
    assert assess(state.read_events(repo, branch), 3).consecutive_failures == 2
    # A human commit on the fix branch starts a new count.
    sh(repo, "checkout", "-q", branch)
    sh(repo, "commit", "-q", "--allow-empty", "-m", "a person tried something")
    sh(repo, "checkout", "-q", "main")
    events = state.read_events(repo, branch)
    assert events[-1] == Reset(ResetReason.HUMAN_COMMIT)
    assert assess(events, 3).consecutive_failures == 0


def test_rerecording_the_same_attempt_counts_once(repo: Path) -> None:
    branch = "ci-agent/fix/main"
    tip = state.prepare_fix_branch(repo, "main", branch)
    first = state.record(repo, branch, tip, failed_next("same"), BOT)
    again = state.record(repo, branch, tip, failed_next("same"), BOT)
    assert not first.already and again.already
    assert assess(state.read_events(repo, branch), 3).consecutive_failures == 1


def test_compare_and_swap_loser_rereads_and_renumbers(repo: Path) -> None:
    """Another invocation records between our read and our update: our update-ref fails on the
    old value, we re-read, and our attempt becomes number 2 — neither lost nor double-counted."""
    branch = "ci-agent/fix/main"
    tip = state.prepare_fix_branch(repo, "main", branch)
    calls: list[int] = []

    def racing(events: list[Event]) -> Event:
        calls.append(len(events))
        if len(calls) == 1:  # the other job lands its record right now
            state.record(repo, branch, tip, failed_next("other"), BOT)
        return failed_next("ours")(events)

    recorded = state.record(repo, branch, tip, racing, BOT)
    assert len(calls) == 2
    assert isinstance(recorded.event, AttemptRecord) and recorded.event.number == 2
    numbers = [e.number for e in state.read_events(repo, branch) if isinstance(e, AttemptRecord)]
    assert numbers == [1, 2]


def test_concurrent_records_are_all_kept_once(repo: Path) -> None:
    branch = "ci-agent/fix/main"
    tip = state.prepare_fix_branch(repo, "main", branch)
    errors: list[BaseException] = []

    def work(run: str) -> None:
        try:
            state.record(repo, branch, tip, failed_next(run), BOT)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"run{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    records = [e for e in state.read_events(repo, branch) if isinstance(e, AttemptRecord)]
    assert sorted(r.run for r in records) == ["run0", "run1", "run2", "run3"]
    assert sorted(r.number for r in records) == [1, 2, 3, 4]


def test_deleting_the_fix_branch_starts_over(repo: Path) -> None:
    branch = "ci-agent/fix/main"
    tip = state.prepare_fix_branch(repo, "main", branch)
    state.record(repo, branch, tip, failed_next("a"), BOT)
    sh(repo, "branch", "-D", branch)
    state.prepare_fix_branch(repo, "main", branch)
    assert state.read_events(repo, branch) == [Reset(ResetReason.HUMAN_COMMIT)]


# --- the verb ---------------------------------------------------------------------------------

def exhaust(repo: Path, n: int = 3) -> None:
    tip = state.prepare_fix_branch(repo, "main", "ci-agent/fix/main")
    for i in range(n):
        state.record(repo, "ci-agent/fix/main", tip, failed_next(f"old{i}"), BOT)


def test_budget_exhausted_exits_3_without_a_model_call(repo: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    exhaust(repo)
    code = fix(repo, "--command", PYTEST, "--verify", PYTEST, "--json", client=no_model)
    assert code == 3
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events] == ["distilled", "budget", "escalated", "done"]
    assert events[1]["exhausted"] is True and events[1]["failures"] == 3
    assert "escalated" in events[-1]["summary"]


def test_max_attempts_flag_raises_the_budget(repo: Path) -> None:
    exhaust(repo, 2)
    assert fix(repo, "--command", PYTEST, "--max-attempts", "2", client=no_model) == 3


def test_retry_starts_a_new_count(repo: Path) -> None:
    exhaust(repo)
    client = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, "--retry", client=lambda: client) == 0


def test_refuses_to_fix_a_ci_agent_branch(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sh(repo, "checkout", "-q", "-b", "ci-agent/fix/main")
    assert main(["fix", "--local", "--repo", str(repo), "--command", PYTEST]) == 2
    assert "never fixes its own fixes" in capsys.readouterr().err


def test_missing_key_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["fix", "--local", "--repo", str(repo), "--command", PYTEST]) == 2
    assert "ANTHROPIC_API_KEY is not set" in capsys.readouterr().err


def test_green_run_is_nothing_to_do_and_resets(repo: Path) -> None:
    exhaust(repo, 2)
    assert fix(repo, "--command", f"{PYTHON} -c pass", client=no_model) == 0
    events = state.read_events(repo, "ci-agent/fix/main")
    assert events[-1] == Reset(ResetReason.GREEN_RUN)


@pytest.fixture
def no_worktrees_left(repo: Path) -> Iterator[None]:
    yield
    listed = sh(repo, "worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 1, listed


def test_worktree_isolation_user_copy_and_index_byte_identical(
        repo: Path, no_worktrees_left: None, capsys: pytest.CaptureFixture[str]) -> None:
    # The user is mid-work: a modified tracked file, a staged new file, an untracked file.
    (repo / "test_calc.py").write_text(TEST + "\n# wip\n")
    (repo / "staged.py").write_text("x = 1\n")
    sh(repo, "add", "staged.py")
    (repo / "notes.txt").write_text("mine\n")
    before = user_state(repo)
    head_before = state.rev(repo, "HEAD")
    client = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, client=lambda: client) == 0
    assert user_state(repo) == before
    assert state.rev(repo, "HEAD") == head_before and state.current_branch(repo) == "main"
    # The fix is a commit on the fix branch with our trailers, on top of main.
    log = sh(repo, "log", "-1", "--format=%B", "ci-agent/fix/main")
    assert "CI-Agent-Attempt: 1" in log and "CI-Agent-Result: passed" in log
    assert sh(repo, "show", "ci-agent/fix/main:calc.py") == RIGHT
    assert sh(repo, "rev-parse", "ci-agent/fix/main^") .strip() == head_before
    summary = capsys.readouterr().out
    assert "fixed and verified" in summary and "add in calc.py subtracted instead of adding" in summary
    assert "```diff" in summary and "Tokens:" in summary


def test_without_verify_the_commit_is_pending(repo: Path, no_worktrees_left: None) -> None:
    client = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, client=lambda: client) == 0
    assert "CI-Agent-Result: pending" in sh(repo, "log", "-1", "--format=%B", "ci-agent/fix/main")


def test_dry_run_prints_the_exact_request_and_its_size_without_a_key(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refs_before = sh(repo, "for-each-ref")
    assert main(["fix", "--local", "--repo", str(repo), "--command", PYTEST, "--dry-run"]) == 0
    captured = capsys.readouterr()
    request = json.loads(captured.out)
    assert {"model", "max_tokens", "system", "messages", "tools"} <= set(request)
    assert validate(request) is None
    assert {t["name"] for t in request["tools"]} >= {"read_file", "search_code", "list_files",
                                                     "submit_patch", "give_up"}
    assert "test_add" in json.dumps(request)  # the distilled pytest failure is in the user turn
    size = len(json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode())
    assert f"the request is {size} bytes" in captured.err
    assert sh(repo, "for-each-ref") == refs_before  # a dry run creates no branch and no record


def test_dry_run_request_is_what_the_first_call_sends(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert fix(repo, "--command", PYTEST, "--dry-run", "--json", client=no_model) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    dry = next(e for e in events if e["event"] == "dry_run")
    client = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, client=lambda: client) == 0
    assert client.requests[0] == dry["request"]
    assert dry["bytes"] == len(json.dumps(dry["request"], ensure_ascii=False, separators=(",", ":")).encode())


def test_failed_verification_rolls_back_records_and_retries_with_what_happened(
        repo: Path, no_worktrees_left: None, capsys: pytest.CaptureFixture[str]) -> None:
    client = ScriptedClient(submit(NOT_FIXING, "multiply instead"), submit(FIXING))
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, "--json", client=lambda: client) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    names = [e["event"] for e in events]
    # issue 16: the failed test is re-run alone once before the model; it still fails (triage);
    # the verified patch is reviewed before it is committed ("reviewed")
    assert names == ["distilled", "triage", "budget", "asked", "applied", "verified", "budget", "asked",
                     "applied", "verified", "reviewed", "committed", "done"]
    assert events[1]["flaky"] is False and events[1]["tests"] == ["test_calc.py::test_add"]
    assert [e["ok"] for e in events if e["event"] == "verified"] == [False, True]
    second = json.dumps(client.conversations[1])
    assert "attempt 2 of 3" in second and "multiply instead" in second and "a * b" in second
    # The same test still fails after `a * b`: that is no progress, and the prompt says so.
    assert "NO PROGRESS" in second and events[6]["no_progress"] is True
    # The failed attempt is on the side ref; the passing one on the fix branch (attempt 2).
    records = [e for e in state.read_events(repo, "ci-agent/fix/main") if isinstance(e, AttemptRecord)]
    assert [(r.number, r.result) for r in records] == [(1, AttemptResult.FAILED), (2, AttemptResult.PASSED)]
    assert sh(repo, "show", "ci-agent/fix/main:calc.py") == RIGHT


def test_three_failed_verifications_escalate_without_a_fourth_call(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = ScriptedClient(*(submit(NOT_FIXING, f"try {i}") for i in range(3)))
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, client=lambda: client) == 3
    assert len(client.conversations) == 3
    out = capsys.readouterr().out
    assert "escalated" in out and "3 of 3" in out
    assert "attempt 1: try 0" in out and "attempt 3: try 2" in out  # read back from the record
    assert sh(repo, "show", "ci-agent/fix/main:calc.py") == WRONG
    # A rerun stays escalated and calls no model.
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, client=no_model) == 3


def test_model_gives_up_exit_4_and_nothing_counted(repo: Path) -> None:
    client = ScriptedClient(message(tool_use("give_up", {"reason": "needs a product decision"}),
                                    stop_reason="tool_use"))
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, client=lambda: client) == 4
    assert assess(state.read_events(repo, "ci-agent/fix/main"), 3).consecutive_failures == 0


def test_a_rejected_patch_goes_back_to_the_model_within_the_attempt(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skip_test = ("--- a/test_calc.py\n+++ b/test_calc.py\n@@ -1,3 +1,5 @@\n+import pytest\n"
                 " from calc import add\n \n+@pytest.mark.skip\n \n")
    client = ScriptedClient(submit(skip_test, "skip it"), submit(FIXING))
    assert fix(repo, "--command", PYTEST, "--verify", PYTEST, "--json", client=lambda: client) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events].count("patch_rejected") == 1
    assert len(client.conversations) == 1 and len(client.requests) == 2


def test_secrets_in_the_environment_never_reach_the_model_or_the_output(
        repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "Zq81x0Vb7r2Pp4-canary"
    monkeypatch.setenv("DEPLOY_TOKEN", secret)
    # The build prints it (it never gets it from its environment, an allow-list; it learned it
    # some other way): the output is redacted before anything is sent or printed.
    code = f"import sys; print('error: token', '{secret[:8]}' + '{secret[8:]}'); sys.exit(1)"
    leaky = f"{PYTHON} -c \"{code}\""
    client = ScriptedClient(message(tool_use("give_up", {"reason": "cannot"}), stop_reason="tool_use"))
    assert fix(repo, "--command", leaky, "--json", client=lambda: client, env=dict(os.environ)) == 4
    assert client.requests and secret not in json.dumps(client.requests)
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err
    assert "REDACTED" in json.dumps(client.requests)


def test_report_files_include_project_stack_frames() -> None:
    from ci_agent.engine.attempt import report_files
    from ci_agent.report import Outcome, Report, ReportFailure, TestCounts

    frames = ("/r/shop/ratings.py:12: in average_rating", '  File "/r/shop/util.py", line 3, in f',
              "/usr/lib/python3.11/json/decoder.py:3: in decode")
    failure = ReportFailure("tests.test_x", Outcome.FAILED, "boom", frames, "tests/test_x.py", 5)
    report = Report((), (), TestCounts(), (failure,), (), 0, 0, "/r")
    assert report_files(report) == ("tests/test_x.py", "shop/ratings.py", "shop/util.py")


def test_model_service_failure_propagates_cleans_up_and_counts_nothing(
        repo: Path, no_worktrees_left: None) -> None:
    """ModelServiceError leaves the engine as it is (main() turns it into exit 5, its one sentence
    on stderr); the worktree is gone and no attempt was counted: nothing was tried."""
    from ci_agent.errors import ExitCode, ModelServiceError

    class Broken:
        def create(self, request: dict[str, Any]) -> dict[str, Any]:
            raise ModelServiceError("The Anthropic API key was rejected (401).")

    with pytest.raises(ModelServiceError) as raised:
        fix(repo, "--command", PYTEST, client=Broken)
    assert raised.value.exit_code == ExitCode.EXTERNAL_SERVICE
    assert assess(state.read_events(repo, "ci-agent/fix/main"), 3).consecutive_failures == 0


def test_keep_worktree_leaves_it_for_inspection(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = ScriptedClient(submit(FIXING))
    assert fix(repo, "--command", PYTEST, "--keep-worktree", client=lambda: client) == 0
    listed = sh(repo, "worktree", "list", "--porcelain")
    kept = [line.split(" ", 1)[1] for line in listed.splitlines() if line.startswith("worktree ")][1:]
    assert len(kept) == 1 and f"Worktree kept at `{kept[0]}`" in capsys.readouterr().out
    assert (Path(kept[0]) / "calc.py").read_text() == RIGHT


def test_a_verify_program_that_cannot_start_stops_before_the_model(repo: Path) -> None:
    """Issue 13 point 2, locally: exit 2 naming the flag or the key, and no model request."""
    from ci_agent.errors import UsageError

    with pytest.raises(UsageError, match=r"--verify cannot run: no-such-verify-ci-agent is not installed"):
        fix(repo, "--command", PYTEST, "--verify", "no-such-verify-ci-agent -q", client=no_model)
    (repo / ".ci-agent.yml").write_text("commands:\n  verify: ./scripts/check.sh\n")
    with pytest.raises(UsageError, match=r"commands.verify of .ci-agent.yml cannot run: "
                                         r"./scripts/check.sh is not a file in the repository"):
        fix(repo, "--command", PYTEST, client=no_model)
    assert state.rev(repo, "refs/heads/ci-agent/fix/main") is None, "nothing committed"
