"""Gates against tests that stop running: skipped, filtered out of the run, compiled out,
commented out, or run with their failure ignored — in each spelling the frameworks accept.

pytest: marks (`@pytest.mark.skip`, `@mark.skipif` after `from pytest import mark`, `pytestmark
= ...`, `marks=`), `pytest.skip(` calls, collection hooks and `collect_ignore` in conftest, and
`addopts`/command options in pytest.ini, pyproject.toml, setup.cfg and tox.ini. xUnit/NUnit/
MSTest: `Skip =` in any attribute (split over lines or set from a constant), `[Ignore]`,
`[Explicit]`, `Assert.Ignore`/`Inconclusive`/`Skip`, `#if` around tests, a test attribute in a
comment, runsettings and `VSTestTestCaseFilter` filters, `IsTestProject` false.
"""

from __future__ import annotations

import re

from ci_agent.patch import lines
from ci_agent.patch.diff import FilePatch, Rejection
from ci_agent.patch.lines import Line

_HOW = "A test that does not run is not a fix: make it pass by fixing the code it tests."
_HOW_FILTER = ("Filtering tests out of the run hides the failure: keep every test in the run and fix "
               "the code the failing one tests.")

_SKIP_MARK = re.compile(
    r"\bmark\s*\.\s*(skip|skipif|xfail)\b|"  # @pytest.mark.skip, @mark.xfail, pytestmark = [...]
    r"\bpytest\s*\.\s*(skip|xfail|importorskip|exit)\s*[.(]|"  # pytest.skip(...), pytest.skip.Exception
    r"^\s*from\s+(_?pytest|unittest)\b.*\bimport\b.*\b(skip|skipif|xfail|skipIf|skipUnless|"
    r"expectedFailure|SkipTest)\b|"  # then skip("...") or @skip anywhere
    r"\braise\s+(unittest\s*\.\s*)?SkipTest\b|"
    r"@unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|\bself\.skipTest\s*\(|"
    r"\bt\.Skip(Now|f)?\s*\(|"  # Go
    r"\b(it|test|describe)\.(skip|todo)\s*\(|\bx(it|describe|test)\s*\(|@Disabled\b|@Ignore\b"  # JS/JVM
)
# `Skip =` inside an attribute; outside one (`new Page { Skip = 10 }`) only in test files
_SKIP_ARGUMENT = re.compile(r"\bSkip(Unless|When|Exceptions)?\s*=(?!=)")
_DOTNET_SKIP = re.compile(
    r"\[[^\]]*\bSkip(Unless|When|Exceptions)?\s*=(?!=)|"  # [Fact(Skip = "...")], Skip = Reason
    r"[\[,]\s*(\w+\s*\.\s*)*(Ignore|Explicit)(Attribute)?\s*[\](,]|"  # [Ignore], [Fact, Ignore("x")]
    r"\bAssert\s*\.\s*(Ignore|Inconclusive|Skip(Unless|When)?)\s*\(|"
    r"\bSkip\s*\.\s*(If|IfNot|Unless)\s*\(|"  # Xunit.SkippableFact
    r"\[\s*(Skippable(Fact|Theory)|IgnoreOn\w*|Ignore\w*If\w*)\b"
)
_TEST_ATTRIBUTE = re.compile(r"\[\s*(Fact|Theory|Test|TestMethod|TestCase|TestCaseSource|DataTestMethod|"
                             r"SkippableFact|DataRow|InlineData)\b")
COMMENTED_TEST = re.compile(
    r"(//|/\*)\s*\[\s*(Fact|Theory|Test|TestMethod|TestCase|DataTestMethod)\b|"
    r"^\s*#\s*(@pytest\b|@mark\b|def\s+test_?\w*\s*\()|^\s*//\s*(it|test)\s*\(\s*['\"`]"
)
# Conditional compilation: only target-framework symbols say something other than "off"
_IF_DIRECTIVE = re.compile(r"^\s*#\s*(if|elif)\b(.*)$")
_FRAMEWORK_SYMBOLS = re.compile(r"^\s*!?\s*\(?\s*(NET\w*|NETCOREAPP\w*|NETSTANDARD\w*|NETFRAMEWORK)\s*\)?"
                                r"\s*$")
_COLLECTION_HOOK = re.compile(
    r"\bcollect_ignore(_glob)?\b|\bdef\s+pytest_(collection_modifyitems|ignore_collect|collect_file|"
    r"pycollect_makeitem|collection|itemcollected|deselected|runtest_setup|runtest_call|"
    r"runtest_protocol|runtest_makereport|report_teststatus|generate_tests)\b|"
    r"\.hook\s*\.\s*pytest_deselected\b|\badd_marker\s*\(\s*.*\b(skip|xfail)\b"
)
_PYTEST_CONFIG = re.compile(r"(^|/)(pytest\.ini|pyproject\.toml|setup\.cfg|tox\.ini|\.pytest\.ini)$", re.I)
_PYTEST_FILTER = re.compile(
    r"(^|[\s\"',\[=])(-k|-m|--deselect|--ignore(-glob)?|--co|--collect-only)(?=$|[\s\"',=\]])|"
    r"(^|[\s\"',\[=])-p[\s\"',]*no:|"
    r"^\s*(norecursedirs|testpaths|python_files|python_classes|python_functions|"
    r"collect_ignore\w*)\s*=|\bPYTEST_ADDOPTS\b|^\s*xfail_strict\s*=\s*(false|0)\b"
)
_DOTNET_FILTER = re.compile(
    r"\bTestCaseFilter\b|\bVSTestTestCaseFilter\b|<\s*IsTestProject\s*>\s*(?!true\s*<)|"
    r"<\s*IsTestProject\b[^>]*Condition|\bIsTestProject\s*=\s*[\"']?false|"
    r"(^|[\s\"'])(--filter|/TestCaseFilter:|--treenode-filter|-trait-)(?=$|[\s\"'=:])",
    re.I,
)
_TEST_PROJECT_ON = re.compile(r"<\s*IsTestProject\s*>\s*true", re.I)
_MSBUILD = re.compile(r"\.(csproj|vbproj|fsproj|props|targets|runsettings|testconfig\.json|rsp)$|"
                      r"(^|/)(testconfig|xunit\.runner)\.json$", re.I)
_DOTNET_SOURCE = re.compile(r"\.(cs|fs|vb)$", re.I)
_OTHER_SOURCE = re.compile(r"\.(py|pyi|[cm]?[jt]sx?|go|java|kts?|scala|groovy|rb|rs|php|swift)$", re.I)
# `python -m pytest` is a module to run, not pytest's `-m` marker filter
_PYTHON_M = re.compile(r"\bpython[\d.]*((\s+-[A-Za-z]+)*)\s+-m\s+[\w.]+")
# A test run whose failure no longer fails the build: `pytest || true`, ContinueOnError
_IGNORED_RESULT = re.compile(
    r"\|\|\s*(true|:|exit\s+0)(?![\w-])|\bContinueOnError\s*=\s*[\"']?(true|WarnAndContinue|"
    r"ErrorAndContinue)|\bIgnoreExitCode\s*=\s*[\"']?true|-\s*(-)?ignore-?failures?\b|"
    r"--exit-zero\b|\bset\s+\+e\b|--passWithNoTests\b",
    re.I,
)
_SUBSTITUTION = re.compile(r"\$\([^()]*\)")
_BUILD_SCRIPT = re.compile(
    r"((^|/)(Makefile|GNUmakefile|makefile|justfile|Taskfile\.ya?ml|package\.json|tox\.ini|noxfile\.py|"
    r"setup\.cfg|pyproject\.toml|Directory\.Build\.\w+|CMakeLists\.txt)|\.(mk|sh|bash|ps1|cmd|bat|"
    r"csproj|vbproj|fsproj|props|targets|cake|cmake))$",
    re.I,
)


def _conditional_test_regions(fp: FilePatch, test_file: bool) -> Line | None:
    """An added `#if` on a symbol that is not a target framework, in a test file or next to a
    test: `#if false` and `#if DEBUG_NEVER` compile the tests out."""
    near_test = test_file or any(_TEST_ATTRIBUTE.search(line.text) for _, line in lines.new_side(fp))
    if not near_test:
        return None
    for line in lines.added(fp):
        match = _IF_DIRECTIVE.match(line.text)
        if match and not _FRAMEWORK_SYMBOLS.match(match[2].split("//")[0]):
            return line
    return None


def skip_rejections(fp: FilePatch, test_file: bool) -> list[Rejection]:
    p = fp.path
    dotnet = bool(_DOTNET_SOURCE.search(p))
    if not dotnet and not _OTHER_SOURCE.search(p):
        return []  # documentation may name a skip; only code can do one
    added = lines.added(fp)
    out: list[Rejection] = []
    hit = lines.first(added, _SKIP_MARK) if not dotnet else None
    if dotnet:
        hit = lines.first(added, _DOTNET_SKIP) or (lines.first(added, _SKIP_ARGUMENT) if test_file else None)
        # joined blocks: `[Fact(\n    Skip = "later")]` is split over lines
        block = next((b for b in lines.blocks(fp) if _DOTNET_SKIP.search(" ".join(b.text.split()))), None)
        if hit is None and block is not None:
            hit = lines.first(added, _SKIP_ARGUMENT) or Line(block.number, " ".join(block.text.split()))
    if hit is not None:
        out.append(Rejection("gate.test_skip", p, lines.message(fp, hit, "the patch skips or disables a test",
                                                           _HOW)))
    elif (commented := lines.first(added, COMMENTED_TEST)) is not None:
        out.append(Rejection("gate.test_skip", p, lines.message(
            fp, commented, "the patch comments out a test", "Keep the test attribute (or function) "
            "as code. " + _HOW)))
    elif dotnet and (cond := _conditional_test_regions(fp, test_file)) is not None:
        out.append(Rejection("gate.test_skip", p, lines.message(
            fp, cond, "the patch wraps tests in conditional compilation, which can compile them out",
            "Leave tests unconditional. " + _HOW)))
    elif p.endswith(".py") and (hook := lines.first(added, _COLLECTION_HOOK)) is not None:
        out.append(Rejection("gate.test_filter", p, lines.message(
            fp, hook, "the patch changes which tests pytest collects or how their results count",
            _HOW_FILTER)))
    return out


def filter_rejections(fp: FilePatch) -> list[Rejection]:
    """Test selection in configuration and build files, and test commands whose failure is
    ignored."""
    p = fp.path
    added = lines.added(fp)
    out: list[Rejection] = []
    hit = None
    if _PYTEST_CONFIG.search(p):
        hit = next((a for a in added if _PYTEST_FILTER.search(_PYTHON_M.sub("python", a.text))), None)
    if hit is None and _MSBUILD.search(p):
        hit = lines.first(added, _DOTNET_FILTER)
        if hit is None:  # `<IsTestProject>true</IsTestProject>` removed
            hit = lines.first(lines.removed(fp), _TEST_PROJECT_ON)
    if hit is not None:
        out.append(Rejection("gate.test_filter", p, lines.message(
            fp, hit, "the patch changes which tests run", _HOW_FILTER)))
    # `$(git describe || true)` captures a value; `pytest || true` hides a failure
    ignored = next((a for a in added if _IGNORED_RESULT.search(_SUBSTITUTION.sub("", a.text))), None) \
        if _BUILD_SCRIPT.search(p) else None
    if ignored is not None:
        out.append(Rejection("gate.test_result_ignored", p, lines.message(
            fp, ignored, "the patch makes a failing command count as success", "Let the build and "
            "test commands fail when they fail, and fix what makes them fail.")))
    return out
