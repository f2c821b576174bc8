"""Fake-fix gates: each is rejected by default, accepted when the config opts in, and an honest
fix next to it passes."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from ci_agent.config import GateSettings, PatchSettings
from ci_agent.patch import apply_patch
from ci_agent.patch.gates import is_test_path, run_gates
from ci_agent.patch.parse import parse_patch
from tests.patch.conftest import APP_CSPROJ, Repo, make_repo

CS_TEST = """using Xunit;

public class CalcTests
{
    [Fact]
    public void Adds()
    {
        Assert.Equal(3, Calc.Add(1, 2));
        Assert.NotNull(Calc.Name);
    }

    [Fact]
    public void Subtracts()
    {
        Assert.Equal(1, Calc.Sub(2, 1));
    }
}
"""
PY_TEST = "import pytest\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n"
CODE = """public static class Loader
{
    public static string Load(string path)
    {
        return File.ReadAllText(path);
    }
}
"""
PY_CODE = "def load(path):\n    return open(path).read()\n"
FILES: dict[str, str | bytes] = {
    "tests/App.Tests/CalcTests.cs": CS_TEST,
    "tests/test_calc.py": PY_TEST,
    "src/App/App.csproj": APP_CSPROJ,
    "src/App/Loader.cs": CODE,
    "app/loader.py": PY_CODE,
    ".editorconfig": "[*.cs]\nindent_style = space\n",
}


def hunk(path: str, old: str, new: str, start: int = 1) -> str:
    o = [f"-{line}" for line in old.split("\n")] if old else []
    n = [f"+{line}" for line in new.split("\n")] if new else []
    body = "\n".join(o + n)
    return f"--- a/{path}\n+++ b/{path}\n@@ -{start},{len(o)} +{start},{len(n)} @@\n{body}\n"


T = "tests/App.Tests/CalcTests.cs"
GATE_CASES: list[tuple[str, str, str, str]] = [
    ("xunit-skip", hunk(T, "    [Fact]\n    public void Adds()", '    [Fact(Skip = "flaky")]\n'
                          "    public void Adds()", 5), "gate.test_skip", "allow_test_skips"),
    ("theory-skip", hunk(T, "    [Fact]", '    [Theory(Skip="later")]', 5), "gate.test_skip",
     "allow_test_skips"),
    ("nunit-ignore", hunk(T, "    [Fact]", '    [Fact, Ignore("broken")]', 5), "gate.test_skip",
     "allow_test_skips"),
    ("mstest-ignore", hunk(T, "    [Fact]", "    [Fact]\n    [Ignore]", 5), "gate.test_skip",
     "allow_test_skips"),
    ("nunit-explicit", hunk(T, "    [Fact]", "    [Fact]\n    [Explicit]", 5), "gate.test_skip",
     "allow_test_skips"),
    ("pytest-mark-skip", hunk("tests/test_calc.py", "def test_adds():",
                              '@pytest.mark.skip(reason="ci")\ndef test_adds():', 4), "gate.test_skip",
     "allow_test_skips"),
    ("pytest-skip-call", hunk("tests/test_calc.py", "    assert add(1, 2) == 3",
                              '    pytest.skip("later")\n    assert add(1, 2) == 3', 5), "gate.test_skip",
     "allow_test_skips"),
    ("delete-test-file", "--- a/tests/test_calc.py\n+++ /dev/null\n@@ -1,5 +0,0 @@\n"
     + "".join(f"-{line}\n" for line in PY_TEST.rstrip("\n").split("\n")), "gate.test_deleted",
     "allow_test_deletion"),
    ("remove-test-method", hunk(T, "\n    [Fact]\n    public void Subtracts()\n    {\n"
                                "        Assert.Equal(1, Calc.Sub(2, 1));\n    }", "", 11),
     "gate.test_deleted", "allow_test_deletion"),
    ("remove-assertion", hunk(T, "        Assert.NotNull(Calc.Name);", "", 9), "gate.assertion_weakened",
     "allow_assertion_changes"),
    ("assert-true-true", hunk(T, "        Assert.Equal(3, Calc.Add(1, 2));", "        Assert.True(true);", 8),
     "gate.assertion_weakened", "allow_assertion_changes"),
    ("assert-true-py", hunk("tests/test_calc.py", "    assert add(1, 2) == 3", "    assert True", 5),
     "gate.assertion_weakened", "allow_assertion_changes"),
    ("pragma", hunk("src/App/Loader.cs", "public static class Loader",
                    "#pragma warning disable CS8602\npublic static class Loader"), "gate.warning_suppressed",
     "allow_warning_suppression"),
    ("nowarn", hunk("src/App/App.csproj", "    <Nullable>enable</Nullable>",
                    "    <Nullable>enable</Nullable>\n    <NoWarn>$(NoWarn);CS8618</NoWarn>", 4),
     "gate.warning_suppressed", "allow_warning_suppression"),
    ("editorconfig-severity", "--- a/.editorconfig\n+++ b/.editorconfig\n@@ -1,2 +1,3 @@\n [*.cs]\n"
     " indent_style = space\n+dotnet_diagnostic.CA2007.severity = none\n", "gate.warning_suppressed",
     "allow_warning_suppression"),
    ("warnaserror-off", hunk("src/App/App.csproj", "    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>",
                             "    <TreatWarningsAsErrors>false</TreatWarningsAsErrors>", 5),
     "gate.strictness_lowered", "allow_strictness_changes"),
    ("warnaserror-removed", hunk("src/App/App.csproj",
                                 "    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>", "", 5),
     "gate.strictness_lowered", "allow_strictness_changes"),
    ("nullable-off", hunk("src/App/App.csproj", "    <Nullable>enable</Nullable>",
                          "    <Nullable>disable</Nullable>", 4), "gate.strictness_lowered",
     "allow_strictness_changes"),
    ("empty-catch", hunk("src/App/Loader.cs", "        return File.ReadAllText(path);",
                         "        try { return File.ReadAllText(path); }\n        catch { }\n"
                         "        return \"\";", 5), "gate.empty_catch", "allow_empty_catch"),
    ("catch-exception-multiline", hunk("src/App/Loader.cs", "        return File.ReadAllText(path);",
                                       "        try\n        {\n            return File.ReadAllText(path);\n"
                                       "        }\n        catch (Exception ex)\n        {\n"
                                       "            // ignore\n        }\n        return \"\";", 5),
     "gate.empty_catch", "allow_empty_catch"),
    ("except-pass", hunk("app/loader.py", "    return open(path).read()",
                         "    try:\n        return open(path).read()\n    except:\n        pass", 2),
     "gate.empty_catch", "allow_empty_catch"),
    ("except-exception-pass", hunk("app/loader.py", "    return open(path).read()",
                                   "    try:\n        return open(path).read()\n"
                                   "    except Exception:  # whatever\n        pass", 2),
     "gate.empty_catch", "allow_empty_catch"),
]


@pytest.fixture(scope="module")
def gate_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("gates") / "r", FILES)


@pytest.mark.parametrize(("patch", "rule", "opt_in"), [c[1:] for c in GATE_CASES],
                         ids=[c[0] for c in GATE_CASES])
def test_gate_rejects_by_default_and_opt_in_lets_it_through(
    gate_repo: Repo, patch: str, rule: str, opt_in: str
) -> None:
    before = gate_repo.snapshot()
    allow_deletions = rule == "gate.test_deleted" and "/dev/null" in patch
    verdict = apply_patch(patch, gate_repo.path, PatchSettings(allow_deletions=allow_deletions))
    assert [r.rule for r in verdict.rejections] == [rule]
    assert gate_repo.snapshot() == before
    settings = PatchSettings(allow_deletions=allow_deletions, gates=GateSettings(**{opt_in: True}))
    try:
        opted_in = apply_patch(patch, gate_repo.path, settings)
        assert opted_in.ok, opted_in.rejections
    finally:
        gate_repo.git("reset", "-q", "--hard")


def test_every_gate_flag_has_a_case() -> None:
    assert {f.name for f in fields(GateSettings)} == {c[3] for c in GATE_CASES}


HONEST: list[tuple[str, str]] = [
    ("fix-code", hunk("src/App/Loader.cs", "        return File.ReadAllText(path);",
                      "        return File.ReadAllText(path, Encoding.UTF8);", 5)),
    ("fix-expected-value", hunk(T, "        Assert.Equal(3, Calc.Add(1, 2));",
                                "        Assert.Equal(4, Calc.Add(2, 2));", 8)),
    ("add-test", hunk(T, "}", "\n    [Fact]\n    public void Zero() => Assert.Equal(0, Calc.Add(0, 0));\n}",
                      17)),
    ("specific-catch-handled", hunk("src/App/Loader.cs", "        return File.ReadAllText(path);",
                                    "        try { return File.ReadAllText(path); }\n"
                                    "        catch (FileNotFoundException) { return \"\"; }", 5)),
    ("jsonignore-is-not-ignore", hunk("src/App/Loader.cs", "public static class Loader",
                                      "[JsonIgnore]\npublic static class Loader")),
]


@pytest.mark.parametrize("patch", [c[1] for c in HONEST], ids=[c[0] for c in HONEST])
def test_honest_fixes_pass_the_gates(patch: str) -> None:
    assert run_gates(parse_patch(patch), GateSettings()) == []


@pytest.mark.parametrize(
    ("path", "expected"),
    [("tests/test_x.py", True), ("src/App.Tests/CalcTests.cs", True), ("test/foo.go", True),
     ("pkg/x_test.go", True), ("web/a.spec.ts", True), ("src/App/Calc.cs", False),
     ("src/attestation/Sign.cs", False), ("docs/testing.md", False)],
)
def test_test_path_classification(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


def test_gate_message_is_written_for_the_model(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    verdict = apply_patch(GATE_CASES[0][1], repo.path, PatchSettings())
    message = verdict.rejections[0].message
    assert "tests/App.Tests/CalcTests.cs" in message and "fixing the code" in message
