"""ParseResults of every input -> one duplicate-free Report (DESIGN.md §4.1).

Paths are made repo-relative first and the unique key is computed after that, so the same
error printed as `C:\\r\\src\\A.cs` by one log and `src\\A.cs` (relative to its project) by
another folds into one. Order: errors, then warnings, then infos, each in order of first
appearance; failed tests are their own section.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ci_agent.paths import (
    RepoPaths,
    choose_repo_root,
    dirname,
    is_absolute,
    is_framework_method,
    is_vendored_path,
    is_windows_path,
    join_dir,
    parse_frame,
    project_frames,
)
from ci_agent.report import (
    Diagnostic,
    LogTail,
    ParseResult,
    Report,
    ReportDiagnostic,
    ReportFailure,
    Severity,
    SourceInfo,
    TestCase,
    TestCounts,
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
        spots = dict.fromkeys((d.file, d.project) for d in item.result.diagnostics)  # big logs repeat
        for file, marker in spots:
            project = project_path(marker)
            if project and is_absolute(project):
                projects.append(project)
            if file and is_absolute(file):
                files.append(file)
            elif file and project and is_absolute(project):
                files.append(join_dir(dirname(project), file))
        for case in item.result.failures:
            if case.file and is_absolute(case.file):
                files.append(case.file)
            for line in (case.stack or "").splitlines():
                frame = parse_frame(line, no_root)
                if (frame is not None and frame.file and is_absolute(frame.file)
                        and not is_framework_method(frame.method) and not is_vendored_path(frame.file)):
                    files.append(frame.file)
    return files, projects


def resolve_root(inputs: Sequence[Input], explicit: str | None, git_root: str | None) -> str | None:
    files, projects = printed_paths(inputs)
    return choose_repo_root(explicit, git_root, files, projects)


def resolve_roots(inputs: Sequence[Input], explicit: str | None, git_root: str | None) -> list[str | None]:
    """One repo root per input. `--repo-root` applies to all; otherwise each input is judged on its
    own paths, because logs and result files may come from different machines (a Windows test
    job's TRX next to a Linux build log) whose checkouts live in different places."""
    if explicit:
        return [explicit] * len(inputs)
    return [resolve_root([item], None, git_root) for item in inputs]


_Key = tuple[str, str | None, int | None, int | None, str | None, str]
_Where = tuple[str | None, bool, str | None]  # (file, in_repo, project) after normalisation


def locate_diagnostic(file: str | None, marker: str | None, paths: RepoPaths) -> _Where:
    """Repo-relative file (resolved against the project directory when relative) and project."""
    project = project_path(marker)
    located_project = paths.locate(project).path if project else None
    if not file:
        return None, False, located_project
    located = paths.locate(file, dirname(project) if project else None)
    return located.path, located.in_repo, located_project


def normalise_diagnostic(diag: Diagnostic, paths: RepoPaths) -> ReportDiagnostic:
    return _report_diagnostic(diag, locate_diagnostic(diag.file, diag.project, paths), 1)


def _report_diagnostic(diag: Diagnostic, where: _Where, count: int) -> ReportDiagnostic:
    file, in_repo, project = where
    return ReportDiagnostic(
        severity=diag.severity,
        file=file,
        line=diag.line,
        column=diag.column,
        code=diag.code,
        message=diag.message,
        project=project,
        origin=diag.origin,
        in_repo=in_repo,
        detail=diag.detail,
        count=count,
    )


def report_key(diag: ReportDiagnostic) -> _Key:
    """DESIGN.md §4.1 unique key, on the normalised path (the project marker is not part of it)."""
    return (diag.severity.value, diag.file, diag.line, diag.column, diag.code, diag.message)


def unique_diagnostics(diagnostics: Iterable[tuple[Diagnostic, RepoPaths]],
                       fold_case: bool = False) -> list[ReportDiagnostic]:
    """Normalise paths, fold duplicates (counting them), then errors first; stable within a severity.

    `fold_case`: the build ran on Windows, where `Src\\A.cs` and `src\\a.cs` are one file.
    Big logs print the same few files thousands of times, so locations are resolved once per
    (file, project) pair and duplicates only bump a counter.
    """
    where_cache: dict[tuple[str | None, str | None, int], _Where] = {}
    first: dict[_Key, tuple[Diagnostic, _Where]] = {}
    counts: dict[_Key, int] = {}
    # Parsers hand out one shared object per repeated event: its key is computed once. The
    # (object, paths) pair is kept alive by `diagnostics`' owner, so ids are not reused meanwhile.
    key_of: dict[tuple[int, int], _Key] = {}
    for diag, paths in diagnostics:
        known = key_of.get((id(diag), id(paths)))
        if known is not None:
            counts[known] += 1
            continue
        spot = (diag.file, diag.project, id(paths))
        where = where_cache.get(spot)
        if where is None:
            where = where_cache[spot] = locate_diagnostic(diag.file, diag.project, paths)
        file = where[0].casefold() if fold_case and where[0] is not None else where[0]
        key = (diag.severity.value, file, diag.line, diag.column, diag.code, diag.message)
        key_of[(id(diag), id(paths))] = key
        seen = counts.get(key)
        if seen is None:
            counts[key] = 1
            first[key] = (diag, where)
        else:
            counts[key] = seen + 1
    unique = [_report_diagnostic(diag, where, counts[key]) for key, (diag, where) in first.items()]
    return sorted(unique, key=lambda d: _SEVERITY_ORDER.get(d.severity, 3))


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


RESULT_FILE_FORMATS = frozenset({"trx", "junit", "nunit", "xunit"})


def is_result_file(result: ParseResult) -> bool:
    return result.format in RESULT_FILE_FORMATS


def tells_tests(result: ParseResult) -> bool:
    return bool(result.failures) or (result.counts is not None and result.counts.total > 0)


def _counts_of(result: ParseResult) -> TestCounts:
    if result.counts is not None:
        return result.counts
    # A log parser that saw failures but no summary: count what it saw rather than zero.
    n = len(result.failures)
    return TestCounts(total=n, failed=n)


def distill(inputs: Sequence[Input], repo_root: str | None,
            roots: Sequence[str | None] | None = None) -> Report:
    """Merge, normalise and deduplicate every input into one Report (pure; no I/O).

    `roots` gives each input its own repo root (see resolve_roots); by default all share `repo_root`.
    """
    per_input = list(roots) if roots is not None else [repo_root] * len(inputs)
    if len(per_input) != len(inputs):
        raise ValueError("one root per input")
    by_root = {root: RepoPaths(root) for root in per_input}
    input_paths = [by_root[root] for root in per_input]
    known = [r for r in per_input if r]
    windows = (any(is_windows_path(r) for r in known) if known else
               any(d.file and is_windows_path(d.file) for item in inputs for d in item.result.diagnostics))
    pairs = zip(inputs, input_paths, strict=True)
    located = ((d, paths) for item, paths in pairs for d in item.result.diagnostics)
    diagnostics = unique_diagnostics(located, windows)
    if repo_root is None and len(set(known)) == 1:
        repo_root = known[0]
    tested = [item for item in inputs if tells_tests(item.result)]
    if any(is_result_file(item.result) for item in tested):
        # A runner's console and the result file it wrote describe the same run (`pytest` and its
        # JUnit XML, `dotnet test` and its TRX) with names spelt differently: counting both would
        # double every test. The result file is the structured truth; console test output is for
        # when there is none (DESIGN.md: dotnet_test reads `dotnet test` "when there is no TRX").
        tested = [item for item in tested if is_result_file(item.result)]
    failures: dict[tuple[object, ...], ReportFailure] = {}
    counts = TestCounts()
    for item, paths in zip(inputs, input_paths, strict=True):
        if not any(item is t for t in tested):
            continue
        counts = counts + _counts_of(item.result)
        for case in item.result.failures:
            failure = report_failure(case, paths, item.source.path)
            failures.setdefault((failure.name, failure.outcome, failure.message, failure.frames), failure)
    run_errors = [error for item in inputs for error in item.result.run_errors]
    tails = tuple(LogTail(item.source.path, tuple(item.result.tail)) for item in inputs if item.result.tail)
    return Report(
        sources=tuple(item.source for item in inputs),
        diagnostics=tuple(diagnostics),
        counts=counts,
        failures=tuple(failures.values()),
        run_errors=tuple(run_errors),
        input_bytes=sum(item.source.bytes for item in inputs),
        printed_diagnostics=sum(item.result.printed_diagnostics for item in inputs),
        repo_root=repo_root,
        log_tails=tails,
    )
