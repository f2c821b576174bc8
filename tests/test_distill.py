"""distill(): merge, normalise, deduplicate, order; on hand-built ParseResults and real logs."""

from __future__ import annotations

import json

import pytest

from ci_agent.distill import Input, distill, qualified_name, resolve_root
from ci_agent.parsers import parse_path
from ci_agent.report import (
    Diagnostic,
    Outcome,
    ParseResult,
    RunError,
    Severity,
    SourceInfo,
    TestCase,
    TestCounts,
)
from tests.conftest import shared_fixture


def _input(result: ParseResult, path: str = "build.log", size: int = 100) -> Input:
    return Input(SourceInfo(path, result.format, size), result)


def _err(message: str, file: str | None, line: int | None = 1, project: str | None = None,
         severity: Severity = Severity.ERROR, code: str | None = "CS0103") -> Diagnostic:
    return Diagnostic(severity, message, file=file, line=line, column=5, code=code, project=project)


def test_dedupe_happens_after_path_normalisation() -> None:
    # The same error printed with an absolute path by one log and a project-relative one by another.
    project = r"C:\r\src\App\App.csproj"
    a = ParseResult("msbuild", diagnostics=[_err("boom", r"C:\r\src\App\A.cs", project=project)],
                    printed_diagnostics=2)
    b = ParseResult("msbuild", diagnostics=[_err("boom", r"A.cs", project=project)], printed_diagnostics=1)
    report = distill([_input(a), _input(b, "other.log")], "C:\\r")
    assert len(report.diagnostics) == 1
    only = report.diagnostics[0]
    assert (only.file, only.in_repo, only.count) == ("src/App/A.cs", True, 2)
    assert only.project == "src/App/App.csproj"
    assert report.printed_diagnostics == 3
    assert report.input_bytes == 200


def test_project_marker_is_not_part_of_the_key() -> None:
    result = ParseResult("msbuild", diagnostics=[
        _err("same", "/r/src/Shared.cs", project="/r/src/A/A.csproj"),
        _err("same", "/r/src/Shared.cs", project="/r/src/B/B.csproj::TargetFramework=net8.0"),
    ])
    report = distill([_input(result)], "/r")
    assert len(report.diagnostics) == 1
    assert report.diagnostics[0].project == "src/A/A.csproj"  # the first one seen


def test_windows_paths_differing_in_case_fold_together() -> None:
    result = ParseResult("msbuild", diagnostics=[
        _err("x", r"C:\Repo\Src\A.cs"), _err("x", r"c:\repo\src\a.cs"),
    ])
    report = distill([_input(result)], "C:\\Repo")
    # Windows file systems are case-insensitive: one file, reported as first printed.
    assert [(d.file, d.count) for d in report.diagnostics] == [("Src/A.cs", 2)]


def test_posix_paths_differing_in_case_stay_apart() -> None:
    result = ParseResult("gcc", diagnostics=[_err("x", "/r/Src/a.c"), _err("x", "/r/src/a.c")])
    assert len(distill([_input(result)], "/r").diagnostics) == 2


def test_errors_first_then_warnings_then_infos_in_order_of_first_appearance() -> None:
    result = ParseResult("msbuild", diagnostics=[
        _err("w1", "/r/a.cs", severity=Severity.WARNING),
        _err("e1", "/r/a.cs", line=2),
        _err("i1", "/r/a.cs", severity=Severity.INFO),
        _err("e2", "/r/b.cs"),
        _err("w2", "/r/b.cs", severity=Severity.WARNING),
    ])
    report = distill([_input(result)], "/r")
    assert [d.message for d in report.diagnostics] == ["e1", "e2", "w1", "w2", "i1"]


def test_sdk_targets_stay_as_printed_and_out_of_the_repo() -> None:
    targets = r"C:\Program Files\dotnet\sdk\8.0.100\Microsoft.Common.CurrentVersion.targets"
    result = ParseResult("msbuild", diagnostics=[
        _err("MSB3027: could not copy", targets, line=5381, project=r"C:\r\App\App.csproj", code="MSB3027"),
    ])
    d = distill([_input(result)], "C:\\r").diagnostics[0]
    assert (d.file, d.in_repo, d.project) == (targets, False, "App/App.csproj")


def test_tool_origin_without_file() -> None:
    diag = Diagnostic(Severity.ERROR, "Only one project file", code="MSB1011", origin="MSBUILD")
    d = distill([_input(ParseResult("msbuild", diagnostics=[diag]))], None).diagnostics[0]
    assert (d.file, d.origin, d.in_repo) == (None, "MSBUILD", False)


def test_counts_are_summed_and_run_errors_kept() -> None:
    failing = TestCase("Ns.T.A", Outcome.FAILED, message="nope")
    a = ParseResult("trx", failures=[failing], counts=TestCounts(10, 8, 1, 1),
                    run_errors=[RunError("a.trx", "test host crashed")])
    b = ParseResult("junit", counts=TestCounts(5, 5, 0, 0))
    report = distill([_input(a, "a.trx"), _input(b, "b.xml")], None)
    assert report.counts == TestCounts(15, 13, 1, 1)
    assert report.run_errors == (RunError("a.trx", "test host crashed"),)
    assert [f.name for f in report.failures] == ["Ns.T.A"]
    assert report.failures[0].source == "a.trx"


def test_console_test_output_counts_only_without_a_result_file() -> None:
    """`dotnet test` console + its TRX (or pytest + its JUnit) are one run told twice: the result
    file wins; the console's run errors and build diagnostics are still kept."""
    trx = ParseResult("trx", failures=[TestCase("Ns.T.A", Outcome.FAILED, message="nope")],
                      counts=TestCounts(10, 9, 1, 0))
    again = TestCase("Ns.T.A", Outcome.FAILED, message="nope ")
    console = ParseResult("msbuild+dotnet_test", failures=[again],
                          counts=TestCounts(10, 9, 1, 0), run_errors=[RunError("c.log", "host crashed")],
                          diagnostics=[_err("boom", "/r/A.cs")])
    both = distill([_input(console, "c.log"), _input(trx, "a.trx")], "/r")
    assert both.counts == TestCounts(10, 9, 1, 0)
    assert [f.source for f in both.failures] == ["a.trx"]
    assert both.run_errors == (RunError("c.log", "host crashed"),)
    assert len(both.diagnostics) == 1
    # Without a result file the console is all there is: a failure without a summary still counts.
    alone = ParseResult("dotnet_test", failures=[TestCase("Ns.T.B", Outcome.TIMEOUT)])
    report = distill([_input(alone, "c.log")], None)
    assert report.counts == TestCounts(1, 0, 1, 0)
    assert [f.name for f in report.failures] == ["Ns.T.B"]


def test_failure_file_and_line_come_from_the_first_project_frame() -> None:
    stack = "\n".join([
        "   at Xunit.Assert.Equal[T](T expected, T actual) in /_/src/xunit.assert/Equality.cs:line 9",
        r"   at Ns.Calc.Add(Int32 a) in C:\r\src\Calc.cs:line 12",
        r"   at Ns.Tests.CalcTests.Adds() in C:\r\tests\CalcTests.cs:line 19",
    ])
    case = TestCase("Adds", Outcome.FAILED, classname="Ns.Tests.CalcTests", message="Assert.Equal() Failure",
                    stack=stack)
    failure = distill([_input(ParseResult("trx", failures=[case]), "t.trx")], "C:\\r").failures[0]
    assert failure.name == "Ns.Tests.CalcTests.Adds"
    assert (failure.file, failure.line) == ("src/Calc.cs", 12)
    assert failure.frames == (
        "at Ns.Calc.Add(Int32 a) in src/Calc.cs:line 12",
        "at Ns.Tests.CalcTests.Adds() in tests/CalcTests.cs:line 19",
    )


def test_identical_failures_from_two_inputs_are_reported_once() -> None:
    case = TestCase("Ns.T.A", Outcome.FAILED, message="m")
    report = distill([_input(ParseResult("trx", failures=[case]), "1.trx"),
                      _input(ParseResult("trx", failures=[case]), "2.trx")], None)
    assert len(report.failures) == 1


def test_qualified_name() -> None:
    assert qualified_name(TestCase("M", Outcome.FAILED, classname="Ns.C")) == "Ns.C.M"
    assert qualified_name(TestCase("Ns.C.M(x: 1)", Outcome.FAILED, classname="Ns.C")) == "Ns.C.M(x: 1)"
    assert qualified_name(TestCase("M(a.b)", Outcome.FAILED, classname="Ns.C")) == "Ns.C.M(a.b)"


# --------------------------------------------------------------------------- real logs

def _expected_keys(expected: dict[str, list[dict[str, object]]], root: str) -> set[tuple[object, ...]]:
    from ci_agent.paths import RepoPaths

    keys = set()
    for severity, items in (("error", expected["errors"]), ("warning", expected["warnings"])):
        for item in items:
            file = item["file"]
            rel = RepoPaths(root).locate(str(file)).path if file else None
            keys.add((severity, rel, item["line"], item["column"], item["code"], item["message"]))
    return keys


def test_cs_errors_multi_win_gives_the_expected_unique_diagnostics() -> None:
    log = shared_fixture("dotnet-logs/cs-errors-multi-win.log")
    expected = json.loads(log.with_name(log.name + ".expected.json").read_text())
    result = parse_path(log)
    inputs = [_input(result, str(log), log.stat().st_size)]
    root = resolve_root(inputs, None, None)
    assert root is not None
    report = distill(inputs, root)
    errors = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    warnings = [d for d in report.diagnostics if d.severity is Severity.WARNING]
    assert (len(errors), len(warnings)) == (expected["unique_error_count"], expected["unique_warning_count"])
    got = {(d.severity.value, d.file, d.line, d.column, d.code, d.message) for d in report.diagnostics}
    assert got == _expected_keys(expected, root)
    assert all(d.in_repo and not d.file.startswith("C:") for d in report.diagnostics if d.file)
    # Inline + summary: every unique one was printed twice (the expected file's 46 lines).
    assert sum(d.count for d in report.diagnostics) == expected["printed_diagnostic_lines"]


def test_nuget_restore_log_keeps_every_unique_diagnostic() -> None:
    log = shared_fixture("dotnet-logs/nuget-restore-nu1605-warnaserror.log")
    expected = json.loads(log.with_name(log.name + ".expected.json").read_text())
    result = parse_path(log)
    inputs = [_input(result, str(log), log.stat().st_size)]
    report = distill(inputs, resolve_root(inputs, None, None))
    errors = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    assert len(errors) == expected["unique_error_count"]
    assert len(report.diagnostics) - len(errors) == expected["unique_warning_count"]


def _dorny_locations(snapshot: str, fixture: str) -> set[tuple[str, int]]:
    """(path, line) of every failure in the snapshot section of `fixture` (dorny's oracle)."""
    import re

    text = shared_fixture(f"dorny/__snapshots__/{snapshot}").read_text(encoding="utf-8")
    section = next(s for s in text.split("exports[`") if f'"path": "fixtures/{fixture}"' in s)
    return {(path, int(line)) for line, path in
            re.findall(r'"line": (\d+),\n(?:.*\n)*?\s+"path": "([^"]+)"', section)}


def _our_locations(fixture: str) -> set[tuple[str | None, int | None]]:
    path = shared_fixture(f"dorny/fixtures/{fixture}")
    result = parse_path(path)
    inputs = [_input(result, str(path))]
    report = distill(inputs, resolve_root(inputs, None, None))
    return {(f.file, f.line) for f in report.failures if f.file}


@pytest.mark.parametrize(("snapshot", "fixture"), [
    ("dotnet-trx.test.ts.snap", "dotnet-trx.trx"),
    ("jest-junit.test.ts.snap", "jest-junit.xml"),
])
def test_failure_locations_agree_with_dornys_snapshot(snapshot: str, fixture: str) -> None:
    # dorny/test-reporter locates a failure at the first stack frame whose file is tracked in
    # the repo; we take the first frame inside the (inferred) repo root: same answer here.
    expected = _dorny_locations(snapshot, fixture)
    assert expected and _our_locations(fixture) == expected


def test_deterministic_paths_are_relative_to_the_repo_root_not_dornys_working_dir() -> None:
    # The frame says `/_/reports/dotnet/DotnetTests.XUnitV3Tests/FixtureTests.cs`: `/_/` is the
    # root of the repository that was built. dorny's snapshot is relative to the folder its test
    # ran in (reports/dotnet); ours is the path in the repository. Deliberate difference.
    expected = _dorny_locations("dotnet-trx.test.ts.snap", "dotnet-xunitv3.trx")
    assert _our_locations("dotnet-xunitv3.trx") == {("reports/dotnet/" + p, n) for p, n in expected}


def test_java_frames_keep_the_bare_file_name() -> None:
    # Java frames print only `AddMissingPatchVersionTest.java:29`; dorny resolves it through the
    # list of tracked files, which distill does not have. We keep the name as printed.
    expected = _dorny_locations("java-junit.test.ts.snap", "external/java/pulsar-test-report.xml")
    ours = _our_locations("external/java/pulsar-test-report.xml")
    assert ours == {(p.rsplit("/", 1)[-1], n) for p, n in expected}


def test_inputs_from_different_machines_each_get_their_own_root() -> None:
    """A Windows build log and a TRX written on another machine: with no --repo-root and no git
    root covering them, each input's paths are made relative to its own inferred checkout."""
    from ci_agent.distill import resolve_roots

    log = shared_fixture("dotnet-logs/cs-errors-multi-win.log")
    trx = shared_fixture("dorny/fixtures/dotnet-trx.trx")
    inputs = [_input(parse_path(log), str(log)), _input(parse_path(trx), str(trx))]
    roots = resolve_roots(inputs, None, None)
    assert roots[0] is not None and roots[0].rstrip("\\").endswith("PureBattleGame")
    assert roots[1] is not None and "test-reporter" in roots[1]
    report = distill(inputs, None, roots)
    assert all(d.file and not d.file.startswith("C:") and d.in_repo for d in report.diagnostics if d.file)
    located = [f.file for f in report.failures if f.file]
    assert located and all(not f.startswith("C:") for f in located)
    assert report.repo_root is None  # two checkouts: no single root to name
    # One explicit root applies to every input.
    assert resolve_roots(inputs, "/repo", None) == ["/repo", "/repo"]
