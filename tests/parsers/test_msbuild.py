"""msbuild parser: conformance over every real .NET log in the shared corpus, one test per
format variant (real lines from the fixtures or quoted in public repositories), and hostile lines.

Unit-test lines are real unless a comment says otherwise. Sources of lines not in the shared
corpus: `MSBUILD : error MSB1008` (MSBuild 16.5 console paste in a public README), `CSC : error
CS0006` (Unity/VS build paste), `midlrt : error MIDL1011/MIDL2212` (MIDLRT usage output and a
build-notes paste), the `::TargetFramework=net8.0` marker (an Azure DevOps azure-sdk-for-net log),
`VSTEST1` (a comment in microsoft/vstest's acceptance tests), the terminal-logger `TESTERROR`
blocks (pastes of `dotnet test` under .NET 10 in public READMEs, one Russian-localized), the
`WHITESPACE` lines (dotnet-format output quoted in public docs and tests).
"""

# ruff: noqa: E501  (real log lines are long; splitting them further hurts comparing them with the logs)
from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from ci_agent.envelope import HEAD_BYTES, decode_head, iter_log_lines
from ci_agent.parsers import msbuild, msbuild_lines, parse_path, sniff
from ci_agent.parsers.msbuild import PARSER, parse_header, split_markers
from ci_agent.report import Diagnostic, ParseResult, Severity
from tests.conftest import LOCAL_FIXTURES, SHARED_FIXTURES

DOTNET_LOGS = SHARED_FIXTURES / "dotnet-logs"
EXPECTED_FILES = sorted(DOTNET_LOGS.glob("*.expected.json"))

# Where we deliberately differ from a hand-written expected file: {fixture name: reason}.
# Empty: every expected file is matched exactly.
DELIBERATE_DIFFERENCES: dict[str, str] = {}


def feed(*lines: str) -> ParseResult:
    consumer = PARSER.consumer("test.log")
    for line in lines:
        consumer.feed(line)
    return consumer.finish()


def only(*lines: str) -> Diagnostic:
    result = feed(*lines)
    assert len(result.diagnostics) == 1, result.diagnostics
    return result.diagnostics[0]


def unique(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Dedupe by the DESIGN.md key, keeping first-appearance order (what distill does)."""
    seen: dict[tuple[Any, ...], Diagnostic] = {}
    for d in diagnostics:
        seen.setdefault(d.key(), d)
    return list(seen.values())


# --------------------------------------------------------------------------- conformance


def test_the_shared_corpus_is_there() -> None:
    assert len(EXPECTED_FILES) >= 20, f"expected files not found under {DOTNET_LOGS} (set CI_AGENT_SHARED)"


@pytest.mark.parametrize("expected_path", EXPECTED_FILES, ids=lambda p: p.name.removesuffix(".expected.json"))
def test_conformance_with_expected_file(expected_path: Path) -> None:
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    log = expected_path.with_name(expected_path.name.removesuffix(".expected.json"))
    assert log.name not in DELIBERATE_DIFFERENCES

    assert "msbuild" in sniff(log.read_bytes()[:HEAD_BYTES]).formats, "sniffing must pick the msbuild parser"
    result = parse_path(log)
    uniques = unique(result.diagnostics)
    for severity, key in ((Severity.ERROR, "errors"), (Severity.WARNING, "warnings")):
        got = [d for d in uniques if d.severity is severity]
        want = expected[key]
        for index, (g, w) in enumerate(zip(got, want, strict=False)):
            for name in ("file", "line", "column", "code", "message"):
                assert getattr(g, name) == w[name], f"{key}[{index}].{name}"
            if "origin" in w:
                assert g.origin == w["origin"], f"{key}[{index}].origin"
        assert len(got) == len(want) == expected[f"unique_{key[:-1]}_count"], key
    assert result.printed_diagnostics == expected["printed_diagnostic_lines"]


@pytest.mark.parametrize("expected_path", EXPECTED_FILES, ids=lambda p: p.name.removesuffix(".expected.json"))
def test_extra_expected_facts(expected_path: Path) -> None:
    """The optional keys: subcategories, full multi-line messages, summary counts, silent failures."""
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    log = expected_path.with_name(expected_path.name.removesuffix(".expected.json"))
    result = parse_path(log, forced="msbuild")
    errors = [d for d in unique(result.diagnostics) if d.severity is Severity.ERROR]
    warnings = [d for d in unique(result.diagnostics) if d.severity is Severity.WARNING]
    if "subcategories" in expected:
        assert [d.subcategory for d in errors] == expected["subcategories"]
    if "subcategory" in expected:
        assert [d.subcategory for d in errors] == [expected["subcategory"]]
    for label, text in expected.get("full_messages", {}).items():
        kind, number = label.split("#")
        diagnostic = (errors if kind == "error" else warnings)[int(number) - 1]
        assert "\n".join(filter(None, (diagnostic.message, diagnostic.detail))) == text
    notes = " ".join(result.notes)
    for kind, count in expected.get("summary_counts", {}).items():
        word = kind[:-1]
        assert re.search(rf"\b{count} {word}\(s\)", notes, re.IGNORECASE), (kind, notes)
    silent_failure = not expected["errors"] and str(expected.get("build_result", "")).startswith("failed")
    assert bool(result.run_errors) == silent_failure, result.run_errors


def test_restore_that_failed_without_an_error_says_what_the_log_says() -> None:
    result = parse_path(DOTNET_LOGS / "utf16-restore-failed-no-errors.log", forced="msbuild")
    assert result.diagnostics == []
    [run_error] = result.run_errors
    assert run_error.source.endswith("utf16-restore-failed-no-errors.log")
    assert "failed without printing any error" in run_error.message
    assert 'PressureChain.sln" (Restore target(s)) -- FAILED.' in run_error.message


def test_sniff_accepts_every_dotnet_log_from_its_head() -> None:
    logs = [p.with_name(p.name.removesuffix(".expected.json")) for p in EXPECTED_FILES]
    assert logs
    for log in logs:
        assert PARSER.sniff(decode_head(log.read_bytes()[:HEAD_BYTES])), log.name


OTHER_TOOL_LOGS = sorted(
    [*(LOCAL_FIXTURES / "compilers").glob("*.log"), *(LOCAL_FIXTURES / "pytest_console").glob("*.log")]
)


@pytest.mark.parametrize("log", OTHER_TOOL_LOGS, ids=lambda p: p.name)
def test_sniff_rejects_other_tools(log: Path) -> None:
    # tsc shares MSBuild's canonical `file(l,c): error TS2322:` grammar; the sniff asks for
    # something only MSBuild writes, so tsc output goes to the compilers parser.
    assert not PARSER.sniff(decode_head(log.read_bytes()[:HEAD_BYTES]))
    if not log.name.startswith("tsc-"):
        assert parse_path(log, forced="msbuild").diagnostics == []


# --------------------------------------------------------------------------- positions

TL_LINE = "    directory/file(1,2,3,4): warning AA0000: Warning!"  # tl-multiline-warning.linux.txt


@pytest.mark.parametrize(
    ("position", "line", "column", "end_line", "end_column"),
    [
        ("(1,2,3,4)", 1, 2, 3, 4),  # the real TL snapshot line
        # The other forms are EventArgsFormatting's (non-zero parts only); position swapped into the real line.
        ("(1)", 1, None, None, None),
        ("(1-3)", 1, None, 3, None),
        ("(1,2)", 1, 2, None, None),
        ("(1,2-4)", 1, 2, None, 4),
        ("(1-3,2)", 1, 2, 3, None),
    ],
)
def test_position_forms(position: str, line: int, column: int | None, end_line: int | None,
                        end_column: int | None) -> None:
    d = only(TL_LINE.replace("(1,2,3,4)", position))
    assert (d.file, d.line, d.column, d.end_line, d.end_column) == ("directory/file", line, column, end_line,
                                                                   end_column)
    assert (d.severity, d.code, d.message) == (Severity.WARNING, "AA0000", "Warning!")


def test_line_only_position_with_tfm_marker() -> None:
    d = only(r"C:\Users\nohwnd\AppData\Local\Temp\vstest\xvoVt\UnitTest1.cs(41): error VSTEST1: (FailingTest) "
             r"SampleUnitTestProject.UnitTest1.FailingTest() Assert.AreEqual failed. Expected:<2>. Actual:<3>.  "
             r"[C:\Users\nohwnd\AppData\Local\Temp\vstest\xvoVt\SimpleTestProject.csproj::TargetFramework=net8.0]")
    assert (d.line, d.column, d.code) == (41, None, "VSTEST1")
    assert d.message.endswith("Expected:<2>. Actual:<3>.")
    assert d.project == r"C:\Users\nohwnd\AppData\Local\Temp\vstest\xvoVt\SimpleTestProject.csproj"


def test_tfm_marker_on_posix_path() -> None:
    d = only("/mnt/vss/_work/1/s/azure-sdk-for-net-pr/sdk/genome/Azure.ResourceManager.Genome/src/Generated/"
             "Extensions/MockableGenomeSubscriptionResource.cs(69,20): error CS0122: 'GeneratorPageableHelpers' is "
             "inaccessible due to its protection level [/mnt/vss/_work/1/s/azure-sdk-for-net-pr/sdk/genome/"
             "Azure.ResourceManager.Genome/src/Azure.ResourceManager.Genome.csproj::TargetFramework=net8.0]")
    assert d.message == "'GeneratorPageableHelpers' is inaccessible due to its protection level"
    assert d.project is not None and d.project.endswith("Azure.ResourceManager.Genome.csproj")
    assert (d.line, d.column) == (69, 20)


def test_classic_cl_position_with_a_space_before_the_colon() -> None:
    # cl.exe / VS 2008 style, from a multi-node Visual Studio build log quoted in a public repository
    d = only(r"1>..\..\..\..\src\modules\osgSim\generated_code\ImpostorSpriteManager.pypp.cpp(12) : error C2065: "
             r"'ImpostorSpriteManager_wrapper' : undeclared identifier")
    assert d.file == r"..\..\..\..\src\modules\osgSim\generated_code\ImpostorSpriteManager.pypp.cpp"
    assert (d.line, d.column, d.code) == (12, None, "C2065")
    assert d.message == "'ImpostorSpriteManager_wrapper' : undeclared identifier"


def test_parentheses_in_a_file_name_without_position() -> None:
    # Constructed: a `file : ` origin whose name ends in a parenthesis that is not a position.
    d = only(r"C:\Program Files (x86)\Windows Kits\10\Tools (x64) : warning X1: m")
    assert (d.file, d.line) == (r"C:\Program Files (x86)\Windows Kits\10\Tools (x64)", None)


@pytest.mark.parametrize("bad", ["(a)", "(1,)", "(,1)", "(1-)", "(1,2,3,4,5)", "(1-2-3)", "()", "(１)"])
def test_malformed_positions_are_not_diagnostics(bad: str) -> None:
    assert parse_header(TL_LINE.replace("(1,2,3,4)", bad)) is None


# --------------------------------------------------------------------------- origins


def test_file_origin_without_position() -> None:
    # gha-docker-buildkit-cs0023.log, printed without marker by `dotnet restore`
    d = only("/app/src/Catalog.API/Catalog.API.csproj : warning NU1608: Detected package version outside of "
             "dependency constraint: Aspire.RabbitMQ.Client 9.1.0 requires RabbitMQ.Client (>= 6.8.1 && < 7.0.0) "
             "but version RabbitMQ.Client 7.1.2 was resolved.")
    assert (d.file, d.line, d.column, d.origin, d.project) == ("/app/src/Catalog.API/Catalog.API.csproj", None,
                                                               None, None, None)
    assert d.message.endswith("(>= 6.8.1 && < 7.0.0) but version RabbitMQ.Client 7.1.2 was resolved.")


@pytest.mark.parametrize(
    ("line", "origin", "code", "message"),
    [
        ("MSBUILD : error MSB1008: Only one project can be specified.", "MSBUILD", "MSB1008",
         "Only one project can be specified."),
        (r"2>CSC : error CS0006: Metadata file 'D:\devel\dphysics-decompile\Temp\UnityVS_bin\Debug\Assembly-CSharp"
         r".dll' could not be found", "CSC", "CS0006",
         r"Metadata file 'D:\devel\dphysics-decompile\Temp\UnityVS_bin\Debug\Assembly-CSharp.dll' could not be found"),
        # A space before the code's colon, and [msg]/[context] brackets that are not project markers.
        ("midlrt : error MIDL1011 : [msg]argument(s) missing for switch [context]/h", "midlrt", "MIDL1011",
         "[msg]argument(s) missing for switch [context]/h"),
        ("midlrt : error MIDL2212: [msg]error while writing to file [context]App.winmd (HRESULT:0x80070020 - The "
         "process cannot access the file because it is being used by another process.", "midlrt", "MIDL2212",
         "[msg]error while writing to file [context]App.winmd (HRESULT:0x80070020 - The process cannot access the "
         "file because it is being used by another process."),
    ],
)
def test_tool_origins_have_no_file(line: str, origin: str, code: str, message: str) -> None:
    d = only(line)
    assert (d.file, d.origin, d.code, d.message, d.severity) == (None, origin, code, message, Severity.ERROR)


def test_engine_error_without_origin_from_terminal_logger() -> None:
    d = only("MSB0001 error EvaluationError: An error occurred during evaluation.")  # tl-eval-error-engine
    assert (d.file, d.origin, d.subcategory, d.code) == (None, None, "MSB0001", "EvaluationError")
    assert d.message == "An error occurred during evaluation."


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (r"src\Web\Grand.Web\Controllers\AccountController.cs(73,57): error WHITESPACE: Fix whitespace formatting.",
         "WHITESPACE"),
        (r"  D:\DotnetTokenKiller\samples\SampleApp\Program.cs(1,1): error whitespace: Fix whitespace formatting.",
         "whitespace"),
    ],
)
def test_codes_without_digits(line: str, code: str) -> None:
    d = only(line)
    assert (d.code, d.message) == (code, "Fix whitespace formatting.")


def test_whitespace_code_with_marker_keeps_quoted_escapes() -> None:
    d = only(r"src/AddFunction/AddFunction.cs(8,10): error WHITESPACE: Fix whitespace formatting. Replace 2 "
             r"characters with '\n\s\s\s\s\s\s\s\s\s\s\s\s'. [src/AddFunction/AddFunction.csproj]")
    assert d.message == r"Fix whitespace formatting. Replace 2 characters with '\n\s\s\s\s\s\s\s\s\s\s\s\s'."
    assert d.project == "src/AddFunction/AddFunction.csproj"


def test_no_code_at_all() -> None:
    # xaml-subcategory-de.err line 5 (marker shortened to the real project path's tail)
    d = only(r"C:\Users\tubbeTEC\Desktop\Projects\Anamnese-App\Anamnese-App\node_modules\react-native-windows"
             r"\PropertySheets\RequireSolution.targets(12,5): error : The property SolutionPath is not defined. "
             r"This project requires being built via a valid solution file. [C:\x\ReactNativeDocumentPicker.csproj]")
    assert (d.code, d.line, d.column) == (None, 12, 5)
    assert d.message == ("The property SolutionPath is not defined. This project requires being built via a "
                         "valid solution file.")


@pytest.mark.parametrize(
    ("line", "subcategory", "code", "file"),
    [
        (r"C:\A\Microsoft.ReactNative.vcxproj : XamlCompiler error WMC1006: Cannot resolve Assembly or Windows "
         r"Metadata file 'C:\A\Microsoft.ReactNative.winmd'", "XamlCompiler", "WMC1006",
         r"C:\A\Microsoft.ReactNative.vcxproj"),
        (r"C:\Program Files (x86)\Windows Kits\10\bin\10.0.26100.0\XamlCompiler\Microsoft.Windows.UI.Xaml.Common"
         r".targets(456,5): Xaml Internal Error error WMC9999: Der Objektverweis wurde nicht auf eine Objektinstanz "
         r"festgelegt. [C:\A\Microsoft.ReactNative.vcxproj]", "Xaml Internal Error", "WMC9999",
         r"C:\Program Files (x86)\Windows Kits\10\bin\10.0.26100.0\XamlCompiler\Microsoft.Windows.UI.Xaml.Common"
         r".targets"),
    ],
)
def test_subcategory_words(line: str, subcategory: str, code: str, file: str) -> None:
    # xaml-subcategory-de.err lines 1 and 3 (long node_modules paths shortened to C:\A)
    d = only(line)
    assert (d.subcategory, d.code, d.file, d.severity) == (subcategory, code, file, Severity.ERROR)


# --------------------------------------------------------------------------- markers

JENKINS_LINE = (r"GenericCodeRunner\CompositeCode.cs(137,32): warning CS1591: Missing XML comment for publicly "
                r"visible type or member 'CompositeCode.this[int]' [C:\j\6aa722\src\CodeRunner\CodeRunner.csproj]")


def test_brackets_inside_the_text_stay() -> None:
    d = only(JENKINS_LINE)
    assert d.message == "Missing XML comment for publicly visible type or member 'CompositeCode.this[int]'"
    assert d.project == r"C:\j\6aa722\src\CodeRunner\CodeRunner.csproj"


def test_bracketed_expression_without_marker_stays() -> None:
    line = (r"C:\A\ReactNativeShare.vcxproj(19,5): error MSB4184: Der Ausdruck "
            r""""[MSBuild]::GetDirectoryNameOfFileAbove('', node_modules\react-native-windows\package.json)" kann """
            r"nicht ausgewertet werden. Das System kann die angegebene Datei nicht finden.")
    d = only(line)
    assert d.message.startswith('Der Ausdruck "[MSBuild]::GetDirectoryNameOfFileAbove(')
    assert d.project is None


def test_two_trailing_markers_both_go() -> None:
    # msbuild-summary-section-nested.txt line 23
    d = only(r"  c:\playpens\Catalyst\PPM\src\Ptc.Ppm.Core\Features\NPDSiteFeature\NPDSiteFeature.feature : warning "
             r'SPT11: The Feature contains multiple project items with the name "AllGatesList". '
             r"[c:\playpens\Catalyst\PPM\src\Ptc.Ppm.Core\Ptc.Ppm.Core.csproj] [c:\playpens\Catalyst\PPM\PPM.build]")
    assert d.message == 'The Feature contains multiple project items with the name "AllGatesList".'
    assert d.file == r"c:\playpens\Catalyst\PPM\src\Ptc.Ppm.Core\Features\NPDSiteFeature\NPDSiteFeature.feature"
    assert d.project == r"c:\playpens\Catalyst\PPM\src\Ptc.Ppm.Core\Ptc.Ppm.Core.csproj"


@pytest.mark.parametrize(
    ("text", "message", "project"),
    [
        ("done [a.csproj]", "done", "a.csproj"),
        ("done [a.csproj] [b.sln]", "done", "a.csproj"),
        ("list[0]", "list[0]", None),
        ("see [int]", "see [int]", None),
        ("[a.csproj]", "", "a.csproj"),
        ("x [a.csproj][b.sln]", "x [a.csproj][b.sln]", None),  # no space before the bracket: text
        ("only [[[[]]]]", "only [[[[]]]]", None),
    ],
)
def test_split_markers(text: str, message: str, project: str | None) -> None:
    """Message tails (constructed): only a last bracket group that names a project file is a marker."""
    assert split_markers(text) == (message, project)


# --------------------------------------------------------------------------- prefixes and paths


def test_node_prefixes() -> None:
    d = only(r"   3:6>C:\Program Files\dotnet\sdk\10.0.200-preview.0.26103.119\Microsoft.Common.CurrentVersion"
             r'.targets(5094,5): error MSB3027: Could not copy "x". [e:\Pharmacy\Pharmacy.API\Pharmacy.API.csproj]')
    assert d.file == r"C:\Program Files\dotnet\sdk\10.0.200-preview.0.26103.119\Microsoft.Common.CurrentVersion.targets"
    assert (d.line, d.column, d.code) == (5094, 5, "MSB3027")
    assert only("     2>" + JENKINS_LINE).file == r"GenericCodeRunner\CompositeCode.cs"


def test_windows_path_with_spaces_and_warning_promoted_to_error() -> None:
    # warnaserror-cs4014-razor-spaces.log: CS4014 is a warning code printed as an error
    d = only(r"C:\Dev\JAIMES AF\JAIMES AF.Web\Components\Shared\MetricsGrid.razor(49,90): error CS4014: Because "
             r"this call is not awaited, execution of the current method continues before the call is completed. "
             r"Consider applying the 'await' operator to the result of the call. [C:\Dev\JAIMES AF\JAIMES AF.Web\JAIMES "
             r"AF.Web.csproj]")
    assert d.file == r"C:\Dev\JAIMES AF\JAIMES AF.Web\Components\Shared\MetricsGrid.razor"
    assert d.severity is Severity.ERROR and d.code == "CS4014"
    assert d.project == r"C:\Dev\JAIMES AF\JAIMES AF.Web\JAIMES AF.Web.csproj"


def test_posix_path_with_spaces() -> None:
    # The real gha line (Extensions.cs(41,52) CS0023) moved into a directory with spaces.
    d = only("/home/me/My Projects/src/Catalog.API/Extensions/Extensions.cs(41,52): error CS0023: Operator '.' "
             "cannot be applied to operand of type 'void' [/home/me/My Projects/src/Catalog.API/Catalog.API.csproj]")
    assert d.file == "/home/me/My Projects/src/Catalog.API/Extensions/Extensions.cs"
    assert d.message == "Operator '.' cannot be applied to operand of type 'void'"


def test_error_word_inside_a_path_is_not_the_category() -> None:
    # Constructed: the category words appear inside the path, after spaces, before the real one.
    d = only(r"C:\src\error handling\warning\Errors.cs(3,4): warning CS0168: The variable 'e' is declared but never "
             r"used [C:\src\error handling\App.csproj]")
    assert d.file == r"C:\src\error handling\warning\Errors.cs"
    assert (d.severity, d.code, d.line) == (Severity.WARNING, "CS0168", 3)


def test_sdk_targets_location_outside_the_repo() -> None:
    d = only(r"C:\Program Files\dotnet\sdk\10.0.101\Microsoft.Common.CurrentVersion.targets(5381,5): warning "
             r'MSB3026: Could not copy "E:\Graduation Project\ArabianHorseSystem\obj\Debug\net10.0\apphost.exe". '
             r"Beginning retry 1 in 1000ms. [E:\Graduation Project\ArabianHorseSystem\ArabianHorseSystem.csproj]")
    assert d.file is not None and d.file.endswith("Microsoft.Common.CurrentVersion.targets")
    assert d.project == r"E:\Graduation Project\ArabianHorseSystem\ArabianHorseSystem.csproj"


# --------------------------------------------------------------------------- multi-line events

MSB3277 = r"C:\Program Files\dotnet\sdk\10.0.201\Microsoft.Common.CurrentVersion.targets(2451,5): warning MSB3277: "
MARK = r" [C:\Users\tomas\source\repos\BalanceProjectionApp\tests\X.Tests\X.Tests.csproj]"


def test_msb3277_repeats_its_prefix_and_is_one_event() -> None:
    # dotnet-test-build-errors-then-passed.log lines 17-19 and the next event's header (line 32)
    result = feed(
        MSB3277 + 'Found conflicts between different versions of "Microsoft.EntityFrameworkCore" that could not be '
                  'resolved.' + MARK,
        MSB3277 + 'There was a conflict between "Microsoft.EntityFrameworkCore, Version=10.0.4.0" and '
                  '"Microsoft.EntityFrameworkCore, Version=10.0.5.0".' + MARK,
        MSB3277 + '    "Microsoft.EntityFrameworkCore, Version=10.0.4.0" was chosen because it was primary.' + MARK,
        MSB3277 + 'Found conflicts between different versions of "Microsoft.EntityFrameworkCore.Relational" that '
                  'could not be resolved.' + MARK,
    )
    assert result.printed_diagnostics == 4
    first, second = result.diagnostics
    assert first.message == ('Found conflicts between different versions of "Microsoft.EntityFrameworkCore" that '
                             'could not be resolved.')
    assert first.detail is not None and first.detail.splitlines() == [
        'There was a conflict between "Microsoft.EntityFrameworkCore, Version=10.0.4.0" and '
        '"Microsoft.EntityFrameworkCore, Version=10.0.5.0".',
        '    "Microsoft.EntityFrameworkCore, Version=10.0.4.0" was chosen because it was primary.',
    ]
    assert second.message.startswith('Found conflicts between different versions of "Microsoft.EntityFrameworkCore'
                                     '.Relational"')


def test_same_place_retries_stay_separate_events() -> None:
    # msb3026-retry-warnings-crlf.log: ten one-line events with one prefix, then the errors
    retry = (r"C:\Program Files\dotnet\sdk\10.0.101\Microsoft.Common.CurrentVersion.targets(5381,5): warning MSB3026: "
             r'Could not copy "a" to "b". Beginning retry {n} in 1000ms. [E:\G P\A.csproj]')
    result = feed(*(retry.format(n=n) for n in range(1, 11)))
    assert [d.message.split("retry ")[1][:2] for d in result.diagnostics] == [f"{n} " if n < 10 else "10"
                                                                             for n in range(1, 11)]
    assert all(d.detail is None for d in result.diagnostics)
    assert result.printed_diagnostics == 10


def test_nuget_continuations_go_to_detail() -> None:
    # nuget-restore-nu1605-warnaserror.log lines 32-35
    prefix = r"c:\Projects\SICCARV3\src\Services\Tenant\TenantRepository\TenantRepository.csproj : error "
    result = feed(
        prefix + "NU1605: Warning As Error: Detected package downgrade: Swashbuckle.AspNetCore from 6.9.0 to 6.8.1. "
                 r"Reference the package directly from the project to select a different version.  "
                 r"[c:\Projects\SICCARV3\SICCARV3.sln]",
        prefix + r"NU1605:  TenantRepository -> Siccar.Platform.Tenant.Core -> Swashbuckle.AspNetCore (>= 6.9.0)  "
                 r"[c:\Projects\SICCARV3\SICCARV3.sln]",
        prefix + r"NU1605:  TenantRepository -> Swashbuckle.AspNetCore (>= 6.8.1) [c:\Projects\SICCARV3\SICCARV3.sln]",
        prefix + r"NU1201: Project Siccar.Common is not compatible with net8.0 (.NETCoreApp,Version=v8.0). Project "
                 r"Siccar.Common supports: net9.0 (.NETCoreApp,Version=v9.0) [c:\Projects\SICCARV3\SICCARV3.sln]",
    )
    assert result.printed_diagnostics == 4
    nu1605, nu1201 = result.diagnostics
    assert nu1605.message.startswith("Warning As Error: Detected package downgrade")
    assert nu1605.project == r"c:\Projects\SICCARV3\SICCARV3.sln"
    assert nu1605.detail == (" TenantRepository -> Siccar.Platform.Tenant.Core -> Swashbuckle.AspNetCore (>= 6.9.0)\n"
                             " TenantRepository -> Swashbuckle.AspNetCore (>= 6.8.1)")
    assert nu1201.code == "NU1201" and nu1201.detail is None


def test_terminal_logger_multiline_message() -> None:
    # tl-multiline-warning.linux.txt, cleaned
    result = feed(
        "  project failed with 1 error(s) and 2 warning(s) (0.2s)",
        "    directory/file(1,2,3,4): warning AA0000: Warning!",
        "    directory/file(1,2,3,4): warning AA0000: ",
        "      A",
        "      Multi",
        "      Line",
        "      Warning!",
        "    directory/file(1,2,3,4): error AA0000: Error!",
        "",
    )
    assert [(d.message, d.detail) for d in result.diagnostics] == [
        ("Warning!", None), ("A", "Multi\nLine\nWarning!"), ("Error!", None)]
    assert result.printed_diagnostics == 3


NETWORK_MONITOR = [  # `dotnet test` (.NET 10, terminal logger) pasted in a public README
    "  NetworkMonitor.Tests test net10.0 failed with 1 error(s) (1.0s)",
    "    /home/kushal/src/dotnet/network-monitor/src/NetworkMonitor.Tests/Services/NetworkMonitorServiceTests.cs(122)"
    ": error TESTERROR: ",
    "      NetworkMonitor.Tests.Services.NetworkMonitorServiceTests.CheckNetworkAsync_RespectsCancellation (4ms): Error "
    "Message: Assert.Throws() Failure: No exception was thrown",
    "      Expected: typeof(System.OperationCanceledException)",
    "      Stack Trace:",
]


def test_terminal_logger_test_error_is_one_error_with_detail() -> None:
    d = only(*NETWORK_MONITOR)
    assert (d.code, d.line, d.column, d.severity) == ("TESTERROR", 122, None, Severity.ERROR)
    assert d.message.startswith("NetworkMonitor.Tests.Services.NetworkMonitorServiceTests.CheckNetworkAsync_Respects")
    assert d.detail == "Expected: typeof(System.OperationCanceledException)\nStack Trace:"


def test_localized_terminal_logger_output() -> None:
    # Russian .NET 8 terminal logger: the project line and "Error Message" are localized, `error` is not.
    d = only(
        "  Task3.Tests (тест) net8.0 сбой с ошибками (1) (1,2 с)",
        r"    C:\Users\Kiril\Documents\GitHub\framework_task3_EreminKD\Task3.Tests\ConfigTests.cs(47): error TESTERROR: ",
        "      ConfigTests.InvalidConfigThrows (3ms): Сообщение об ошибке: Assert.Throws() Failure: No exception was "
        "thrown",
    )
    assert d.message.startswith("ConfigTests.InvalidConfigThrows (3ms): Сообщение об ошибке:")
    assert (d.file, d.line) == (r"C:\Users\Kiril\Documents\GitHub\framework_task3_EreminKD\Task3.Tests\ConfigTests.cs",
                                47)


def test_detail_is_bounded() -> None:
    header = NETWORK_MONITOR[1]
    d = only(header, "      first", *(f"      frame {n}" for n in range(10_000)))
    assert d.message == "first" and d.detail is not None
    assert len(d.detail) < 20_000 and d.detail.endswith("more line(s) not kept)")


# --------------------------------------------------------------------------- summaries and non-diagnostics


def test_nested_summary_entries_are_parsed_and_headers_are_not() -> None:
    # msbuildexe-netfx-msb3822.log lines 22-30
    entry = (r"  C:\Program Files\Microsoft Visual Studio\2022\Community\MSBuild\Current\Bin\Microsoft.Common"
             r".CurrentVersion.targets(3455,5): error MSB3822: Non-string resources require the "
             r"System.Resources.Extensions assembly at runtime, but it was not found in this project's references. "
             r"[C:\Users\johna\source\repos\POS_System\POS_System\POS_System.csproj]")
    result = feed(
        "Build FAILED.",
        "",
        r'"C:\Users\johna\source\repos\POS_System\POS_System\POS_System.csproj" (Build target) (1) ->',
        "(CoreResGen target) -> ",
        entry,
        entry,
        "",
        "    0 Warning(s)",
        "    2 Error(s)",
    )
    assert len(result.diagnostics) == 2 and len(unique(result.diagnostics)) == 1
    assert result.run_errors == []
    assert "0 Warning(s), 2 Error(s)" in result.notes[0]


@pytest.mark.parametrize(
    "line",
    [
        "Process completed with exit code 1.",  # `##[error]` already stripped by the envelope
        "Build FAILED.",
        "    20 Error(s)",
        "    3 Warning(s)",
        "Build failed with 4 error(s) and 4 warning(s) in 5.0s",
        "  project failed with 2 error(s) and 2 warning(s) (0.2s)",
        '#23 ERROR: process "/bin/sh -c dotnet publish ./src/Catalog.API/Catalog.API.csproj" did not complete '
        "successfully: exit code: 1",
        "ERROR: failed to build: failed to solve: process did not complete successfully: exit code: 1",
        "  Error Message:",
        "   System.NullReferenceException : Object reference not set to an instance of an object.",
        "  Failed PvpAnalytics.Tests.Auth.IdentityServiceUnitTests.GenerateSecureRefreshToken [39 ms]",
        "[xUnit.net 00:00:00.63]     StateSmithTest.StringUtilsTest.ExampleFailingTest [FAIL]",
        "Failed!  - Failed:     7, Passed:    27, Skipped:    19, Total:    53, Duration: 25 s - PvpAnalytics.Tests.dll",
        "src/c/broken.c:10:20: error: ‘totl’ undeclared (first use in this function)",
        "error: could not compile `demo` due to 2 previous errors",
        "warning: unused variable: `x`",
        r'Done Building Project "C:\a\b.sln" (Restore target(s)) -- FAILED.',
        "E   AssertionError: assert 1 == 2",
    ],
)
def test_lines_that_only_look_like_diagnostics(line: str) -> None:
    assert parse_header(line) is None
    assert feed(line).diagnostics == []


def test_errors_only_log_with_a_warning_count_invents_no_warning() -> None:
    result = parse_path(DOTNET_LOGS / "errors-only-summary-mismatch.log", forced="msbuild")
    assert not [d for d in result.diagnostics if d.severity is Severity.WARNING]
    assert any("3 Warning(s), 20 Error(s)" in n for n in result.notes)


def test_counted_errors_without_error_lines_are_a_run_error() -> None:
    result = feed("Build FAILED.", "    0 Warning(s)", "    2 Error(s)")
    [run_error] = result.run_errors
    assert "counted 2 error(s)" in run_error.message


def test_a_successful_build_has_no_run_error() -> None:
    assert feed("Build succeeded.", "    0 Warning(s)", "    0 Error(s)").run_errors == []


# --------------------------------------------------------------------------- hostile lines


def _nested_repeats(pattern: str) -> list[str]:
    """Repeated sub-patterns (more than once) that contain another quantifier: the shape of
    catastrophic backtracking. An optional group `(...)?` repeats at most once and is harmless."""
    from re import _parser  # type: ignore[attr-defined]

    found: list[str] = []
    repeats = {_parser.MAX_REPEAT, _parser.MIN_REPEAT, _parser.POSSESSIVE_REPEAT}

    def walk(items: Any, inside: bool) -> None:
        for op, arg in items:
            if op in repeats:
                if inside:
                    found.append(str(op))
                walk(arg[2], inside or arg[1] > 1)
            elif op is _parser.SUBPATTERN:
                walk(arg[3], inside)
            elif op is _parser.BRANCH:
                for branch in arg[1]:
                    walk(branch, inside)
            elif op in (_parser.ASSERT, _parser.ASSERT_NOT):
                walk(arg[1], inside)

    walk(_parser.parse(pattern), False)
    return found


def test_no_regex_in_the_module_nests_quantifiers() -> None:
    patterns = [v.pattern for module in (msbuild, msbuild_lines) for v in vars(module).values()
                if isinstance(v, re.Pattern)]
    assert len(patterns) >= 8
    for pattern in patterns:
        assert _nested_repeats(pattern) == [], pattern
    assert _nested_repeats(r"(a+)+") != []  # the checker itself sees nesting
    assert _nested_repeats(r"(?:x(?:a|b+)*)+") != []


@pytest.mark.parametrize(
    "line",
    [
        "a(" * 50_000 + "): error CS1: x",
        "(1," * 30_000 + "): error CS1: x",
        "error " * 20_000,
        "x : " * 20_000 + "error CS1: y",
        "[" * 30_000 + "error" + "]" * 30_000,
        "file(1,2): error CS1: m " + " [a.csproj]" * 20_000,
        "\x00error\x00 CS1:\x00 warning\x00" * 1000,
        "C:\\" + "a " * 30_000 + "(1,2): warning CS2: long",
    ],
    ids=["a-paren", "digits-commas", "error-words", "colons", "brackets", "markers", "nuls", "long-path"],
)
def test_hostile_lines_finish_and_stay_sane(line: str) -> None:
    result = feed(line, line)
    for d in result.diagnostics:
        assert len(d.message) <= len(line)


def test_very_long_message_is_cut_but_its_marker_still_found() -> None:
    text = "x" * 60_000
    d = only(f"a.cs(1,2): error CS1: {text} [a.csproj]")
    assert d.message == "x" * msbuild._MAX_MESSAGE_CHARS + " ... (cut)" and d.project == "a.csproj"


def test_repeated_events_share_one_object_and_stay_listed() -> None:
    result = feed(*[JENKINS_LINE] * 1000)
    assert len(result.diagnostics) == 1000 == result.printed_diagnostics
    assert len({id(d) for d in result.diagnostics}) == 1


def test_distinct_diagnostics_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(msbuild, "_MAX_DISTINCT", 50)
    result = feed(*(f"a.cs({n},1): error CS1: distinct {n}" for n in range(1, 101)))
    assert len(result.diagnostics) == 50 and result.printed_diagnostics == 100
    assert any("50 diagnostic(s) beyond the first 50 distinct" in n for n in result.notes), result.notes
    assert result.run_errors == []  # the errors were seen, so no "failed without an error" claim


def test_listed_events_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(msbuild, "_MAX_EVENTS", 80)
    result = feed(*[JENKINS_LINE] * 100)
    assert len(result.diagnostics) == 80 and result.printed_diagnostics == 100
    assert any("20 repeated diagnostic(s) after the first 80" in n for n in result.notes), result.notes


def test_consumer_keeps_no_lines() -> None:
    consumer = PARSER.consumer("big.log")
    for n in range(50_000):
        consumer.feed(f"  Compiling item {n} of a long build without any diagnostic")
    state = [v for v in vars(consumer).values() if isinstance(v, list | dict | str) and v and v != "big.log"]
    assert state == []
    assert consumer.finish().diagnostics == []


# --------------------------------------------------------------------------- the line cache
# The consumer caches what each distinct header line parses to (and the Diagnostic of events
# made of cached lines). It is a speed-up only: every result must equal a parse without it,
# down to which listed diagnostics are one shared object.

ALL_DOTNET_LOGS = sorted(p for p in DOTNET_LOGS.iterdir() if p.is_file() and not p.name.endswith((".json", ".md")))


def _log_lines(path: Path) -> list[str]:
    with path.open("rb") as fh:
        return list(iter_log_lines(fh))


def _sharing(result: ParseResult) -> list[int]:
    """For each listed diagnostic, the index of the first entry that is the same object."""
    first: dict[int, int] = {}
    return [first.setdefault(id(d), index) for index, d in enumerate(result.diagnostics)]


def _parse_with_and_without_cache(lines: Iterable[str], cache_entries: int = msbuild.CACHE_ENTRIES
                                  ) -> tuple[ParseResult, ParseResult, msbuild.MsbuildConsumer]:
    cached = msbuild.MsbuildConsumer("in.log", cache_entries=cache_entries)
    fresh = msbuild.MsbuildConsumer("in.log", cache_entries=0)
    for line in lines:
        cached.feed(line)
        fresh.feed(line)
    with_cache, without = cached.finish(), fresh.finish()
    assert fresh._lines == {}
    assert with_cache == without
    assert _sharing(with_cache) == _sharing(without)
    return with_cache, without, cached


def test_every_dotnet_log_is_in_the_cache_comparison() -> None:
    assert len(ALL_DOTNET_LOGS) >= 20


@pytest.mark.parametrize("log", ALL_DOTNET_LOGS, ids=lambda p: p.name)
def test_the_line_cache_changes_no_result_on_real_logs(log: Path) -> None:
    lines = _log_lines(log)
    result, _, _ = _parse_with_and_without_cache(lines)
    assert result.printed_diagnostics == parse_path(log, forced="msbuild").printed_diagnostics
    # The log twice over: every header line of the second copy is read from the cache.
    _parse_with_and_without_cache(lines + lines)


def test_a_repeated_line_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []

    def counting_parse_header(line: str) -> msbuild_lines.Header | None:
        parsed.append(line)
        return msbuild_lines.parse_header(line)

    monkeypatch.setattr(msbuild, "parse_header", counting_parse_header)
    consumer = PARSER.consumer("cs-errors-multi-win.log")
    for line in _log_lines(DOTNET_LOGS / "cs-errors-multi-win.log"):
        consumer.feed(line)
    # 46 header lines (the expected file), 23 distinct (grep | sort -u): each line in-build, then
    # verbatim in the summary. The summary copies come from the cache.
    assert consumer.finish().printed_diagnostics == 46
    headers = [line for line in parsed if msbuild_lines.parse_header(line) is not None]
    assert len(headers) == len(set(headers)) == 23


def _hostile_lines(seed: int, count: int) -> list[str]:
    """Every event shape the consumer assembles, in random order: mostly all-distinct lines (the
    cache fills up and stops taking lines), and some drawn from small pools (repeats hit it)."""
    rnd = random.Random(seed)
    lines: list[str] = []
    while len(lines) < count:
        n = len(lines) if rnd.random() < 0.7 else rnd.randrange(4)  # distinct, or one of a few
        shape = rnd.randrange(8)
        if shape == 0:  # one-line event, markers, node prefix
            lines.append(f"{n % 3}>src/f{n}.cs({n},{n % 9 + 1}): error CS{n % 900 + 100}: message {n} [p{n % 5}.csproj]")
        elif shape == 1:  # MSB3277: the prefix repeated on every line, text indented after it
            prefix = f"C:\\p{n % 7}.csproj : warning MSB3277: "
            details = [prefix + f"    detail {i} {n}" for i in range(rnd.randrange(6))]
            lines += [prefix + f"Found conflicts {n}", *details, *([prefix + "    "] if n % 3 == 0 else [])]
        elif shape == 2:  # same place, same prefix, not indented: held, then decided by the next line
            prefix = "C:\\b\\x.targets(4,5): warning MSB3026: "
            lines += [prefix + f"Retry {n}", prefix + f"Retry {n + 1}", *([prefix + "  more"] if n % 2 else [])]
        elif shape == 3:  # terminal logger: empty header text, an indented body
            lines.append(f"  src/t{n % 3}.cs(1,1): error CS0103: ")
            lines += [f"      body {i} of {n}" for i in range(rnd.randrange(7))]
        elif shape == 4:  # empty first line, text with the repeated prefix
            lines += [f"a{n % 2}.cs(1,1): error CS1: ", f"a{n % 2}.cs(1,1): error CS1: text {n}"]
        elif shape == 5:  # long lines, to reach the byte bound of the cache
            lines.append(f"f{n}.cs(1,1): warning CS2: " + "w" * rnd.randrange(2000) + f" {n}")
        elif shape == 6:  # lines that mention the words but are no header
            lines.append(f"  warning: not a diagnostic {n}")
        else:
            lines += ["", f"  Compiling {n}", "Build FAILED.", f"    {n % 4} Error(s)"]
    return lines


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_line_cache_changes_no_result_on_hostile_input(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Small bounds, so that one input runs into every one of them in both modes.
    monkeypatch.setattr(msbuild, "_CACHE_BYTES", 64 * 1024)
    monkeypatch.setattr(msbuild, "_MAX_KEY_PARTS", 3)
    monkeypatch.setattr(msbuild, "_MAX_DISTINCT", 800)
    monkeypatch.setattr(msbuild, "_MAX_DETAIL_LINES", 4)
    monkeypatch.setattr(msbuild, "_MAX_MESSAGE_CHARS", 1000)
    result, _, consumer = _parse_with_and_without_cache(_hostile_lines(seed, 6000), cache_entries=300)
    assert any("not kept (memory bound)" in note for note in result.notes), result.notes
    assert 0 < len(consumer._lines) <= 300 and consumer._cache_bytes <= 64 * 1024


def test_the_line_cache_is_bounded_on_all_distinct_lines() -> None:
    lines = [f"src/f{n}.cs({n},1): error CS{n % 9000 + 1000}: distinct message number {n} [a.csproj]"
             for n in range(msbuild.CACHE_ENTRIES + 5000)]
    result, _, consumer = _parse_with_and_without_cache(lines + lines[:100])
    assert len(consumer._lines) == msbuild.CACHE_ENTRIES and consumer._cache_bytes <= msbuild._CACHE_BYTES
    assert result.printed_diagnostics == len(lines) + 100
