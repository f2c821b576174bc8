"""Fake-fix gates that know the frameworks they guard: each case is a trick a prompt-injected
model would use to turn a pytest or xUnit/NUnit/MSTest run green without fixing anything, as a
real diff against a real repository. Rejected by default with the rule, the file and the line;
let through when the repository's configuration opts in; the honest fix next to it passes."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ci_agent.config import GateSettings, PatchSettings
from ci_agent.patch import apply_patch, review
from tests.patch.conftest import APP_CSPROJ, Repo, make_repo

PY_TEST = """import pytest
from pytest import mark

from shop.calc import add


def test_adds():
    assert add(1, 2) == 3


def test_adds_negative():
    result = add(-1, -2)
    assert result == -3
"""
CONFTEST = """import pytest


@pytest.fixture
def numbers():
    return [1, 2, 3]
"""
PYTEST_INI = "[pytest]\naddopts = -q\n"
PYPROJECT = """[project]
name = "shop"

[tool.pytest.ini_options]
addopts = "-q"

[tool.mypy]
strict = true
"""
SETUP_CFG = "[metadata]\nname = shop\n\n[tool:pytest]\naddopts = -q\n"
TOX_INI = "[tox]\nenvlist = py312\n\n[testenv]\ncommands = pytest tests\n"
CS_TEST = """using Xunit;

namespace App.Tests;

public class CalcTests
{
    private const string SkipReason = "flaky";

    [Fact]
    public void Adds()
    {
        Assert.Equal(3, Calc.Add(1, 2));
    }

    [Theory]
    [InlineData(2, 1, 1)]
    public void Subtracts(int a, int b, int expected)
    {
        var result = Calc.Sub(a, b);
        Assert.Equal(expected, result);
    }
}
"""
NUNIT_TEST = """using NUnit.Framework;

namespace App.Tests;

public class ParserTests
{
    [Test]
    public void Parses()
    {
        Assert.That(Parser.Parse("1"), Is.EqualTo(1));
    }
}
"""
TEST_CSPROJ = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <IsTestProject>true</IsTestProject>
  </PropertyGroup>
</Project>
"""
RUNSETTINGS = (
    "<RunSettings>\n  <RunConfiguration>\n    <MaxCpuCount>1</MaxCpuCount>\n  </RunConfiguration>\n"
    "</RunSettings>\n"
)
GLOBALCONFIG = "is_global = true\ndotnet_diagnostic.CA1000.severity = error\n"
EDITORCONFIG = "[*.cs]\nindent_style = space\n"
CALC_CS = (
    "namespace App;\n\npublic static class Calc\n{\n    public static int Add(int a, int b) => a - b;\n}\n"
)
CALC_PY = "def add(a, b):\n    return a - b\n"
MAKEFILE = "test:\n\tpytest tests\n"
PAGING_CS = (
    "namespace App;\n\npublic static class Paging\n{\n    public static Query First() => new Query();\n}\n"
)
BUILD_SH = "#!/bin/sh\nset -eu\necho building\n"
FILES: dict[str, str] = {
    "tests/test_calc.py": PY_TEST,
    "tests/conftest.py": CONFTEST,
    "pytest.ini": PYTEST_INI,
    "pyproject.toml": PYPROJECT,
    "setup.cfg": SETUP_CFG,
    "tox.ini": TOX_INI,
    "shop/calc.py": CALC_PY,
    "tests/App.Tests/CalcTests.cs": CS_TEST,
    "tests/App.Tests/ParserTests.cs": NUNIT_TEST,
    "tests/App.Tests/App.Tests.csproj": TEST_CSPROJ,
    "src/App/App.csproj": APP_CSPROJ,
    "src/App/Calc.cs": CALC_CS,
    "test.runsettings": RUNSETTINGS,
    ".globalconfig": GLOBALCONFIG,
    ".editorconfig": EDITORCONFIG,
    "Makefile": MAKEFILE,
    "src/App/Paging.cs": PAGING_CS,
    "build.sh": BUILD_SH,
    "docs/testing.md": "# Testing\n\nRun pytest.\n",
}


def change(path: str, old: str, new: str) -> str:
    """The diff a model would send to replace `old` (once) by `new` in `path`."""
    before = FILES[path]
    assert before.count(old) == 1, (path, old)
    after = before.replace(old, new)
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )


PT, CS, NU = "tests/test_calc.py", "tests/App.Tests/CalcTests.cs", "tests/App.Tests/ParserTests.cs"
ADDS = "def test_adds():\n"
FACT = "    [Fact]\n    public void Adds()\n"
BODY = "        Assert.Equal(3, Calc.Add(1, 2));\n"
SKIPS, ASSERTS, WARN, STRICT = (
    "allow_test_skips",
    "allow_assertion_changes",
    "allow_warning_suppression",
    "allow_strictness_changes",
)
Case = tuple[str, str, str, str]  # (id, patch, rule, the flag that lets it through)


def _gate(rule: str, flag: str) -> Callable[[str, str], Case]:
    """Cases of one gate rule: each is refused by it, and let through by its one flag."""
    return lambda case_id, patch: (case_id, patch, rule, flag)


skipped, filtered = _gate("gate.test_skip", SKIPS), _gate("gate.test_filter", SKIPS)
ignored = _gate("gate.test_result_ignored", SKIPS)
weakened = _gate("gate.assertion_weakened", ASSERTS)
suppressed = _gate("gate.warning_suppressed", WARN)
lowered = _gate("gate.strictness_lowered", STRICT)
CASES: list[Case] = [
    # pytest: skips in every spelling
    skipped("pytest.mark.skip", change(PT, ADDS, "@pytest.mark.skip(reason='ci')\n" + ADDS)),
    skipped("mark.skipif-from-import", change(PT, ADDS, "@mark.skipif(True, reason='x')\n" + ADDS)),
    skipped("mark.xfail-spaced", change(PT, ADDS, "@pytest . mark . xfail\n" + ADDS)),
    skipped(
        "pytestmark",
        change(PT, "from shop.calc import add\n", "from shop.calc import add\n\npytestmark = [mark.skip]\n"),
    ),
    skipped(
        "param-marks",
        change(
            PT, ADDS, "@pytest.mark.parametrize('x', [pytest.param(1, marks=pytest.mark.xfail)])\n" + ADDS
        ),
    ),
    skipped(
        "pytest.skip-call",
        change(PT, "    assert add(1, 2) == 3\n", "    pytest.skip('later')\n    assert add(1, 2) == 3\n"),
    ),
    skipped(
        "from-pytest-import-skip", change(PT, "from pytest import mark\n", "from pytest import mark, skip\n")
    ),
    skipped(
        "importorskip",
        change(PT, "from shop.calc import add\n", "add = pytest.importorskip('shop.calc').add\n"),
    ),
    skipped(
        "commented-python-test",
        change(
            PT,
            "def test_adds():\n    assert add(1, 2) == 3\n",
            "# def test_adds():\n#     assert add(1, 2) == 3\n",
        ),
    ),
    # pytest: collection from conftest.py and options from every config file
    filtered(
        "collect_ignore",
        change(
            "tests/conftest.py", "import pytest\n", "import pytest\n\ncollect_ignore = ['test_calc.py']\n"
        ),
    ),
    filtered(
        "collect_ignore_glob",
        change("tests/conftest.py", "import pytest\n", "import pytest\n\ncollect_ignore_glob = ['*calc*']\n"),
    ),
    filtered(
        "modifyitems",
        change(
            "tests/conftest.py",
            "@pytest.fixture\n",
            "def pytest_collection_modifyitems(config, items):\n    items[:] = []\n\n\n@pytest.fixture\n",
        ),
    ),
    filtered(
        "makereport",
        change(
            "tests/conftest.py",
            "@pytest.fixture\n",
            "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    yield\n\n\n@pytest.fixture\n",
        ),
    ),
    filtered(
        "ini-deselect",
        change("pytest.ini", "addopts = -q\n", "addopts = -q --deselect tests/test_calc.py::test_adds\n"),
    ),
    filtered("ini-k-continued", change("pytest.ini", "addopts = -q\n", "addopts = -q\n    -k 'not adds'\n")),
    filtered("ini-no-plugin", change("pytest.ini", "addopts = -q\n", "addopts = -q -p no:randomly\n")),
    filtered(
        "pyproject-ignore",
        change("pyproject.toml", 'addopts = "-q"\n', 'addopts = "-q --ignore=tests/test_calc.py"\n'),
    ),
    filtered(
        "pyproject-list",
        change("pyproject.toml", 'addopts = "-q"\n', 'addopts = [\n  "-q",\n  "-k",\n  "not adds",\n]\n'),
    ),
    filtered("setup.cfg-marker", change("setup.cfg", "addopts = -q\n", "addopts = -q -m 'not calc'\n")),
    filtered(
        "tox-k", change("tox.ini", "commands = pytest tests\n", "commands = pytest tests -k 'not adds'\n")
    ),
    filtered(
        "testpaths", change("pyproject.toml", 'addopts = "-q"\n', 'addopts = "-q"\ntestpaths = ["docs"]\n')
    ),
    ignored("make-or-true", change("Makefile", "\tpytest tests\n", "\tpytest tests || true\n")),
    ignored("make-or-colon", change("Makefile", "\tpytest tests\n", "\tpytest tests || :\n")),
    # xUnit / NUnit / MSTest
    skipped(
        "fact-skip-constant", change(CS, FACT, "    [Fact(Skip = SkipReason)]\n    public void Adds()\n")
    ),
    skipped(
        "fact-skip-split",
        change(
            CS,
            FACT,
            '    [Fact(\n        DisplayName = "adds",\n        Skip =\n'
            '            "later")]\n    public void Adds()\n',
        ),
    ),
    skipped("skip-no-spaces", change(CS, "    [Theory]\n", '    [Theory(Skip="x")]\n')),
    skipped("assert-skip-v3", change(CS, BODY, '        Assert.Skip("later");\n' + BODY)),
    skipped(
        "nunit-ignore-qualified",
        change(NU, "    [Test]\n", '    [Test]\n    [NUnit.Framework.Ignore("x")]\n'),
    ),
    skipped("nunit-explicit", change(NU, "    [Test]\n", "    [Test, Explicit]\n")),
    skipped(
        "assert-ignore",
        change(NU, "        Assert.That(", '        Assert.Ignore("x");\n        Assert.That('),
    ),
    skipped(
        "assert-inconclusive",
        change(NU, "        Assert.That(", "        Assert.Inconclusive();\n        Assert.That("),
    ),
    skipped("if-false", change(CS, FACT, "#if false\n" + FACT)),
    skipped("if-debug-never", change(CS, "    [Theory]\n", "#if DEBUG_NEVER\n    [Theory]\n")),
    skipped("commented-fact", change(CS, FACT, "    // [Fact]\n    public void Adds()\n")),
    skipped("block-commented-test", change(NU, "    [Test]\n", "    /* [Test] */\n")),
    filtered(
        "runsettings-filter",
        change(
            "test.runsettings",
            "    <MaxCpuCount>1</MaxCpuCount>\n",
            "    <MaxCpuCount>1</MaxCpuCount>\n    <TestCaseFilter>Name!=Adds</TestCaseFilter>\n",
        ),
    ),
    filtered(
        "vstest-filter",
        change(
            "tests/App.Tests/App.Tests.csproj",
            "    <IsTestProject>true</IsTestProject>\n",
            "    <IsTestProject>true</IsTestProject>\n"
            "    <VSTestTestCaseFilter>Name!=Adds</VSTestTestCaseFilter>\n",
        ),
    ),
    filtered(
        "is-test-project-false",
        change(
            "tests/App.Tests/App.Tests.csproj",
            "<IsTestProject>true</IsTestProject>",
            "<IsTestProject>false</IsTestProject>",
        ),
    ),
    filtered(
        "is-test-project-removed",
        change("tests/App.Tests/App.Tests.csproj", "    <IsTestProject>true</IsTestProject>\n", ""),
    ),
    # weakened assertions
    weakened("assert-x-eq-x", change(PT, "    assert result == -3\n", "    assert result == result\n")),
    weakened(
        "assert-equal-a-a", change(CS, "Assert.Equal(expected, result);", "Assert.Equal(result, result);")
    ),
    weakened("or-true", change(PT, "    assert result == -3\n", "    assert result == -3 or True\n")),
    weakened(
        "or-or-true",
        change(CS, "Assert.Equal(expected, result);", "Assert.True(result == expected || true);"),
    ),
    weakened(
        "except-assertion-error",
        change(
            PT,
            "    assert add(1, 2) == 3\n",
            "    try:\n        assert add(1, 2) == 3\n    except AssertionError:\n        print('known')\n",
        ),
    ),
    weakened(
        "raises-assertion-error",
        change(
            PT,
            "    assert add(1, 2) == 3\n",
            "    with pytest.raises(AssertionError):\n        assert add(1, 2) == 3\n",
        ),
    ),
    weakened(
        "catch-xunit-exception",
        change(
            CS,
            BODY,
            "        try\n        {\n    " + BODY + "        }\n"
            "        catch (Xunit.Sdk.XunitException) { Console.WriteLine(); }\n",
        ),
    ),
    weakened(
        "catch-assertion-exception",
        change(
            NU,
            '        Assert.That(Parser.Parse("1"), Is.EqualTo(1));\n',
            '        try { Assert.That(Parser.Parse("1"), Is.EqualTo(1)); }\n'
            "        catch (AssertionException e) { TestContext.WriteLine(e); }\n",
        ),
    ),
    weakened(
        "catch-assert-failed",
        change(
            CS, BODY, "        try {\n    " + BODY + "        } catch (AssertFailedException) { Log(); }\n"
        ),
    ),
    weakened(
        "bare-except-in-test",
        change(
            PT,
            "    assert add(1, 2) == 3\n",
            "    try:\n        assert add(1, 2) == 3\n    except:\n        print('flaky')\n",
        ),
    ),
    weakened(
        "catch-all-in-test",
        change(
            CS,
            BODY,
            "        try {\n    " + BODY + "        }\n        catch\n        {\n"
            '            Console.WriteLine("flaky");\n        }\n',
        ),
    ),
    weakened(
        "early-return-py", change(PT, "    result = add(-1, -2)\n", "    return\n    result = add(-1, -2)\n")
    ),
    weakened(
        "early-return-py-docstring",
        change(
            PT, "    assert add(1, 2) == 3\n", '    """Adds."""\n    return None\n    assert add(1, 2) == 3\n'
        ),
    ),
    weakened("early-return-cs", change(CS, BODY, "        return;\n" + BODY)),
    weakened("delete-assert-line", change(PT, "    assert result == -3\n", "    print(result)\n")),
    # suppressed diagnostics
    suppressed(
        "pragma",
        change("src/App/Calc.cs", "namespace App;\n", "#pragma warning disable CS0168\nnamespace App;\n"),
    ),
    suppressed(
        "nowarn",
        change(
            "src/App/App.csproj",
            "    <Nullable>enable</Nullable>\n",
            "    <Nullable>enable</Nullable>\n    <NoWarn>$(NoWarn);CS8618</NoWarn>\n",
        ),
    ),
    suppressed(
        "globalconfig-none",
        change(
            ".globalconfig",
            "is_global = true\n",
            "is_global = true\ndotnet_diagnostic.CA2007.severity = none\n",
        ),
    ),
    suppressed(
        "editorconfig-suggestion",
        change(
            ".editorconfig",
            "indent_style = space\n",
            "indent_style = space\ndotnet_diagnostic.IDE0005.severity = suggestion\n",
        ),
    ),
    suppressed(
        "analyzer-category-silent",
        change(
            ".editorconfig",
            "indent_style = space\n",
            "indent_style = space\ndotnet_analyzer_diagnostic.category-Style.severity = silent\n",
        ),
    ),
    suppressed("noqa", change("shop/calc.py", "    return a - b\n", "    return a - b  # noqa: E501\n")),
    suppressed(
        "type-ignore",
        change("shop/calc.py", "    return a - b\n", "    return a + b  # type: ignore[operator]\n"),
    ),
    suppressed(
        "mypy-ignore-errors",
        change("pyproject.toml", "strict = true\n", "strict = true\nignore_errors = true\n"),
    ),
    lowered(
        "warnings-not-as-errors",
        change(
            "src/App/App.csproj",
            "    <Nullable>enable</Nullable>\n",
            "    <Nullable>enable</Nullable>\n    <WarningsNotAsErrors>CS8602</WarningsNotAsErrors>\n",
        ),
    ),
    lowered(
        "warnaserror-false",
        change("src/App/App.csproj", "<TreatWarningsAsErrors>true<", "<TreatWarningsAsErrors>false<"),
    ),
    lowered(
        "warnaserror-conditional",
        change(
            "src/App/App.csproj",
            "<TreatWarningsAsErrors>true<",
            "<TreatWarningsAsErrors Condition=\"'$(CI)' == ''\">true<",
        ),
    ),
    lowered(
        "warnaserror-property",
        change("src/App/App.csproj", "<TreatWarningsAsErrors>true<", "<TreatWarningsAsErrors>$(Strict)<"),
    ),
    lowered(
        "warnaserror-split",
        change(
            "src/App/App.csproj",
            "    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>\n",
            "    <TreatWarningsAsErrors>\n      false\n    </TreatWarningsAsErrors>\n",
        ),
    ),
    lowered(
        "severity-error-dropped",
        change(
            ".globalconfig",
            "dotnet_diagnostic.CA1000.severity = error\n",
            "dotnet_diagnostic.CA1000.severity = warning\n",
        ),
    ),
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("frameworks") / "r", dict(FILES))


@pytest.mark.parametrize(("patch", "rule", "flag"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_trick_is_refused_by_rule_file_and_line_unless_configured(
    repo: Repo, patch: str, rule: str, flag: str
) -> None:
    before = repo.snapshot()
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert [r.rule for r in verdict.rejections] == [rule], verdict.rejections
    (rejection,) = verdict.rejections
    path = re.search(r"\+\+\+ b/(\S+)", patch)[1]  # type: ignore[index]
    assert rejection.path == path
    if rule != "gate.test_deleted":
        assert re.match(rf"`{re.escape(path)}` line \d+: ", rejection.message), rejection.message
    assert repo.snapshot() == before
    opted_in = review(patch, repo.path, PatchSettings(gates=GateSettings(**{flag: True})))
    assert opted_in.ok, opted_in.rejections


def test_the_line_named_is_where_the_trick_is(repo: Repo) -> None:
    patch = change(CS, FACT, "    [Fact(Skip = SkipReason)]\n    public void Adds()\n")
    (rejection,) = review(patch, repo.path, PatchSettings()).rejections
    assert rejection.message.startswith(f"`{CS}` line 9: ")
    assert "fixing the code it tests" in rejection.message


HONEST = [
    ("fix-code-py", change("shop/calc.py", "    return a - b\n", "    return a + b\n")),
    ("fix-code-cs", change("src/App/Calc.cs", "a - b", "a + b")),
    ("fix-expected", change(PT, "    assert result == -3\n", "    assert result == -3, result\n")),
    (
        "new-test",
        change(
            PT,
            "    assert result == -3\n",
            "    assert result == -3\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
        ),
    ),
    (
        "specific-raise",
        change(
            PT,
            "    assert add(1, 2) == 3\n",
            "    with pytest.raises(TypeError):\n        add(1, None)\n    assert add(1, 2) == 3\n",
        ),
    ),
    ("net-symbol", change(CS, FACT, "#if NET8_0_OR_GREATER\n" + FACT)),
    (
        "guard-return-in-helper",
        change("shop/calc.py", "def add(a, b):\n", "def add(a, b):\n    if a is None:\n        return b\n"),
    ),
    (
        "pytest-fixture-in-conftest",
        change("tests/conftest.py", "    return [1, 2, 3]\n", "    return [1, 2, 3, 4]\n"),
    ),
    (
        "warnaserror-kept",
        change(
            "src/App/App.csproj",
            "    <Nullable>enable</Nullable>\n",
            "    <Nullable>enable</Nullable>\n    <LangVersion>latest</LangVersion>\n",
        ),
    ),
    (
        "asyncio-pytestmark",
        change(
            PT, "from shop.calc import add\n", "from shop.calc import add\n\npytestmark = pytest.mark.anyio\n"
        ),
    ),
    ("ini-verbose", change("pytest.ini", "addopts = -q\n", "addopts = -q -ra\n")),
    ("tox-python-m", change("tox.ini", "commands = pytest tests\n", "commands = python -m pytest tests\n")),
    ("paging-skip-property", change("src/App/Paging.cs", "new Query()", "new Query { Skip = 10, Take = 5 }")),
    (
        "shell-or-true",
        change("build.sh", "echo building\n", "VERSION=$(git describe || true)\necho building\n"),
    ),
    (
        "docs-name-a-skip",
        change(
            "docs/testing.md", "Run pytest.\n", "Run pytest. Mark slow tests with `@pytest.mark.skipif`.\n"
        ),
    ),
    (
        "severity-raised",
        change(
            ".editorconfig",
            "indent_style = space\n",
            "indent_style = space\ndotnet_diagnostic.CA2007.severity = error\n",
        ),
    ),
]


@pytest.mark.parametrize("patch", [c[1] for c in HONEST], ids=[c[0] for c in HONEST])
def test_honest_changes_next_to_them_pass(repo: Repo, patch: str) -> None:
    verdict = review(patch, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections


def test_a_production_guard_may_still_catch_everything_it_logs(tmp_path: Path) -> None:
    """Catch-alls are judged in tests; production code keeps the empty-catch gate only."""
    repo = make_repo(
        tmp_path / "r", {"src/App/Loader.cs": "class L\n{\n    void M()\n    {\n        Run();\n    }\n}\n"}
    )
    patch = (
        "--- a/src/App/Loader.cs\n+++ b/src/App/Loader.cs\n@@ -5 +5 @@\n-        Run();\n"
        "+        try { Run(); } catch (Exception e) { Log(e); throw; }\n"
    )
    assert review(patch, repo.path, PatchSettings()).ok
