"""Repo-root resolution, repo-relative paths and project stack frames."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ci_agent.distill import Input, resolve_root
from ci_agent.parsers import parse_path
from ci_agent.paths import (
    RepoPaths,
    choose_repo_root,
    common_dir,
    infer_repo_root,
    is_toolchain_path,
    parse_frame,
    project_frames,
    relative_to,
)
from ci_agent.report import SourceInfo
from tests.conftest import SHARED_FIXTURES, shared_fixture

DOTNET_LOGS = SHARED_FIXTURES / "dotnet-logs"


# --------------------------------------------------------------------------- relative paths

def test_windows_path_with_spaces_is_made_repo_relative_case_insensitively() -> None:
    paths = RepoPaths(r"C:\Dev\JAIMES AF")
    located = paths.locate(r"c:\dev\jaimes af\JAIMES AF.Web\Components\Pages\Home.razor")
    assert located.path == "JAIMES AF.Web/Components/Pages/Home.razor"
    assert located.in_repo


def test_posix_path_is_case_sensitive() -> None:
    assert RepoPaths("/app").locate("/app/src/A.cs").path == "src/A.cs"
    located = RepoPaths("/app").locate("/App/src/A.cs")
    assert (located.path, located.in_repo) == ("/App/src/A.cs", False)


def test_relative_msbuild_origin_resolves_against_the_project_directory() -> None:
    # jenkins-ansi-nodeprefix: the compiler printed a path relative to the project dir.
    paths = RepoPaths("C:\\j\\6aa722\\")
    located = paths.locate(r"GenericCodeRunner\CompositeCode.cs", r"C:\j\6aa722\src\CodeRunner")
    assert located.path == "src/CodeRunner/GenericCodeRunner/CompositeCode.cs"
    assert located.in_repo


def test_relative_origin_with_dotdot_against_the_project_directory() -> None:
    paths = RepoPaths("/repo")
    assert paths.locate("../Shared/Util.cs", "/repo/src/App").path == "src/Shared/Util.cs"


@pytest.mark.parametrize("printed", [
    r"C:\Program Files\dotnet\sdk\8.0.100\Microsoft.Common.CurrentVersion.targets",
    "/usr/share/dotnet/sdk/8.0.412/Sdks/Microsoft.NET.Sdk/targets/Microsoft.NET.Sdk.targets",
    r"C:\Users\me\.nuget\packages\xunit.core\2.4.2\build\xunit.core.targets",
    "/home/runner/.nuget/packages/foo/1.0.0/build/foo.targets",
])
def test_sdk_and_nuget_paths_are_not_in_the_repo_even_under_the_root(printed: str) -> None:
    root = r"C:\\" if printed.startswith("C:") else "/"
    located = RepoPaths(root).locate(printed)
    assert (located.path, located.in_repo) == (printed, False)
    assert is_toolchain_path(printed)


def test_unknown_root_keeps_absolute_paths_as_printed() -> None:
    located = RepoPaths(None).locate(r"D:\a\b.cs")
    assert (located.path, located.in_repo) == (r"D:\a\b.cs", False)


def test_relative_path_without_project_is_taken_as_repo_relative() -> None:
    located = RepoPaths(None).locate(r".\src\Foo.cs")
    assert (located.path, located.in_repo) == ("src/Foo.cs", True)
    assert not RepoPaths(None).locate("../outside/x.cs").in_repo


def test_relative_to_does_not_mix_namespaces() -> None:
    assert relative_to("/app/a.cs", r"C:\app") is None
    assert relative_to(r"C:\app2\a.cs", r"C:\app") is None
    assert relative_to(r"C:/app/x/a.cs", "C:\\app\\") == "x/a.cs"


def test_common_dir() -> None:
    assert common_dir([r"C:\r\src\a.cs", r"c:\R\tests\b.cs"]) == "C:\\r"
    assert common_dir(["/a/b/c", "/a/b/d"]) == "/a/b"
    assert common_dir(["/a/b", r"C:\a"]) is None


# --------------------------------------------------------------------------- repo root

def test_infer_root_parent_of_src() -> None:
    files = ["/app/src/Catalog.API/Program.cs", "/app/src/EventBus/Bus.cs"]
    assert infer_repo_root(files) == "/app"


def test_infer_root_solution_folder_named_like_the_project() -> None:
    # Visual Studio layout: e:\Pharmacy\Pharmacy.API\Pharmacy.API.csproj -> root e:\Pharmacy
    assert infer_repo_root([], [r"e:\Pharmacy\Pharmacy.API\Pharmacy.API.csproj"]) == "e:\\Pharmacy"
    # ...but not when the parent is an unrelated folder.
    assert infer_repo_root([], [r"Z:\Game\demos\demos.csproj"]) == "Z:\\Game\\demos"


def test_infer_root_ignores_toolchain_paths() -> None:
    files = [r"C:\Program Files\dotnet\sdk\8.0\x.targets", r"C:\w\App\Program.cs"]
    assert infer_repo_root(files, [r"C:\w\App\App.csproj"]) == "C:\\w\\App"


def test_explicit_root_wins_and_git_root_is_used_only_when_paths_are_under_it() -> None:
    files = [r"C:\r\src\a.cs"]
    assert choose_repo_root("X:\\given", "/work/repo", files, []) == "X:\\given"
    assert choose_repo_root(None, "/work/repo", files, []) == "C:\\r"
    assert choose_repo_root(None, "/work/repo", ["/work/repo/src/a.cs"], []) == "/work/repo"
    assert choose_repo_root(None, "/work/repo", [], []) == "/work/repo"


_HINTS = sorted(
    p for p in DOTNET_LOGS.glob("*.expected.json") if "repo_root_hint" in json.loads(p.read_text())
)


@pytest.mark.parametrize("expected_file", _HINTS, ids=lambda p: p.name.removesuffix(".expected.json"))
def test_inferred_root_matches_the_fixture_hint(expected_file: Path) -> None:
    log = expected_file.with_name(expected_file.name.removesuffix(".expected.json"))
    result = parse_path(log)
    if not (result.diagnostics or result.failures):
        # utf16-restore-failed-no-errors.log: the hint comes from a path in prose, no diagnostic
        # names a file, so nothing may be inferred — and nothing is.
        assert resolve_root([Input(SourceInfo(str(log), result.format, 0), result)], None, None) is None
        return
    hint = json.loads(expected_file.read_text())["repo_root_hint"]
    root = resolve_root([Input(SourceInfo(str(log), result.format, 0), result)], None, None)
    assert root is not None
    assert root.rstrip("\\/").casefold() == hint.rstrip("\\/").casefold()


def test_jenkins_relative_file_resolves_to_the_expected_repo_relative_path() -> None:
    log = shared_fixture("dotnet-logs/jenkins-ansi-nodeprefix.txt")
    expected = json.loads(log.with_name(log.name + ".expected.json").read_text())
    from ci_agent.distill import distill

    result = parse_path(log)
    inputs = [Input(SourceInfo(str(log), result.format, 0), result)]
    report = distill(inputs, resolve_root(inputs, None, None))
    assert [d.file for d in report.diagnostics] == [expected["resolved_repo_relative_file"]]
    assert report.diagnostics[0].in_repo


def test_work_tree_root(tmp_path: Path) -> None:
    from ci_agent.git import work_tree_root

    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)
    (tmp_path / "r" / "sub").mkdir()
    assert work_tree_root(tmp_path / "r" / "sub") == (tmp_path / "r").resolve()
    (tmp_path / "plain").mkdir()
    assert work_tree_root(tmp_path / "plain") is None


# --------------------------------------------------------------------------- frames

@pytest.mark.parametrize(("line", "file", "number"), [
    ("   at Ns.C.M() in C:\\r\\tests\\X.cs:line 19", "tests/X.cs", 19),
    ("   bei Ns.C.M() in C:\\r\\tests\\X.cs:Zeile 19", "tests/X.cs", 19),
    ("   à Ns.C.M() dans C:\\r\\tests\\X.cs:ligne 19", "tests/X.cs", 19),
    ("   en Ns.C.M(Int32 a, String b) en C:\\r\\tests\\X.cs:línea 363", "tests/X.cs", 363),
    ("    at Ns.C.M() in C:\\r\\tests\\X.cs:19", "tests/X.cs", 19),
    ("   at Ns.C.M() in /_/tests/X.cs:line 7", "tests/X.cs", 7),
])
def test_localised_frames_in_the_repo(line: str, file: str, number: int) -> None:
    frame = parse_frame(line, RepoPaths("C:\\r"))
    assert frame is not None
    assert (frame.file, frame.line, frame.in_repo) == (file, number, True)
    assert file in frame.text


def test_framework_frames_are_not_project_frames_even_with_deterministic_paths() -> None:
    line = "   at Xunit.Assert.Equal(Int32 a, Int32 b) in /_/src/xunit.assert/Asserts/Equality.cs:line 21"
    frame = parse_frame(line, RepoPaths("/repo"))
    assert frame is not None and not frame.in_repo


def test_project_frames_keep_only_repo_files() -> None:
    stack = "\n".join([
        "   at System.ThrowHelper.Throw() in /_/src/libraries/System.Private.CoreLib/ThrowHelper.cs:line 5",
        "   at Ns.Service.Run() in C:\\r\\src\\Service.cs:line 42",
        "   at Ns.Tests.ServiceTests.Runs() in C:\\r\\tests\\ServiceTests.cs:line 10",
        "--- End of stack trace from previous location ---",
        "   at System.Runtime.CompilerServices.TaskAwaiter.ThrowForNonSuccess(Task task)",
        "   at Lib.Thing.Do() in D:\\elsewhere\\Thing.cs:line 3",
    ])
    found = project_frames(stack, RepoPaths("C:\\r"), "Ns.Tests.ServiceTests")
    assert [f.file for f in found.frames] == ["src/Service.cs", "tests/ServiceTests.cs"]
    assert found.frames[0].text == "at Ns.Service.Run() in src/Service.cs:line 42"
    assert found.total == 5


def test_frames_without_files_fall_back_to_the_test_namespace() -> None:
    stack = "\n".join([
        "   at System.Linq.Enumerable.First[T](IEnumerable`1 source)",
        "   at Ns.Core.Parser.Parse(String s)",
        "   at Ns.Tests.ParserTests.ParsesEmpty()",
        "   at Other.Lib.Helper()",
    ])
    found = project_frames(stack, RepoPaths("/r"), "Ns.Tests.ParserTests")
    assert [f.method for f in found.frames] == ["Ns.Tests.ParserTests.ParsesEmpty()"]


def test_python_frames() -> None:
    stack = 'File "/usr/lib/python3.11/json/decoder.py", line 3, in decode\nFile "/r/app/x.py", line 9, in f'
    found = project_frames(stack, RepoPaths("/r"))
    assert [(f.file, f.line) for f in found.frames] == [("app/x.py", 9)]


def test_infer_root_from_a_solution_marker() -> None:
    files = [r"C:\p\Acme\Lib\Api\Controllers\A.cs"]
    projects = [r"C:\p\Acme\Lib\Api\Api.csproj", r"C:\p\Acme\Acme.sln"]
    assert infer_repo_root(files, projects) == "C:\\p\\Acme"
    # A solution that is not above every path is no evidence.
    assert infer_repo_root([r"C:\q\X\x.cs"], [r"C:\q\X\X.csproj", r"C:\other\O.sln"]) == "C:\\q\\X"
    assert infer_repo_root([], [r"D:\w\All.sln"]) == "D:\\w"


def test_no_root_is_inferred_from_unrelated_paths() -> None:
    assert infer_repo_root(["/Users/a/x/A.cs", "/home/runner/y/B.cs"]) is None
    assert infer_repo_root(["/home/a/A.cs", "/home/b/B.cs"]) is None
    assert infer_repo_root([r"C:\a\A.cs", r"C:\b\B.cs"]) is None


def test_node_frames_skip_node_modules_and_internals() -> None:
    stack = "\n".join([
        r"    at Object.throwError (C:\w\jest\lib\main.js:2:9)",
        r"    at Object.asyncJestTest (C:\w\jest\node_modules\jest-jasmine2\build\x.js:106:37)",
        r"    at C:\w\jest\node_modules\jest-jasmine2\build\queueRunner.js:45:12",
        "    at new Promise (<anonymous>)",
        "    at processTicksAndRejections (internal/process/task_queues.js:97:5)",
    ])
    found = project_frames(stack, RepoPaths("C:\\w\\jest"))
    assert [(f.file, f.line) for f in found.frames] == [("lib/main.js", 2)]
    assert found.frames[0].text == "at Object.throwError (lib/main.js:2:9)"


def test_conventional_folder_name_directly_under_the_drive_is_not_a_cut_point() -> None:
    assert infer_repo_root([r"C:\Tests\Repo\src\A\a.cs", r"C:\Tests\Repo\src\B\b.cs"]) == "C:\\Tests\\Repo"


def test_a_file_under_the_root_is_project_code_whatever_its_namespace() -> None:
    # e.g. a repository of Microsoft's own: the namespace filter applies to `/_/` paths only.
    frame = parse_frame(r"   at Microsoft.Extensions.Foo.Bar() in C:\r\src\Foo.cs:line 3", RepoPaths("C:\\r"))
    assert frame is not None and frame.in_repo
    frame = parse_frame("   at VerifyUser.Checks.Run() in /_/src/Checks.cs:line 3", RepoPaths("C:\\r"))
    assert frame is not None and frame.in_repo


# --------------------------------------------------------------------------- runner workspaces

@pytest.mark.parametrize(("files", "root"), [
    # GitHub-hosted runners check out into <work>/<repo>/<repo>: no conventional folder needed.
    (["/home/runner/work/app/app/app/sync.py"], "/home/runner/work/app/app"),
    (["D:\\a\\Game\\Game\\Scripts\\Player.cs"], "D:\\a\\Game\\Game"),
    (["/Users/runner/work/kit/kit/Sources/Kit/Kit.swift"], "/Users/runner/work/kit/kit"),
    (["/__w/svc/svc/pkg/mod.go"], "/__w/svc/svc"),
    # A repository named like a conventional folder is not cut at its own name...
    (["/home/runner/work/src/src/lib/x.py"], "/home/runner/work/src/src"),
    # ...while a conventional folder below the workspace still marks a checkout in a subfolder.
    (["/home/runner/work/repo/repo/sub/src/x.py"], "/home/runner/work/repo/repo/sub"),
    # The runner's own folders beside the workspace are never the repository.
    (["/home/runner/work/_temp/.venv/lib/python3.11/x.py", "/home/runner/work/r/r/app/a.py"],
     "/home/runner/work/r/r"),
])
def test_infer_root_knows_github_runner_workspaces(files: list[str], root: str) -> None:
    assert infer_repo_root(files) == root


def test_runner_scratch_folders_are_toolchain_paths() -> None:
    assert is_toolchain_path("/home/runner/work/_temp/.venv/bin/python")
    assert is_toolchain_path("D:\\a\\_actions\\actions\\setup-python\\v5\\dist\\setup\\index.js")
    assert not is_toolchain_path("/home/runner/work/repo/repo/src/app.py")


def test_the_shared_phpunit_report_with_runner_paths_keeps_its_inferred_root() -> None:
    # Real lines: `/home/runner/work/repo/src/Fake.php` etc. (not the runner's <repo>/<repo> layout).
    result = parse_path(shared_fixture("dorny/fixtures/phpunit/phpunit-paths.xml"))
    posix = [f.file for f in result.failures if f.file and f.file.startswith("/home/runner/work/")]
    assert len(posix) == 4
    assert infer_repo_root(posix) == "/home/runner/work/repo"
