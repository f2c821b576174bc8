"""ParseResults of every input -> one duplicate-free Report (DESIGN.md §4.1).

Paths are made repo-relative first and the unique key is computed after that, so the same
error printed as `C:\\r\\src\\A.cs` by one log and `src\\A.cs` (relative to its project) by
another folds into one. Order: errors, then warnings, then infos, each in order of first
appearance; failed tests are their own section.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ci_agent.model import (
    Diagnostic,
    ParseResult,
    Report,
    ReportDiagnostic,
    ReportFailure,
    RunError,
    Severity,
    SourceInfo,
    TestCase,
    TestCounts,
)
from ci_agent.paths import (
    RepoPaths,
    choose_repo_root,
    dirname,
    is_absolute,
    is_framework_method,
    is_windows_path,
    join_dir,
    parse_frame,
    project_frames,
)

_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True, slots=True)
class Input:
    """One parsed input and what we know about the file it came from."""

    source: SourceInfo
    result: ParseResult


def project_path(marker: str | None) -> str | None:
    """The project file of a `[project]` marker, without `::TargetFramework=...` properties."""
    if not marker:
        return None
    return marker.split("::", 1)[0].strip() or None


def printed_paths(inputs: Iterable[Input]) -> tuple[list[str], list[str]]:
    """(absolute files, absolute projects) the inputs printed: the evidence for the repo root."""
    files: list[str] = []
    projects: list[str] = []
    no_root = RepoPaths(None)
    for item in inputs:
        for diag in item.result.diagnostics:
            project = project_path(diag.project)
            if project and is_absolute(project):
                projects.append(project)
            if diag.file and is_absolute(diag.file):
                files.append(diag.file)
            elif diag.file and project and is_absolute(project):
                files.append(join_dir(dirname(project), diag.file))
        for case in item.result.failures:
            if case.file and is_absolute(case.file):
                files.append(case.file)
            for line in (case.stack or "").splitlines():
                frame = parse_frame(line, no_root)
                if (frame is not None and frame.file and is_absolute(frame.file)
                        and not is_framework_method(frame.method)):
                    files.append(frame.file)
    return files, projects


def resolve_root(inputs: Sequence[Input], explicit: str | None, git_root: str | None) -> str | None:
    files, projects = printed_paths(inputs)
    return choose_repo_root(explicit, git_root, files, projects)


def normalise_diagnostic(diag: Diagnostic, paths: RepoPaths) -> ReportDiagnostic:
    project = project_path(diag.project)
    located_project = paths.locate(project) if project else None
    file: str | None = None
    in_repo = False
    if diag.file:
        base = dirname(project) if project else None
        located = paths.locate(diag.file, base)
        file, in_repo = located.path, located.in_repo
    return ReportDiagnostic(
        severity=diag.severity,
        file=file,
        line=diag.line,
        column=diag.column,
        code=diag.code,
        message=diag.message,
        project=located_project.path if located_project else None,
        origin=diag.origin,
        in_repo=in_repo,
        detail=diag.detail,
    )


def report_key(diag: ReportDiagnostic) -> tuple[str, str | None, int | None, int | None, str | None, str]:
    """DESIGN.md §4.1 unique key, on the normalised path (the project marker is not part of it)."""
    return (diag.severity.value, diag.file, diag.line, diag.column, diag.code, diag.message)


def unique_diagnostics(diagnostics: Iterable[ReportDiagnostic],
                       fold_case: bool = False) -> list[ReportDiagnostic]:
    """Fold duplicates (counting them), then errors first; stable within a severity.

    `fold_case`: the build ran on Windows, where `Src\\A.cs` and `src\\a.cs` are one file.
    """
    folded: dict[tuple[str, str | None, int | None, int | None, str | None, str], ReportDiagnostic] = {}
    for diag in diagnostics:
        key = report_key(diag)
        if fold_case and key[1] is not None:
            key = (key[0], key[1].casefold(), *key[2:])
        seen = folded.get(key)
        if seen is None:
            folded[key] = diag
        else:
            folded[key] = _with_count(seen, seen.count + diag.count)
    return sorted(folded.values(), key=lambda d: _SEVERITY_ORDER.get(d.severity, 3))


def _with_count(diag: ReportDiagnostic, count: int) -> ReportDiagnostic:
    return ReportDiagnostic(
        diag.severity, diag.file, diag.line, diag.column, diag.code, diag.message,
        diag.project, diag.origin, diag.in_repo, diag.detail, count,
    )


def qualified_name(case: TestCase) -> str:
    """`Ns.Class.Method`: TRX/NUnit/JUnit may give the bare method name and the class apart."""
    if case.classname and not case.name.startswith(case.classname + "."):
        bare = case.name.split("(", 1)[0]
        if "." not in bare:
            return f"{case.classname}.{case.name}"
    return case.name


def report_failure(case: TestCase, paths: RepoPaths, source: str) -> ReportFailure:
    """A failed test with its stack reduced to project frames; file/line = first project frame."""
    found = project_frames(case.stack, paths, case.classname, case.name)
    first = next((f for f in found.frames if f.file and f.line), None)
    file: str | None
    line: int | None
    if first is not None:
        file, line = first.file, first.line
    elif case.file:
        file, line = paths.locate(case.file).path, case.line
    else:
        file, line = None, None
    return ReportFailure(
        name=qualified_name(case),
        outcome=case.outcome,
        message=case.message,
        frames=tuple(f.text for f in found.frames),
        file=file,
        line=line,
        classname=case.classname,
        source=source,
    )


def _counts_of(result: ParseResult) -> TestCounts:
    if result.counts is not None:
        return result.counts
    # A log parser that saw failures but no summary: count what it saw rather than zero.
    n = len(result.failures)
    return TestCounts(total=n, failed=n)


def distill(inputs: Sequence[Input], repo_root: str | None) -> Report:
    """Merge, normalise and deduplicate every input into one Report (pure; no I/O)."""
    paths = RepoPaths(repo_root)
    windows = (is_windows_path(repo_root) if repo_root else
               any(d.file and is_windows_path(d.file) for item in inputs for d in item.result.diagnostics))
    diagnostics = unique_diagnostics(
        (normalise_diagnostic(d, paths) for item in inputs for d in item.result.diagnostics), windows
    )
    failures: dict[tuple[object, ...], ReportFailure] = {}
    for item in inputs:
        for case in item.result.failures:
            failure = report_failure(case, paths, item.source.path)
            failures.setdefault((failure.name, failure.outcome, failure.message, failure.frames), failure)
    counts = TestCounts()
    run_errors: list[RunError] = []
    for item in inputs:
        counts = counts + _counts_of(item.result)
        run_errors.extend(item.result.run_errors)
    return Report(
        sources=tuple(item.source for item in inputs),
        diagnostics=tuple(diagnostics),
        counts=counts,
        failures=tuple(failures.values()),
        run_errors=tuple(run_errors),
        input_bytes=sum(item.source.bytes for item in inputs),
        printed_diagnostics=sum(item.result.printed_diagnostics for item in inputs),
        repo_root=repo_root,
    )
