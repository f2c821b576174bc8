"""`ci-agent fix --local` end to end: real git repos with a bare origin, real pytest / gcc / the
dotnet replay shim, the real Anthropic SDK talking to the loopback fake, scripted model answers.

Each scenario asserts what a user (and the API) would see: exit code, the requests the model got,
the fix branch and its trailers, the attempt record, the events and summary, and a working copy
nobody touched.
"""

from __future__ import annotations

import os
import secrets
import string
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.anthropic_fake import AnthropicFake
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import (
    FIX_BRANCH,
    ROOT_CAUSE,
    SUMMARY,
    assert_clean_finish,
    assert_fixed_on_branch,
    attempt_refs,
    branch_tip,
    fix,
    trailers,
    user_repo,
)
from tests.scenarios.sample_repos import (
    DOTNET,
    DOTNET_LOG,
    PYTHON,
    PYTHON_CANARY,
    C,
    Edit,
    SampleRepo,
    git,
    install_dotnet_shim,
    shim_calls,
    working_copy,
)


def test_pytest_sample_fixed_in_one_attempt(api: AnthropicFake, tmp_path: Path,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    api.reply(model.read_file("shop/ratings.py"),
              model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    first, second = api.message_requests
    report = model.first_user_text(first)
    assert "test_no_ratings_yet" in report and "test_stars_of_a_new_product" in report
    assert "shop/ratings.py" in report  # the frame where ZeroDivisionError is raised
    assert {t["name"] for t in first["tools"]} >= {"read_file", "search_code", "list_files",
                                                   "submit_patch", "give_up"}
    assert any(block.get("cache_control") for block in first["system"]), "the system block is cached"
    (answer,) = model.tool_results(second)
    (call,) = model.tool_calls(second)
    assert answer["tool_use_id"] == call["id"] and not answer.get("is_error")
    assert "def average_rating" in model.result_text(answer)
    tip = assert_fixed_on_branch(repo, attempt=1)
    assert run.names()[0] == "distilled" and run.names()[-1] == "done"
    assert {"asked", "applied", "verified", "committed"} <= set(run.names())
    assert all(e["ok"] for e in run.of("verified"))
    assert run.of("committed")[0]["commit"] == tip
    assert trailers(repo, tip)["CI-Agent-Failure"] == [run.of("distilled")[0]["fingerprint"]]
    assert "shop/ratings.py" in run.summary and "ZeroDivisionError" in run.summary
    assert ROOT_CAUSE in run.summary
    # tokens of both model calls are added up
    assert str(2 * model.USAGE["input_tokens"]) in run.summary
    assert_clean_finish(repo, before)


def test_pytest_sample_fixed_after_one_repair(api: AnthropicFake, tmp_path: Path,
                                              capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    wrong = repo.diff(PYTHON.wrong["floor"])
    api.reply(model.submit_patch(wrong, summary="Avoid dividing by zero.", root_cause=ROOT_CAUSE),
              model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    first, second = api.message_requests
    assert model.is_new_conversation(second), "a repair is a new attempt, with a fresh prompt"
    assert first["system"] == second["system"], "the cached system block is the same every attempt"
    retry = model.first_user_text(second)
    # it says what the previous attempt changed and how that failed
    assert "// max(len(ratings), 1)" in retry
    assert "test_average_of_several_ratings" in retry
    assert [e["ok"] for e in run.of("verified")] == [False, True]
    assert_fixed_on_branch(repo, attempt=2)
    # the failed attempt is durable state beside the branch, not a commit on it
    (record,) = [ref for ref in attempt_refs(repo) if ref.endswith(FIX_BRANCH)]
    failed = trailers(repo, record)
    assert failed["CI-Agent-Attempt"] == ["1"] and failed["CI-Agent-Result"] == ["failed"], failed
    assert failed["CI-Agent-Failure"] == [run.of("distilled")[0]["fingerprint"]], failed
    assert_clean_finish(repo, before)


def test_a_patch_to_a_file_in_the_failing_stack_needs_no_extra_reason(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """DESIGN.md §4.5: only a patch touching no file named in the report *or its stack frames*
    needs a stated reason. pytest's frames name shop/ratings.py, where ZeroDivisionError is raised;
    a root cause that does not repeat the path is a normal answer and must be accepted."""
    repo = user_repo(tmp_path, PYTHON)
    api.reply(model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY,
                                 root_cause="average_rating divides by zero for a product without ratings."))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    assert len(api.message_requests) == 1, model.tool_results(api.message_requests[-1])
    assert_fixed_on_branch(repo, attempt=1)


def test_three_failures_escalate_and_the_next_run_asks_nobody(api: AnthropicFake, tmp_path: Path,
                                                              capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    api.reply(*(model.submit_patch(repo.diff(PYTHON.wrong[name]), summary="Guard the division.",
                                   root_cause=ROOT_CAUSE) for name in ("floor", "floor_float", "none")))

    run = fix(repo, capfd)

    assert run.exit_code == 3, str(run)
    assert len(api.message_requests) == 3
    assert [e["ok"] for e in run.of("verified")] == [False, False, False]
    assert run.of("escalated")
    # attempts 1 and 2 left the same tests failing: the third prompt says so
    assert "no progress" in model.first_user_text(api.message_requests[2]).lower()
    assert branch_tip(repo, FIX_BRANCH) in (None, git(repo.path, "rev-parse", "main").strip())
    # the escalation says what each attempt changed
    for name in ("floor", "floor_float", "none"):
        assert PYTHON.wrong[name].new.strip() in run.summary, name

    again = fix(repo, capfd, label="rerun")

    assert again.exit_code == 3, str(again)
    assert len(api.message_requests) == 3, "a fourth attempt must not reach the model"
    assert again.of("escalated") and not again.of("asked")
    assert_clean_finish(repo, before)


def test_model_gives_up(api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    reason = "The expected rating of a product without ratings is a product decision; ask the team."
    api.reply(model.read_file("shop/ratings.py"), model.give_up(reason))

    run = fix(repo, capfd)

    assert run.exit_code == 4, str(run)
    assert len(api.message_requests) == 2
    assert run.of("gave_up") and not run.of("applied") and not run.of("committed")
    assert branch_tip(repo, FIX_BRANCH) in (None, git(repo.path, "rev-parse", "main").strip())
    assert "product decision" in run.summary
    assert_clean_finish(repo, before)


def _stale(repo: SampleRepo) -> str:
    """The right change, written against a file the model misremembered: git apply refuses it."""
    return repo.diff(PYTHON.fix).replace("Mean star rating;", "Average star rating;")


REJECTED: dict[str, tuple[str, Callable[[SampleRepo], str]]] = {
    # CI configuration is denied by policy
    "workflow": (".github/workflows/ci.yml", lambda repo: repo.diff(Edit(
        ".github/workflows/ci.yml", "      - run: python -m pytest -q\n",
        "      - run: python -m pytest -q || true\n"))),
    # skipping the failing test is a fake fix
    "skip": ("skip", lambda repo: repo.diff(Edit(
        "tests/test_ratings.py", "def test_no_ratings_yet() -> None:\n",
        "@pytest.mark.skip(reason=\"flaky\")\ndef test_no_ratings_yet() -> None:\n"))),
    # context lines that are not in the file
    "stale": ("git apply", _stale),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected_patch_goes_back_to_the_model_in_the_same_attempt(
        api: AnthropicFake, tmp_path: Path, capfd: pytest.CaptureFixture[str], case: str) -> None:
    words, bad_patch = REJECTED[case]
    repo = user_repo(tmp_path, PYTHON)
    before = working_copy(repo.path)
    api.reply(model.submit_patch(bad_patch(repo), summary="Make CI green.",
                                 root_cause=ROOT_CAUSE),
              model.submit_patch(repo.diff(PYTHON.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    _, second = api.message_requests
    assert not model.is_new_conversation(second), "the rejection belongs to the same attempt"
    (rejection,) = model.tool_results(second)
    assert rejection.get("is_error") is True
    assert words in model.result_text(rejection)
    assert run.of("patch_rejected")
    assert_fixed_on_branch(repo, attempt=1)
    assert_clean_finish(repo, before)


def test_c_program_fixed_in_one_attempt(api: AnthropicFake, tmp_path: Path,
                                        capfd: pytest.CaptureFixture[str]) -> None:
    repo = user_repo(tmp_path, C)
    before = working_copy(repo.path)
    api.reply(model.submit_patch(repo.diff(C.fix), summary="Return the accumulator.",
                                 root_cause="src/stats.c returns `totl`, a typo for `total`."))

    run = fix(repo, capfd)

    assert run.exit_code == 0, str(run)
    (request,) = api.message_requests
    report = model.first_user_text(request)
    assert "src/stats.c" in report and "totl" in report
    assert_fixed_on_branch(repo, attempt=1)
    assert_clean_finish(repo, before)


@pytest.mark.parametrize("source", ["command", "build-log"])
def test_dotnet_replay_fixed_in_one_attempt(api: AnthropicFake, tmp_path: Path, reachable_tmp: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capfd: pytest.CaptureFixture[str], source: str) -> None:
    """`dotnet build` run by ci-agent, or its log downloaded from CI (`--build-log`)."""
    calls = install_dotnet_shim(reachable_tmp / "bin")
    monkeypatch.setenv("PATH", f"{reachable_tmp / 'bin'}{os.pathsep}{os.environ['PATH']}")
    repo = user_repo(tmp_path, DOTNET)
    before = working_copy(repo.path)
    api.reply(model.submit_patch(
        repo.diff(DOTNET.fix), summary="Await the refresh.",
        root_cause="The Refresh handler in MetricsGrid.razor calls LoadMetricsAsync without await "
                   "(CS4014, an error here because the project treats it as one)."))

    if source == "command":
        run = fix(repo, capfd)
    else:
        log = tmp_path / "downloaded-build.log"
        log.write_bytes(DOTNET_LOG.read_bytes())
        run = fix(repo, capfd, "--build-log", str(log), "--verify", DOTNET.verify, commands=False)

    assert run.exit_code == 0, str(run)
    (request,) = api.message_requests
    report = model.first_user_text(request)
    assert "CS4014" in report and DOTNET.fix.path in report
    assert_fixed_on_branch(repo, attempt=1)
    ran = shim_calls(calls)
    assert len(ran) == (2 if source == "command" else 1), "the build (unless given), then the verify"
    assert all(call["cwd"] != str(repo.path) for call in ran), "builds run in the worktree only"
    assert_clean_finish(repo, before)


@pytest.mark.parametrize("output", ["json", "plain"])
def test_canary_secret_never_leaves(api: AnthropicFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capfd: pytest.CaptureFixture[str], output: str) -> None:
    """A secret in the environment, the build log and a source file reaches nobody: not the API,
    not the summary, not the JSON events (or the human progress lines), not the commit."""
    suffix = secrets.token_hex(8)
    canary = f"ci-agent-canary-{suffix}"
    monkeypatch.setenv("CANARY_TOKEN", canary)
    repo = user_repo(tmp_path, PYTHON_CANARY, {"CANARY": canary})
    assert canary in (repo.path / "shop" / "settings.py").read_text()
    # A second secret, in no environment variable: only its shape (a GitHub token) gives it away.
    # It arrives in the latest commit, whose diff is context the model is sent.
    shaped = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
    settings = repo.path / "shop" / "settings.py"
    settings.write_text(settings.read_text() + f"# deploy bot token: ghp_{shaped}\n")
    repo.git("commit", "-q", "-m", "settings: note the deploy token", "--", "shop/settings.py")
    api.reply(model.read_file("shop/settings.py"),
              model.submit_patch(repo.diff(PYTHON_CANARY.fix), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = fix(repo, capfd, plain=output == "plain")

    assert run.exit_code == 0, str(run)
    assert len(api.message_requests) == 2
    # the failure that carried the secret did reach the model (redacted), and so did the file
    report = model.first_user_text(api.message_requests[0])
    assert "test_reviews_summary_for_the_service" in report
    assert "[REDACTED" in report, "the failure message carried the canary: it must arrive redacted"
    assert "deploy bot token" in report, "the failing commit's diff is context"
    (answer,) = model.tool_results(api.message_requests[1])
    assert "REVIEWS_TOKEN" in model.result_text(answer)
    assert "[REDACTED" in model.result_text(answer)
    tip = branch_tip(repo, FIX_BRANCH)
    assert tip is not None
    if output == "plain":  # the summary on stdout, human progress lines on stderr
        assert "shop/ratings.py" in run.summary and run.stderr.strip()
    else:
        assert run.events and "shop/ratings.py" in run.summary
    places = {
        **{f"request {i}": str(r.body) + str(r.headers) for i, r in enumerate(api.requests)},
        "summary": run.summary, "stdout (events or summary)": run.stdout, "stderr": run.stderr,
        "fix commit": git(repo.path, "log", "-1", "--format=%B", tip),
    }
    leaks = [(where, secret) for where, text in places.items() for secret in (suffix, shaped)
             if secret in text]
    assert leaks == [], f"a canary leaked into {leaks}"
