"""The infrastructure verdict on real logs (tests/fixtures/infra/PROVENANCE.md says how each was
made) and on every compiler and test fixture we hold, which must classify as None."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.distill import distill, resolve_roots
from ci_agent.inputs import read_inputs
from ci_agent.report import (
    Outcome,
    Report,
    ReportDiagnostic,
    ReportFailure,
    RunError,
    Severity,
    TestCounts,
)
from ci_agent.triage import Verdict
from ci_agent.triage.infra import JobOutcome, classify
from ci_agent.triage.infra_scan import MAX_HITS_PER_LOG, scan_log
from tests.conftest import LOCAL_FIXTURES, SHARED_FIXTURES

INFRA = LOCAL_FIXTURES / "infra"


def report_of(*paths: Path, repo_root: str | None = None) -> Report:
    inputs = read_inputs([str(p) for p in paths], None, False)
    return distill(inputs, repo_root, resolve_roots(inputs, repo_root, None))


def verdict_of(*paths: Path, jobs: tuple[JobOutcome, ...] = ()) -> Verdict | None:
    return classify(report_of(*paths), list(paths), jobs)


EMPTY = Report(sources=(), diagnostics=(), counts=TestCounts(), failures=(), run_errors=(), input_bytes=0,
               printed_diagnostics=0)


def with_items(diagnostics: tuple[ReportDiagnostic, ...] = (), failures: tuple[ReportFailure, ...] = (),
               run_errors: tuple[RunError, ...] = (), counts: TestCounts | None = None) -> Report:
    return Report(sources=(), diagnostics=diagnostics, counts=counts or TestCounts(), failures=failures,
                  run_errors=run_errors, input_bytes=0, printed_diagnostics=0)


def error(message: str, file: str | None = "src/app.py", in_repo: bool = True,
          code: str | None = None) -> ReportDiagnostic:
    return ReportDiagnostic(Severity.ERROR, file, 3, 1, code, message, None, None, in_repo)


def failed_test(message: str | None, name: str = "tests/test_api.py::test_fetch") -> ReportFailure:
    return ReportFailure(name, Outcome.FAILED, message, (), None, None)


def write_log(tmp_path: Path, text: str, name: str = "job.log") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- real tool output: each is an infrastructure failure ---------------------------------------

@pytest.mark.parametrize(("name", "evidence"), [
    ("pip-refused.log", "Connection refused"),
    ("pip-dns.log", "Name or service not known"),
    ("npm-refused.log", "ECONNREFUSED"),
    ("npm-dns.log", "ENOTFOUND"),
    ("go-refused.log", "connection refused"),
    ("go-dns.log", "no such host"),
    ("cargo-refused.log", "Could not connect to server"),
    ("cargo-dns.log", "Could not resolve host"),
    ("sigkill.log", "Killed"),
    ("enospc-dd.log", "No space left on device"),
    ("enospc-python.log", "No space left on device"),
    ("node-heap-oom.log", "JavaScript heap out of memory"),
    ("go-runtime-oom.log", "out of memory"),
])
def test_real_environment_failures_get_the_infrastructure_verdict(name: str, evidence: str) -> None:
    verdict = verdict_of(INFRA / name)
    assert verdict is not None, name
    assert verdict.kind == "infrastructure"
    assert verdict.reason.startswith("Not a code failure: ")
    assert 1 <= len(verdict.evidence) <= 3
    assert any(evidence in line for line in verdict.evidence), verdict.evidence
    assert all(len(line) <= 200 for line in verdict.evidence)


def test_the_go_build_error_in_a_repo_file_is_explained_by_its_own_message() -> None:
    """`go build` reports the unreachable proxy at main.go:3:8, a repository file: its message
    (`dial tcp ... connection refused`) is the signal, so it is no code failure."""
    report = report_of(INFRA / "go-refused.log")
    assert [d.file for d in report.diagnostics if d.severity is Severity.ERROR] == ["main.go"]
    verdict = classify(report, [])  # the report alone carries the signal
    assert verdict is not None and "network" in verdict.reason


# --- every compiler/test fixture we hold is a code failure: no verdict --------------------------

def _code_fixtures() -> list[Path]:
    local = [p for folder in ("compilers", "dotnet_test", "pytest_console", "junit")
             for p in sorted((LOCAL_FIXTURES / folder).rglob("*")) if p.is_file()
             and p.name not in ("PROVENANCE.md", "regenerate.sh") and p.suffix not in (".py", ".json", ".c",
                                                                                        ".rs", ".go", ".ts")]
    shared = [p for p in sorted(SHARED_FIXTURES.rglob("*")) if p.is_file()
              and p.suffix not in (".json", ".md", ".annotations", ".results") and p.name != "LICENSE"]
    return local + shared


def test_every_code_failure_fixture_classifies_as_none() -> None:
    fixtures = _code_fixtures()
    assert len(fixtures) > 60
    verdicts = {str(p): verdict_of(p) for p in fixtures}
    assert {path: v for path, v in verdicts.items() if v is not None} == {}


@pytest.mark.parametrize("name", ["dotnet-logs/nuget-restore-nu1605-warnaserror.log",
                                  "dotnet-logs/utf16-restore-failed-no-errors.log"])
def test_nuget_restore_failures_that_are_not_the_feed_get_no_verdict(name: str) -> None:
    """NU1301 "The local source ... doesn't exist" is a NuGet.config naming a folder (the repo's
    to fix), NU1605 a package downgrade; a restore that failed without an error says nothing."""
    assert verdict_of(SHARED_FIXTURES / name) is None


# --- the rule, branch by branch -----------------------------------------------------------------

def test_no_signal_no_verdict(tmp_path: Path) -> None:
    log = write_log(tmp_path, "Build FAILED.\nsomething went wrong\n")
    assert classify(EMPTY, [log]) is None
    assert classify(EMPTY, []) is None


def test_a_code_error_in_a_repo_file_blocks_the_verdict(tmp_path: Path) -> None:
    log = write_log(tmp_path, "npm error code ETIMEDOUT\n")
    assert classify(EMPTY, [log]) is not None
    assert classify(with_items(diagnostics=(error("name 'x' is not defined"),)), [log]) is None


def test_a_tools_complaint_in_no_file_does_not_block() -> None:
    """npm's error object is read as file-less diagnostics (`code: 'ECONNREFUSED',`): the tool
    speaking, not a compiler pointing at the code."""
    report = report_of(INFRA / "npm-refused.log")
    assert report.diagnostics and all(d.file is None for d in report.diagnostics)
    assert classify(report, [INFRA / "npm-refused.log"]) is not None
    assert classify(with_items(diagnostics=(error("no Main", file=None),)), []) is None  # no signal


def test_an_error_in_a_toolchain_file_is_not_code(tmp_path: Path) -> None:
    log = write_log(tmp_path, "npm error code ETIMEDOUT\n")
    targets = "/usr/share/dotnet/sdk/8.0.100/Sdks/Microsoft.NET.Sdk/targets/Microsoft.NET.Sdk.targets"
    sdk = error("The command exited badly", file=targets, in_repo=False)
    assert classify(with_items(diagnostics=(sdk,)), [log]) is not None


def test_an_unplaced_absolute_path_counts_as_code(tmp_path: Path) -> None:
    log = write_log(tmp_path, "npm error code ETIMEDOUT\n")
    elsewhere = error("';' expected", file="/home/runner/work/app/src/A.cs", in_repo=False, code="CS1002")
    assert classify(with_items(diagnostics=(elsewhere,)), [log]) is None


def test_warnings_never_block(tmp_path: Path) -> None:
    log = write_log(tmp_path, "npm error code ETIMEDOUT\n")
    warning = ReportDiagnostic(Severity.WARNING, "src/a.py", 1, 1, None, "unused import", None, None, True)
    assert classify(with_items(diagnostics=(warning,)), [log]) is not None


def test_a_consequence_is_explained_only_by_a_signal(tmp_path: Path) -> None:
    missing = error("Unable to find package Newtonsoft.Jsonn. No packages exist with this id in source(s): "
                    "nuget.org", file="src/App/App.csproj", code="NU1101")
    assert classify(with_items(diagnostics=(missing,)), []) is None  # a typo prints the same
    feed_down = write_log(tmp_path, "/src/App/App.csproj : error NU1301: Unable to load the service index "
                                    "for source https://api.nuget.org/v3/index.json.\n")
    verdict = classify(with_items(diagnostics=(missing,)), [feed_down])
    assert verdict is not None and "feed" in verdict.reason


def test_a_failed_test_with_a_code_message_blocks_even_if_the_log_has_a_signal(tmp_path: Path) -> None:
    log = write_log(tmp_path, "E   urllib3.exceptions: Temporary failure in name resolution\n")
    assert classify(with_items(failures=(failed_test("AssertionError: assert 2 == 3"),)), [log]) is None
    assert classify(with_items(failures=(failed_test(None),)), [log]) is None


def test_failed_tests_all_explained_by_their_own_messages_get_the_verdict() -> None:
    both = (failed_test("ConnectionError: Could not resolve host: api.example.com"),
            failed_test("socket.gaierror: [Errno -3] Temporary failure in name resolution", name="t2"))
    verdict = classify(with_items(failures=both), [])
    assert verdict is not None and verdict.kind == "infrastructure"
    one_real = (*both, failed_test("assert response.status == 200", name="t3"))
    assert classify(with_items(failures=one_real), []) is None


def test_an_operation_canceled_exception_in_a_test_is_not_a_cancelled_job() -> None:
    canceled = failed_test("System.OperationCanceledException : The operation was canceled.")
    assert classify(with_items(failures=(canceled,)), []) is None


def test_failed_tests_counted_but_not_listed_block() -> None:
    jobs = (JobOutcome("test", "cancelled"),)
    assert classify(with_items(counts=TestCounts(3, 2, 1, 0)), [], jobs) is None
    assert classify(with_items(counts=TestCounts(3, 3, 0, 0)), [], jobs) is not None


def test_a_crashed_test_run_is_explained_only_by_a_resource_signal(tmp_path: Path) -> None:
    crashed = (RunError("test.log", "The active test run was aborted. Reason: Test host process crashed"),)
    resolver = write_log(tmp_path, "curl: (6) Could not resolve host: example.com\n", "net.log")
    assert classify(with_items(run_errors=crashed), [resolver]) is None
    killed = write_log(tmp_path, "bash: line 1:  4242 Killed                  dotnet test\n", "oom.log")
    verdict = classify(with_items(run_errors=crashed), [killed])
    assert verdict is not None and "memory" in verdict.reason


def test_the_readers_notes_about_an_input_are_not_failures(tmp_path: Path) -> None:
    log = write_log(tmp_path, "npm error code EAI_AGAIN\n")
    notes = (RunError(str(log), "not a format ci-agent reads (no build log, test log or result file found)"),)
    assert classify(with_items(run_errors=notes), [log]) is not None


# --- job facts ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("job", "word"), [
    (JobOutcome("build", "cancelled"), "cancelled"),
    (JobOutcome("build", "timed_out"), "time"),
    (JobOutcome("build", "canceled"), "cancelled"),
    (JobOutcome("build", "failed", "runner_system_failure"), "runner"),
    (JobOutcome("build", "failed", "stuck_or_timeout_failure"), "time"),
    (JobOutcome("build", "failed", "scheduler_failure"), "runner"),
    (JobOutcome("build", "failed", "api_failure"), "runner"),
    (JobOutcome("build", "failed", "data_integrity_failure"), "runner"),
    (JobOutcome("build", "failed", "runner_unsupported"), "runner"),
])
def test_job_outcomes_that_are_infrastructure(job: JobOutcome, word: str) -> None:
    verdict = classify(EMPTY, [], (job,))
    assert verdict is not None and word in verdict.reason
    assert verdict.evidence[0].startswith("job 'build': ")


@pytest.mark.parametrize("job", [JobOutcome("build", "failure"),
                                 JobOutcome("build", "failed", "script_failure"),
                                 JobOutcome("build", "failed", "unknown_failure"),
                                 JobOutcome("build", "failed")])
def test_job_outcomes_that_are_not(job: JobOutcome) -> None:
    assert classify(EMPTY, [], (job,)) is None


def test_job_outcomes_count_only_when_every_failed_job_has_one(tmp_path: Path) -> None:
    """A fail-fast matrix: `linux` failed, so GitHub cancelled `windows`; the cancellation is
    the consequence, not the cause."""
    matrix = (JobOutcome("test (linux)", "failure"), JobOutcome("test (windows)", "cancelled"))
    assert classify(EMPTY, [], matrix) is None
    both = (JobOutcome("test (linux)", "timed_out"), JobOutcome("deploy", "failed", "runner_system_failure"))
    verdict = classify(EMPTY, [], both)
    assert verdict is not None
    assert verdict.evidence == ("job 'deploy': failure reason runner_system_failure",
                                "job 'test (linux)': timed_out")
    # the failed job's own log can still tell: it was killed
    killed = write_log(tmp_path, "bash: line 1:  4242 Killed                  pytest\n")
    assert classify(EMPTY, [killed], matrix) is not None


def test_a_cancelled_job_with_a_real_test_failure_gets_no_verdict() -> None:
    report = with_items(failures=(failed_test("Expected: 3 But was: 2"),))
    assert classify(report, [], (JobOutcome("test", "cancelled"),)) is None


# --- hostile input: bounded time and memory, no crash --------------------------------------------

def test_hostile_bytes_do_not_crash_and_signals_are_still_read(tmp_path: Path) -> None:
    log = tmp_path / "hostile.log"
    log.write_bytes(b"\xfa\xff\xfe invalid utf-8 \x00\x00 NULs\r\n"
                    + b"A" * (300 * 1024) + b"\r\n"  # one line longer than the reader's cut
                    + b"\x1b[31mnpm error code ECONNRESET\x1b[0m\r\n"
                    + b"2026-01-01T00:00:00.0000000Z ##[error]The operation was canceled.\r\n")
    verdict = classify(EMPTY, [log])
    assert verdict is not None
    assert verdict.reason.startswith("Not a code failure: the job was cancelled")
    assert "hostile.log: npm error code ECONNRESET" in verdict.evidence


def test_utf16_logs_are_read(tmp_path: Path) -> None:
    log = tmp_path / "restore.log"
    log.write_bytes("\ufeffApp.csproj : error NU1301: Unable to load the service index for source "
                    "https://api.nuget.org/v3/index.json.\r\n".encode("utf-16-le"))
    verdict = classify(EMPTY, [log])
    assert verdict is not None and "feed" in verdict.reason


def test_evidence_is_bounded_and_printable(tmp_path: Path) -> None:
    log = write_log(tmp_path, "x" * 5000 + " curl: (6) Could not resolve host: " + "h" * 5000 + "\x07\n")
    verdict = classify(EMPTY, [log])
    assert verdict is not None
    (line,) = verdict.evidence
    assert len(line) <= 200 and line.isprintable()
    assert "Could not resolve host" in line, "the cut keeps the signal in view"


def test_a_big_log_is_read_at_its_head_and_tail_only(tmp_path: Path) -> None:
    """The cap keeps time bounded: a signal in the middle of a log over the cap is not seen, one
    at its end (where a killed job stops) or its start (a restore) is."""
    filler = b"building something ordinary\n" * 40_000  # ~1.1 MB
    end = tmp_path / "end.log"
    end.write_bytes(filler + b"No space left on device\n")
    start = tmp_path / "start.log"
    start.write_bytes(b"No space left on device\n" + filler)
    middle = tmp_path / "middle.log"
    middle.write_bytes(filler + b"No space left on device\n" + filler)
    cap = 256 * 1024
    assert [h.category for h in scan_log(end, cap)] == ["disk"]
    assert [h.category for h in scan_log(start, cap)] == ["disk"]
    assert scan_log(middle, cap) == []
    assert [h.category for h in scan_log(middle, 4 << 20)] == ["disk"]


def test_a_big_utf16_log_keeps_its_code_units_aligned(tmp_path: Path) -> None:
    text = "\ufeff" + "x" * 99_999 + "\r\n" + "ordinary line\r\n" * 20_000 + "No space left on device\r\n"
    log = tmp_path / "big16.log"
    log.write_bytes(text.encode("utf-16-le") + b"\x00")  # an odd size: the tail starts on a unit
    assert [h.category for h in scan_log(log, 200_001)] == ["disk"]


def test_many_signal_lines_stop_the_scan_early(tmp_path: Path) -> None:
    log = write_log(tmp_path, "npm error code ETIMEDOUT\n" * 100_000)
    assert len(scan_log(log)) == MAX_HITS_PER_LOG


def test_an_unreadable_log_has_no_signal(tmp_path: Path) -> None:
    assert classify(EMPTY, [tmp_path / "missing.log", tmp_path]) is None
